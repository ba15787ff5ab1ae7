// Package guard holds what makes an HTTP server of toolenv safe to expose
// on a shared host or behind a load balancer:
//
//   - Policy.Handler, middleware that checks every request, whatever its
//     route: the Host header (loopback names, addresses the client really
//     connected to, and the names an operator allows — so DNS rebinding
//     cannot reach the server), the Origin and Sec-Fetch-Site headers (a
//     page in another origin cannot drive it), bearer tokens (when
//     configured), and a JSON content type (or a bearer token) on every
//     state-changing request, so that an HTML form or a text/plain fetch
//     from anywhere cannot send one;
//   - one-time login links and the cookie they set, for pages a person
//     opens in a browser (the review page), as notebook servers do;
//   - Limits and Serve: header and body read deadlines, idle timeouts and
//     a connection cap for every listener, so that slow clients cannot
//     hold connections or goroutines.
//
// The checks cost a few string comparisons per request (and a SHA-256
// of the presented token when tokens are configured); see
// BenchmarkHandler.
package guard
