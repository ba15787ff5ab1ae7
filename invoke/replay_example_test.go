package invoke_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// counter counts the calls it observes, preparing once for replays.
type counter struct{ observed, replayed int }

func (c *counter) Observe(*toolenv.Call, *toolenv.Result, time.Duration) { c.observed++ }

func (c *counter) ObserveReplays(*toolenv.Call, *toolenv.Result) func(time.Duration) {
	return func(time.Duration) { c.replayed++ }
}

// A front-end keeps the hit InvokeCachedHit found with the answer it made
// of it, and replays it (ReplayHit) while nothing is written to the cache;
// a ReplayObserver counts each replay with what it prepared once.
func ExampleReplayObserver() {
	ctx := context.Background()
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	coll := toolenv.NewCollection("tb", "toolbench", []*toolenv.Tool{{Name: "search", Input: in}})
	coll.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}
	reg := invoke.NewRegistry()
	backend := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"live"`), Source: toolenv.SourceSimulator}
	})
	if err := reg.Add(coll, backend); err != nil {
		panic(err)
	}
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	const exact = "{'q': 'x'}" // the client's own key for the call
	if _, err := st.Put(ctx, &store.Entry{Tool: "tb/search", Args: `{"q":"x"}`, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(`"recorded"`)}); err != nil {
		panic(err)
	}
	obs := &counter{}
	p := invoke.New(reg, invoke.Options{Cache: st, Observer: obs})
	call := func() *toolenv.Call {
		c, _ := reg.NewCall("tb", "search", map[string]any{"q": "x"})
		c.Meta = map[string]string{invoke.CallMetaExactKey: exact}
		return c
	}
	p.Invoke(ctx, call()) // reads the entry into memory
	ci := p.(invoke.CachedInvoker)
	res, hit, _ := ci.InvokeCachedHit(ctx, call(), exact, nil)
	fmt.Println("answer:", string(res.Body))
	for range 3 {
		ci.ReplayHit(ctx, call(), exact, hit)
	}
	fmt.Println("observed:", obs.observed, "replayed:", obs.replayed)
	st.Put(ctx, &store.Entry{Tool: "tb/search", Args: `{"q":"y"}`, Status: toolenv.StatusOK, Body: json.RawMessage(`"other"`)})
	fmt.Println("replayed after a write:", ci.ReplayHit(ctx, call(), exact, hit))
	// Output:
	// answer: "recorded"
	// observed: 2 replayed: 3
	// replayed after a write: false
}
