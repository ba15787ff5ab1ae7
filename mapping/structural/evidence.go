package structural

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// ExampleSource gives recorded calls of a tool. store.Store implements
// it with its cache entries.
type ExampleSource interface {
	Examples(ctx context.Context, tool string, limit int) ([]*store.Entry, error)
}

var _ ExampleSource = (store.Store)(nil)

// Gather reads up to perTool recorded calls of each tool from src as
// evidence of the values its fields take. Entries whose arguments do not
// parse are skipped.
func Gather(ctx context.Context, src ExampleSource, tools []*toolenv.Tool, perTool int) (map[string]*Evidence, error) {
	if perTool <= 0 {
		perTool = 5
	}
	out := map[string]*Evidence{}
	for _, t := range tools {
		entries, err := src.Examples(ctx, t.ID, perTool)
		if err != nil {
			return nil, fmt.Errorf("gather evidence of %s: %w", t.ID, err)
		}
		if len(entries) == 0 {
			continue
		}
		ev := &Evidence{}
		for _, e := range entries {
			var args map[string]any
			if toolenv.DecodeJSON([]byte(e.Args), &args) == nil {
				ev.Args = append(ev.Args, args)
			}
			if len(e.Body) > 0 {
				ev.Responses = append(ev.Responses, e.Body)
			}
		}
		out[t.ID] = ev
	}
	return out, nil
}
