package openenv

import (
	"net/http"

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
func Mount(h http.Handler, g *guard.Guard, eps *episode.Env, opts Options) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/mcp", g.Handler(mcpepisode.NewHandler(eps, mcpepisode.Options{Version: opts.Version, MaxBodyBytes: opts.MaxBodyBytes, Logger: opts.Logger})))
	mux.Handle(Prefix+"/", g.Handler(http.StripPrefix(Prefix, NewHandler(eps, opts))))
	mux.Handle("/", h)
	return mux
}
