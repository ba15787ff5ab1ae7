package invoke

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// callObserver keeps every call and result it is told about.
type callObserver struct {
	calls   []*toolenv.Call
	results []*toolenv.Result
}

func (o *callObserver) Observe(call *toolenv.Call, res *toolenv.Result, _ time.Duration) {
	o.calls, o.results = append(o.calls, call), append(o.results, res)
}

// TestInvokeCachedAnswersAsInvoke: the pipeline's in-memory exact hits
// (CachedInvoker) give the result Invoke gives, observed once the same
// way; every call it cannot answer so (no exact key, a key memory does
// not hold yet, NoCache, a strict or non-caching collection) it leaves
// alone, and a pipeline with middleware before validation (which may
// rewrite a call) does not offer it at all.
func TestInvokeCachedAnswersAsInvoke(t *testing.T) {
	ctx := context.Background()
	const exact = "{'symbol': 'AAPL'}"
	pipe := func(t *testing.T, policy toolenv.Policy, opts Options) (toolenv.Handler, *Registry, *callObserver) {
		t.Helper()
		c := toolenv.NewCollection("tb", "toolbench", []*toolenv.Tool{quoteTool()})
		c.Policy = policy
		reg := NewRegistry()
		b := &countingBackend{source: toolenv.SourceSimulator}
		if err := reg.Add(c, b); err != nil {
			t.Fatal(err)
		}
		st := openStore(t, ":memory:")
		for _, e := range []*store.Entry{
			{Tool: "tb/get_quote", Args: `{"symbol":"AAPL"}`, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(`"recorded"`), Origin: "import"},
			{Tool: "tb/get_quote", Args: `{"symbol":"ERR"}`, Exact: "{'symbol': 'ERR'}", Status: toolenv.StatusUpstreamError, Error: "quota", Body: json.RawMessage(`""`), Origin: "upstream"},
		} {
			if _, err := st.Put(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		obs := &callObserver{}
		opts.Cache, opts.Observer = st, obs
		opts.Timeout = time.Minute
		return New(reg, opts), reg, obs
	}
	withKey := func(c *toolenv.Call, k string) *toolenv.Call {
		c.Meta = map[string]string{CallMetaExactKey: k}
		return c
	}
	lenient := toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}

	p, reg, obs := pipe(t, lenient, Options{})
	ci, ok := p.(CachedInvoker)
	if !ok {
		t.Fatal("the standard pipeline over a store does not serve in-memory hits")
	}
	for _, tc := range []struct{ args, exact string }{{`{"symbol":"AAPL"}`, exact}, {`{"symbol":"ERR"}`, "{'symbol': 'ERR'}"}} {
		if _, ok := ci.InvokeCached(ctx, withKey(quoteCall(t, reg, tc.args), tc.exact)); ok {
			t.Fatalf("%s: a hit before the entry was ever read (memory cannot hold it yet)", tc.exact)
		}
		want := p.Invoke(ctx, withKey(quoteCall(t, reg, tc.args), tc.exact)) // reads the store, fills memory
		got, ok := ci.InvokeCached(ctx, withKey(quoteCall(t, reg, tc.args), tc.exact))
		if !ok {
			t.Fatalf("%s: no in-memory hit after Invoke read the entry", tc.exact)
		}
		if got.Latency <= 0 {
			t.Fatalf("%s: latency %v not set", tc.exact, got.Latency)
		}
		got.Latency, want.Latency = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: InvokeCached = %+v, Invoke = %+v", tc.exact, got, want)
		}
		if n := len(obs.results); n < 2 || obs.results[n-1] != got || !reflect.DeepEqual(obs.calls[n-1].Meta, obs.calls[n-2].Meta) {
			t.Fatalf("%s: the hit was not observed as Invoke's was: %d results", tc.exact, n)
		}
	}
	before := len(obs.results)
	for name, c := range map[string]*toolenv.Call{
		"no exact key":      quoteCall(t, reg, `{"symbol":"AAPL"}`),
		"another exact key": withKey(quoteCall(t, reg, `{"symbol":"AAPL"}`), "{'symbol':'AAPL'}"),
		"no cache asked": func() *toolenv.Call {
			c := withKey(quoteCall(t, reg, `{"symbol":"AAPL"}`), exact)
			c.Options.NoCache = true
			return c
		}(),
		"no tool": withKey(&toolenv.Call{}, exact),
	} {
		if res, ok := ci.InvokeCached(ctx, c); ok || res != nil {
			t.Errorf("%s: answered %+v", name, res)
		}
	}
	if len(obs.results) != before {
		t.Fatalf("calls InvokeCached left alone were observed")
	}

	for name, policy := range map[string]toolenv.Policy{"strict": {Validation: toolenv.ValidationStrict, Cache: true}, "no cache": {Validation: toolenv.ValidationLenient}} {
		p, reg, _ := pipe(t, policy, Options{})
		p.Invoke(ctx, withKey(quoteCall(t, reg, `{"symbol":"AAPL"}`), exact))
		if res, ok := p.(CachedInvoker).InvokeCached(ctx, withKey(quoteCall(t, reg, `{"symbol":"AAPL"}`), exact)); ok {
			t.Errorf("%s collection: InvokeCached answered %+v", name, res)
		}
	}
	rewrite := func(next toolenv.Handler) toolenv.Handler { return next }
	if p, _, _ := pipe(t, lenient, Options{BeforeValidate: []toolenv.Middleware{rewrite}}); p != nil {
		if _, ok := p.(CachedInvoker); ok {
			t.Fatal("a pipeline with middleware before validation serves in-memory hits past it")
		}
	}
}

