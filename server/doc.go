// Package server holds toolenv's HTTP front-ends. Each turns its wire
// format into a toolenv.Call, invokes the one pipeline, and writes the
// Result back in the same wire format:
//
//	POST /virtual                          StableToolBench's virtual server format
//	GET|POST /tools/{collection}/{name}    one REST route per tool (JSON body or query string)
//	<binding method and path>              tools that declare an HTTP binding, at their own route
//	GET /collections                       the loaded collections
//	GET /collections/{name}/tools          tools as toolenv, OpenAI function-calling or MCP JSON
//	GET /collections/{name}/openapi.json   OpenAPI 3.1 per collection (also /openapi.json)
//	POST /sessions, DELETE /sessions/{id}  server-issued task sessions (SLOT/SEL)
//	/mcp                                   MCP over streamable HTTP
//	GET /metrics, /healthz                 Prometheus metrics, liveness
//
// Every route is behind a guard.Guard (Host, Origin, bearer tokens,
// content type); task-session ids are issued by the server and checked by
// a SessionIssuer. Wire-format conversions are plain functions; nothing
// below a front-end knows about HTTP.
package server
