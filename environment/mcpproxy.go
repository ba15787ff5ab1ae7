package environment

import (
	"context"
	"slices"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/store"
)

// mcpRecordings keeps what MCP servers answered besides tool calls
// (resources read, prompts got, completions, their lists and
// capabilities) in the store, beside the recorded calls and tool lists:
// under the key as the tool, with no arguments.
type mcpRecordings struct{ st store.Store }

func (r mcpRecordings) Record(ctx context.Context, key string, body []byte) error {
	_, err := r.st.PutMany(ctx, []*store.Entry{{Tool: key, Args: "{}", Status: toolenv.StatusOK, Body: body, Origin: string(toolenv.SourceUpstream)}}, true)
	return err
}

func (r mcpRecordings) Recorded(ctx context.Context, key string) ([]byte, bool, error) {
	e, ok, err := r.st.Get(ctx, key, "{}")
	if err != nil || !ok {
		return nil, false, err
	}
	return e.Body, true, nil
}

// mcpProxySources are the MCP servers whose resources, prompts and
// completions the MCP front-end offers, in name order.
func (env *Environment) mcpProxySources() []server.MCPSource {
	clients := env.MCPClients()
	names := make([]string, 0, len(clients))
	for n := range clients {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]server.MCPSource, len(names))
	for i, n := range names {
		out[i] = clients[n]
	}
	return out
}

var _ mcpsource.Recordings = mcpRecordings{}