// TestInvokeCachedHitVoidedByWrites: an ExactHit is served again, for the
// call it was found for, until anything is written through the cache;
// then the entry is looked up again, and a replaced entry is never served
// from before.
func TestInvokeCachedHitVoidedByWrites(t *testing.T) {
	ctx := context.Background()
	const exact = "{'symbol': 'AAPL'}"
	reg, st := lenientQuoteCache(t)
	entry := func(body string) *store.Entry {
		return &store.Entry{Tool: "tb/get_quote", Args: `{"symbol":"AAPL"}`, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(body), Origin: "import"}
	}
	if _, err := st.Put(ctx, entry(`"first"`)); err != nil {
		t.Fatal(err)
	}
	obs := &callObserver{}
	p := New(reg, Options{Cache: st, Observer: obs})
	ci := p.(CachedInvoker)
	call := func() *toolenv.Call {
		c := quoteCall(t, reg, `{"symbol":"AAPL"}`)
		c.Meta = map[string]string{CallMetaExactKey: exact}
		return c
	}
	p.Invoke(ctx, call()) // reads the entry into memory
	res, hit, ok := ci.InvokeCachedHit(ctx, call(), exact, nil)
	if !ok || hit == nil || string(res.Body) != `"first"` {
		t.Fatalf("first hit: %+v %v %v", res, hit, ok)
	}
	n := len(obs.results)
	res2, hit2, ok := ci.InvokeCachedHit(ctx, call(), exact, hit)
	if !ok || hit2 != hit || string(res2.Body) != `"first"` || res2 == res || res2.Meta[MetaOrigin] != "import" || res2.Source != toolenv.SourceCache {
		t.Fatalf("hinted hit: %+v %v %v", res2, hit2, ok)
	}
	if len(obs.results) != n+1 {
		t.Fatal("a hinted hit was not observed")
	}
	// A replay is observed as the hinted hit, with the same result.
	replayed := call()
	if !ci.ReplayHit(ctx, replayed, exact, hit) || len(obs.results) != n+2 || obs.calls[n+1] != replayed {
		t.Fatalf("a replay: %d observations after %d", len(obs.results), n+1)
	}
	if r := obs.results[n+1]; r.Status != res2.Status || r.Source != res2.Source || string(r.Body) != string(res2.Body) || r.Meta[MetaOrigin] != "import" {
		t.Fatalf("a replay was observed as %+v, the hinted hit as %+v", r, res2)
	}
	// A hint for another key or tool is not taken.
	if _, h, ok := ci.InvokeCachedHit(ctx, call(), "{'symbol': 'MSFT'}", hit); ok || h != nil {
		t.Fatal("a hint answered another exact key")
	}
	other := call()
	other.Tool = quoteTool()
	other.Tool.Name = "other"
	if r, _, ok := ci.InvokeCachedHit(ctx, other, exact, hit); ok {
		t.Fatalf("a hint answered another tool: %+v", r)
	}
	before := len(obs.results)
	if ci.ReplayHit(ctx, call(), "{'symbol': 'MSFT'}", hit) || ci.ReplayHit(ctx, other, exact, hit) || ci.ReplayHit(ctx, call(), exact, nil) {
		t.Fatal("a replay for another key or tool, or without a hint")
	}
	noCache := call()
	noCache.Options.NoCache = true
	if ci.ReplayHit(ctx, noCache, exact, hit) || len(obs.results) != before {
		t.Fatal("a replay of a call that asked for no cache, or a refused replay observed")
	}
	// Any write voids the hint: here one of another key, which leaves
	// the entry as it was.
	if _, err := st.Put(ctx, &store.Entry{Tool: "tb/get_quote", Args: `{"symbol":"X"}`, Status: toolenv.StatusOK, Body: json.RawMessage(`"x"`)}); err != nil {
		t.Fatal(err)
	}
	if _, h, ok := ci.InvokeCachedHit(ctx, call(), exact, hit); ok && h == hit {
		t.Fatal("a hint served after a write")
	}
	if ci.ReplayHit(ctx, call(), exact, hit) {
		t.Fatal("a hint replayed after a write")
	}
	// A replacement is served, never the entry from before.
	if _, err := st.PutMany(ctx, []*store.Entry{entry(`"second"`)}, true); err != nil {
		t.Fatal(err)
	}
	if r, _, ok := ci.InvokeCachedHit(ctx, call(), exact, hit); ok && string(r.Body) != `"second"` {
		t.Fatalf("after a replacement: %s", r.Body)
	}
	if r := p.Invoke(ctx, call()); string(r.Body) != `"second"` {
		t.Fatalf("Invoke after a replacement: %s", r.Body)
	}
	r, h, ok := ci.InvokeCachedHit(ctx, call(), exact, hit)
	if !ok || string(r.Body) != `"second"` || h == hit {
		t.Fatalf("after the replacement was read: %+v %v", r, ok)
	}
	if r, _, ok := ci.InvokeCachedHit(ctx, call(), exact, h); !ok || string(r.Body) != `"second"` {
		t.Fatalf("the new hint: %+v %v", r, ok)
	}
}

