package faults

import (
	"context"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzParseConfig checks that any input either fails with an error or
// gives a configuration an injector runs without panicking.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"seed":1,"rules":[{"tool":"*","latency":{"fixed":"1ms"}}]}`,
		`{"rules":[{"rate_limit":{"per_second":0.5}},{"flaky":{"period":"1s","down":"1s"}}]}`,
		`{"rules":[{"errors":{"rate":1,"status":599},"timeout":{"rate":1,"after":"1ns"}}]}`,
		`{"rules":[{"latency":{"distribution":"lognormal","median":"1ms","sigma":3}}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseConfig([]byte(s), "fuzz")
		if err != nil {
			return
		}
		in, err := New(cfg, Options{Clock: NewManualClock(time.Unix(0, 0))})
		if err != nil {
			t.Fatalf("checked config refused: %v", err)
		}
		tool := &toolenv.Tool{ID: "c/t", Collection: "c", Name: "t", Input: toolenv.ObjectSchema()}
		h := in.Middleware()(toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
			return &toolenv.Result{Status: toolenv.StatusOK}
		}))
		for i := 0; i < 3; i++ {
			if res := h.Invoke(context.Background(), &toolenv.Call{Tool: tool}); res == nil {
				t.Fatal("nil result")
			}
		}
	})
}
