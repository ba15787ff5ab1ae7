package agent_test

import (
	"context"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
)

// TestLocalFunctionsAreFunctionsJSON: the function definitions an
// in-process session lists from its environment's cache are exactly
// FunctionsJSON's, for every tool subset and order, over many sessions.
func TestLocalFunctionsAreFunctionsJSON(t *testing.T) {
	env, local := demoEnv(t)
	ctx := context.Background()
	c := env.Collections()[0]
	all := c.Tools
	type lister interface {
		FunctionsJSON([]*toolenv.Tool) string
	}
	for i, tools := range [][]*toolenv.Tool{all, all[1:3], reversed(all), nil, all} {
		s, err := local.Start(ctx, &toolenv.Task{ID: "t", Collection: c.Name})
		if err != nil {
			t.Fatal(err)
		}
		l, ok := s.(lister)
		if !ok {
			t.Fatal("an in-process session does not list its functions from the cache")
		}
		if got, want := l.FunctionsJSON(tools), agent.FunctionsJSON(tools); got != want {
			t.Errorf("case %d: cached %q, want %q", i, got, want)
		}
		s.Close(ctx)
	}
}

func reversed(ts []*toolenv.Tool) []*toolenv.Tool {
	out := make([]*toolenv.Tool, len(ts))
	for i, t := range ts {
		out[len(ts)-1-i] = t
	}
	return out
}
