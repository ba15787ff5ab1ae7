package openenv

import (
	"net/http"
	"strings"

	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/mcpepisode"
	"github.com/toolenv/toolenv/server/guard"
)

// Prefix is where toolenv serve mounts the episodes: OpenEnv's routes
// below it (an OpenEnv client's base_url is http://host:port/openenv) and
// the MCP episode endpoint at Prefix + "/mcp".
const Prefix = "/openenv"

// Mount returns h with eps served under Prefix, behind g (the
// environment's guard: Host, Origin, tokens). The episodes sit beside
// toolenv's other front-ends on the same listener, so that a rollout
// worker reaches the tools, their documentation and the episodes at one
// address and with one token.
//
// Nothing answers before the guard: a request is sent to the episodes or
// to h by its path as sent, never through a router that would redirect a
// path not in its clean form ("//collections", "/openenv/../mcp") ahead
// of the Host and token checks; under Prefix, such a path gets the
// guard's checks and then guard.CleanPaths's 400, as h answers it.
func Mount(h http.Handler, g *guard.Guard, eps *episode.Env, opts Options) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/mcp", mcpepisode.NewHandler(eps, mcpepisode.Options{Version: opts.Version, MaxBodyBytes: opts.MaxBodyBytes, Logger: opts.Logger}))
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, NewHandler(eps, opts)))
	episodes := g.Handler(guard.CleanPaths(mux))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if underPrefix(r.URL.Path) {
			episodes.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// underPrefix reports whether the path p, as sent, is Prefix or below it.
func underPrefix(p string) bool {
	return strings.HasPrefix(p, Prefix) && (len(p) == len(Prefix) || p[len(Prefix)] == '/')
}
