package faults_test

import (
	"context"
	"fmt"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/faults"
)

// An injector rate-limits a tool; on a manual clock the bucket refills
// when time moves on.
func ExampleInjector() {
	cfg, err := faults.ParseConfig([]byte(`{"rules":[{"tool":"search","rate_limit":{"per_second":1,"burst":1},"latency":{"fixed":"50ms"}}]}`), "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	clock := faults.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	in, _ := faults.New(cfg, faults.Options{Clock: clock})
	api := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK}
	})
	h := in.Middleware()(api)
	call := &toolenv.Call{Tool: &toolenv.Tool{ID: "c/search", Collection: "c", Name: "search"}}
	for i := 0; i < 3; i++ {
		res := h.Invoke(context.Background(), call)
		fmt.Println(res.Status, res.Faults, res.RetryAfter)
		if i == 1 {
			clock.Advance(time.Second)
		}
	}
	// Output:
	// ok [latency:50ms] 0s
	// rate_limited [rate_limited] 950ms
	// ok [latency:50ms] 0s
}
