// Package bench measures toolenv's /virtual front-end: cache hits served
// by "toolenv serve" in a child process, driven by a closed-loop load
// generator, against a bare net/http handler returning the same bytes,
// alternating the two over rounds, with each server's CPU time per
// request read from /proc. It is what toolenv bench runs.
package bench
