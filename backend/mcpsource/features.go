package mcpsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Recordings keep what a server answered besides tool calls (its lists
// of resources, templates and prompts, resources read, prompts got,
// completions), by key, so that they are answered when the server is
// gone. (environment keeps them in the store, beside the recorded calls.)
type Recordings interface {
	Record(ctx context.Context, key string, body []byte) error
	Recorded(ctx context.Context, key string) (body []byte, ok bool, err error)
}

// Capabilities returns what the server declared (from its last
// connection, or as recorded), nil when it never connected.
func (c *Client) Capabilities(ctx context.Context) *mcp.ServerCapabilities {
	if info := c.Info(); info != nil && info.Capabilities != nil {
		return info.Capabilities
	}
	var caps mcp.ServerCapabilities
	if ok, _ := c.recorded(ctx, "capabilities", &caps); ok {
		return &caps
	}
	return nil
}

// Resources lists the server's resources (every page), recorded; with
// the server down, the recorded list (replayed true).
func (c *Client) Resources(ctx context.Context) (res []*mcp.Resource, replayed bool, err error) {
	return listed(ctx, c, "resources/list", func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Resource, error) {
		var out []*mcp.Resource
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	})
}

// ResourceTemplates lists the server's resource templates, as Resources.
func (c *Client) ResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, bool, error) {
	return listed(ctx, c, "resources/templates/list", func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.ResourceTemplate, error) {
		var out []*mcp.ResourceTemplate
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	})
}

// Prompts lists the server's prompts, as Resources.
func (c *Client) Prompts(ctx context.Context) ([]*mcp.Prompt, bool, error) {
	return listed(ctx, c, "prompts/list", func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
		var out []*mcp.Prompt
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	})
}

// ReadResource reads a resource; the answer is recorded (unless it asks
// the client for input), and with the server down the recorded answer is
// given (replayed true).
func (c *Client) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, bool, error) {
	key := "resources/read " + p.URI
	return answered(ctx, c, key, p.InputResponses != nil || p.RequestState != "", func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, p)
	}, (*mcp.ReadResourceResult).NeedsInput)
}

// GetPrompt gets a prompt, as ReadResource.
func (c *Client) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, bool, error) {
	args, _ := json.Marshal(p.Arguments) // a map: keys sorted
	key := "prompts/get " + p.Name + " " + string(args)
	return answered(ctx, c, key, p.InputResponses != nil || p.RequestState != "", func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, p)
	}, (*mcp.GetPromptResult).NeedsInput)
}

// Complete asks the server to complete an argument, as ReadResource.
func (c *Client) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, bool, error) {
	key, _ := json.Marshal(struct {
		Ref     *mcp.CompleteReference     `json:"ref"`
		Arg     mcp.CompleteParamsArgument `json:"argument"`
		Context *mcp.CompleteContext       `json:"context,omitempty"`
	}{p.Ref, p.Argument, p.Context})
	return answered(ctx, c, "completion/complete "+string(key), false, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
		return cs.Complete(ctx, p)
	}, func(*mcp.CompleteResult) bool { return false })
}

// Subscribe asks the server to tell of changes to a resource
// (OnResourceUpdated hears them); Unsubscribe stops it.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	cs, proc, err := c.session()
	if err != nil {
		return err
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return c.callError(ctx, proc, err)
	}
	return nil
}

// Unsubscribe: see Subscribe.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	cs, proc, err := c.session()
	if err != nil {
		return err
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		return c.callError(ctx, proc, err)
	}
	return nil
}

// listed runs a list request: live and recorded, or recorded when the
// server is down.
func listed[T any](ctx context.Context, c *Client, what string, live func(context.Context, *mcp.ClientSession) ([]T, error)) ([]T, bool, error) {
	cs, proc, err := c.session()
	if err == nil {
		var out []T
		if out, err = live(ctx, cs); err == nil {
			if out == nil {
				out = []T{}
			}
			c.record(ctx, what, out)
			return out, false, nil
		}
		err = c.callError(ctx, proc, err)
		if !errors.Is(err, ErrDown) {
			return nil, false, err
		}
	}
	var out []T
	if ok, rerr := c.recorded(ctx, what, &out); ok && rerr == nil {
		return out, true, nil
	}
	return nil, false, err
}

// answered runs a request whose answer is recorded: live (recorded
// unless it asks for input or answers input), or recorded when the
// server is down.
func answered[R any](ctx context.Context, c *Client, key string, retry bool, live func(context.Context, *mcp.ClientSession) (R, error), needsInput func(R) bool) (R, bool, error) {
	var zero R
	cs, proc, err := c.session()
	if err == nil {
		var res R
		if res, err = live(ctx, cs); err == nil {
			if !retry && !needsInput(res) {
				c.record(ctx, key, res)
			}
			return res, false, nil
		}
		err = c.callError(ctx, proc, err)
		if !errors.Is(err, ErrDown) {
			return zero, false, err
		}
	}
	var res R
	if ok, rerr := c.recorded(ctx, key, &res); ok && rerr == nil {
		return res, true, nil
	}
	return zero, false, err
}

// record keeps v under the server's key, when recordings are kept.
func (c *Client) record(ctx context.Context, key string, v any) {
	if c.opts.Recordings == nil {
		return
	}
	body, err := json.Marshal(v)
	if err == nil {
		err = c.opts.Recordings.Record(ctx, c.recordKey(key), body)
	}
	if err != nil {
		c.log.Warn("the MCP server's answer could not be recorded", "key", key, "err", err)
	}
}

// recorded reads the recording of key into v.
func (c *Client) recorded(ctx context.Context, key string, v any) (bool, error) {
	if c.opts.Recordings == nil {
		return false, nil
	}
	body, ok, err := c.opts.Recordings.Recorded(ctx, c.recordKey(key))
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("the recording of %s cannot be read: %w", key, err)
	}
	return true, nil
}

// recordKey names a recording: the server, then what it answered.
func (c *Client) recordKey(key string) string {
	return c.srv.Name + "/" + strings.TrimSpace(key)
}
