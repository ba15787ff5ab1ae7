package episodetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/openenv"
)

// PlayOpenEnv plays task's oracle over OpenEnv's WebSocket protocol with
// c and returns the final answer's reward.
func PlayOpenEnv(ctx context.Context, c *openenv.Client, coll *toolenv.Collection, task *toolenv.Task, reset map[string]any) (float64, error) {
	kw := map[string]any{"collection": coll.Name, "task_id": task.ID}
	for k, v := range reset {
		kw[k] = v
	}
	r, err := c.Reset(ctx, kw)
	if err != nil {
		return 0, fmt.Errorf("%s: reset: %w", task.ID, err)
	}
	if r.Done || r.Observation["query"] == "" {
		return 0, fmt.Errorf("%s: the first observation: %v", task.ID, r.Observation)
	}
	o := NewOracle(coll, task)
	for {
		g, ok, err := o.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		r, err = c.Step(ctx, map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": g.Label})
		if err != nil {
			return 0, fmt.Errorf("%s: step %s: %w", task.ID, g.Name, err)
		}
		if e := r.Observation["error"]; e != nil {
			return 0, fmt.Errorf("%s: %s failed: %v", task.ID, g.Name, e)
		}
		body, _ := json.Marshal(r.Observation["result"].(map[string]any)["data"])
		o.Observe(g.Label, body)
	}
	r, err = c.Step(ctx, map[string]any{"type": "final_answer"})
	if err != nil {
		return 0, fmt.Errorf("%s: final answer: %w", task.ID, err)
	}
	if !r.Done || r.Reward == nil {
		return 0, fmt.Errorf("%s: the final answer did not end the episode: %v", task.ID, r.Metadata)
	}
	if *r.Reward != 1 {
		return *r.Reward, fmt.Errorf("%s: reward %g: %v", task.ID, *r.Reward, r.Observation["outcome"])
	}
	return *r.Reward, nil
}

// Bearer adds a bearer token to every request.
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Token != "" {
		r.Header.Set("Authorization", "Bearer "+b.Token)
	}
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// PlayMCP plays task's oracle as an MCP client of the episode endpoint
// (an MCP session is the episode, so it asks for protocol 2025-11-25: at
// 2026-07-28 there are no sessions and start_episode makes the episode)
// and returns submit_answer's reward.
func PlayMCP(ctx context.Context, endpoint, token string, coll *toolenv.Collection, task *toolenv.Task) (float64, error) {
	q := url.Values{"collection": {coll.Name}, "task_id": {task.ID}}
	c := mcp.NewClient(&mcp.Implementation{Name: "oracle", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint + "?" + q.Encode(), HTTPClient: &http.Client{Transport: Bearer{Token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return 0, fmt.Errorf("%s: connect: %w", task.ID, err)
	}
	defer s.Close()
	if !strings.Contains(s.InitializeResult().Instructions, task.Query) {
		return 0, fmt.Errorf("%s: the instructions do not hold the query", task.ID)
	}
	o := NewOracle(coll, task)
	for {
		g, ok, err := o.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		args := g.Args
		if la := coll.Tool(g.Name).LabelArg(); g.Label != "" && la != "" {
			args = map[string]any{la: g.Label}
			for k, v := range g.Args {
				args[k] = v
			}
		}
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: g.Name, Arguments: args})
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", task.ID, g.Name, err)
		}
		if r.IsError {
			return 0, fmt.Errorf("%s: %s failed: %s", task.ID, g.Name, Text(r))
		}
		o.Observe(g.Label, json.RawMessage(Text(r)))
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: map[string]any{}})
	if err != nil || r.IsError {
		return 0, fmt.Errorf("%s: submit_answer: %v %s", task.ID, err, Text(r))
	}
	b, _ := json.Marshal(r.StructuredContent)
	var out struct {
		Reward *float64 `json:"reward"`
		Done   bool     `json:"done"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Reward == nil || !out.Done {
		return 0, fmt.Errorf("%s: submit_answer's structured content: %s", task.ID, b)
	}
	if *out.Reward != 1 {
		return *out.Reward, fmt.Errorf("%s: reward %g: %s", task.ID, *out.Reward, b)
	}
	return *out.Reward, nil
}

// Text joins a tool result's text content.
func Text(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
