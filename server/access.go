package server

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/toolenv/toolenv/server/guard"
)

// mcpAuth binds MCP sessions to the principal the guard authenticated
// (the SDK then refuses a session's requests from any other principal
// with 403). Without tokens it returns h.
func mcpAuth(g *guard.Guard, h http.Handler) http.Handler {
	if !g.Authenticates() {
		return h
	}
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := guard.Principal(r.Context())
		if p == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}