// replayObserver is a callObserver that prepares for replays: it counts
// what it prepared and the replays observed through it.
type replayObserver struct {
	callObserver
	prepared []string // the front-ends prepared for
	replays  int
}

func (o *replayObserver) ObserveReplays(call *toolenv.Call, _ *toolenv.Result) func(time.Duration) {
	o.prepared = append(o.prepared, call.Frontend)
	return func(time.Duration) { o.replays++ }
}

// TestReplayHitPreparedObserver: a ReplayObserver prepares once for the
// hit kept, and its prepared function observes each replay from the same
// front-end; a replay from another front-end is observed by Observe.
func TestReplayHitPreparedObserver(t *testing.T) {
	ctx := context.Background()
	const exact = "{'symbol': 'AAPL'}"
	reg, st := lenientQuoteCache(t)
	if _, err := st.Put(ctx, &store.Entry{Tool: "tb/get_quote", Args: `{"symbol":"AAPL"}`, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(`"x"`), Origin: "import"}); err != nil {
		t.Fatal(err)
	}
	obs := &replayObserver{}
	p := New(reg, Options{Cache: st, Observer: obs})
	ci := p.(CachedInvoker)
	call := func(frontend string) *toolenv.Call {
		c := quoteCall(t, reg, `{"symbol":"AAPL"}`)
		c.Frontend, c.Meta = frontend, map[string]string{CallMetaExactKey: exact}
		return c
	}
	p.Invoke(ctx, call("virtual")) // reads the entry into memory
	_, hit, ok := ci.InvokeCachedHit(ctx, call("virtual"), exact, nil)
	if !ok || hit == nil || len(obs.prepared) != 1 || obs.prepared[0] != "virtual" {
		t.Fatalf("kept hit %v (%v), prepared for %v", hit, ok, obs.prepared)
	}
	n := len(obs.results)
	for range 3 {
		if !ci.ReplayHit(ctx, call("virtual"), exact, hit) {
			t.Fatal("a replay refused")
		}
	}
	if obs.replays != 3 || len(obs.results) != n {
		t.Fatalf("replays observed %d times prepared, %d by Observe", obs.replays, len(obs.results)-n)
	}
	if !ci.ReplayHit(ctx, call("rest"), exact, hit) || obs.replays != 3 || len(obs.results) != n+1 || obs.results[n].Source != toolenv.SourceCache {
		t.Fatalf("a replay from another front-end: %d prepared, %d by Observe", obs.replays, len(obs.results)-n)
	}
}

// TestReplayPrepared: a hit whose observer prepared its replays is
// replayed without a Call, observed through what was prepared, while
// nothing is written to the cache; it is refused, having observed
// nothing, when nothing was prepared (a plain Observer), when calls are
// logged at debug level (the log needs the call), and after a write.
func TestReplayPrepared(t *testing.T) {
	ctx := context.Background()
	const exact = "{'symbol': 'AAPL'}"
	setup := func(t *testing.T, obs Observer, log *slog.Logger) (CachedInvoker, *ExactHit, store.Store) {
		reg, st := lenientQuoteCache(t)
		if _, err := st.Put(ctx, &store.Entry{Tool: "tb/get_quote", Args: `{"symbol":"AAPL"}`, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(`"x"`)}); err != nil {
			t.Fatal(err)
		}
		p := New(reg, Options{Cache: st, Observer: obs, Logger: log})
		call := quoteCall(t, reg, `{"symbol":"AAPL"}`)
		call.Frontend, call.Meta = "virtual", map[string]string{CallMetaExactKey: exact}
		p.Invoke(ctx, call) // reads the entry into memory
		ci := p.(CachedInvoker)
		_, hit, ok := ci.InvokeCachedHit(ctx, call, exact, nil)
		if !ok || hit == nil {
			t.Fatalf("no hit kept (%v)", ok)
		}
		return ci, hit, st
	}
	t.Run("prepared", func(t *testing.T) {
		obs := &replayObserver{}
		ci, hit, st := setup(t, obs, nil)
		n := len(obs.results)
		for range 4 {
			if !ci.ReplayPrepared(ctx, hit) {
				t.Fatal("a prepared replay refused")
			}
		}
		if obs.replays != 4 || len(obs.results) != n {
			t.Fatalf("observed %d prepared, %d by Observe; want 4 and 0", obs.replays, len(obs.results)-n)
		}
		if ci.ReplayPrepared(ctx, nil) {
			t.Fatal("a nil hit replayed")
		}
		if _, err := st.Put(ctx, &store.Entry{Tool: "tb/get_quote", Args: `{"symbol":"MSFT"}`, Status: toolenv.StatusOK, Body: json.RawMessage(`"y"`)}); err != nil {
			t.Fatal(err)
		}
		if ci.ReplayPrepared(ctx, hit) || obs.replays != 4 {
			t.Fatal("replayed after a write to the cache")
		}
	})
	t.Run("plain observer", func(t *testing.T) {
		obs := &callObserver{}
		ci, hit, _ := setup(t, obs, nil)
		n := len(obs.results)
		if ci.ReplayPrepared(ctx, hit) || len(obs.results) != n {
			t.Fatal("replayed without a prepared observer, or observed the refusal")
		}
	})
	t.Run("debug log", func(t *testing.T) {
		obs := &replayObserver{}
		log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ci, hit, _ := setup(t, obs, log)
		if ci.ReplayPrepared(ctx, hit) || obs.replays != 0 {
			t.Fatal("replayed without a call while calls are logged")
		}
	})
}

// lenientQuoteCache returns a registry of the get_quote tool in a
// lenient, cacheable collection "tb" (a counting simulator behind it),
// and an empty in-memory store.
func lenientQuoteCache(t *testing.T) (*Registry, store.Store) {
	t.Helper()
	c := toolenv.NewCollection("tb", "toolbench", []*toolenv.Tool{quoteTool()})
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}
	reg := NewRegistry()
	if err := reg.Add(c, &countingBackend{source: toolenv.SourceSimulator}); err != nil {
		t.Fatal(err)
	}
	return reg, openStore(t, ":memory:")
}
