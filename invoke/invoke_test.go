package invoke

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// countingBackend answers every call with its arguments, from source.
type countingBackend struct {
	calls  atomic.Int64
	source toolenv.Source
	status toolenv.Status
	delay  time.Duration
	meta   map[string]string
}

func (b *countingBackend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	b.calls.Add(1)
	if b.delay > 0 {
		select {
		case <-time.After(b.delay):
		case <-ctx.Done():
			return &toolenv.Result{Status: toolenv.StatusCanceled, Error: ctx.Err().Error()}
		}
	}
	body, _ := toolenv.Canonical(call.Args)
	st := b.status
	if st == "" {
		st = toolenv.StatusOK
	}
	r := &toolenv.Result{Status: st, Body: body, Source: b.source}
	for k, v := range b.meta {
		r.SetMeta(k, v)
	}
	return r
}

func newPipeline(t *testing.T, backend toolenv.Handler, policy toolenv.Policy, opts Options) (toolenv.Handler, *Registry, store.Store) {
	t.Helper()
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	in.SetProp("days", &toolenv.Schema{Type: "integer"})
	in.Required = []string{"city"}
	c := toolenv.NewCollection("demo", "demo", []*toolenv.Tool{{Name: "get_weather", Input: in}, {Name: "get_time", Input: toolenv.ObjectSchema()}})
	c.Policy = policy
	reg := NewRegistry()
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if opts.Cache == nil {
		opts.Cache = st
	}
	return New(reg, opts), reg, st
}

func call(t *testing.T, reg *Registry, name, args string) *toolenv.Call {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	c, res := reg.NewCall("demo", name, m)
	if res != nil {
		t.Fatalf("resolve: %+v", res)
	}
	return c
}

func TestResolveUnknown(t *testing.T) {
	_, reg, _ := newPipeline(t, &countingBackend{}, toolenv.Policy{}, Options{})
	_, _, res := reg.Resolve("demo", "get_wether")
	if res == nil || res.Status != toolenv.StatusUnknownTool || !strings.Contains(res.Hint, `"get_weather"`) {
		t.Fatalf("res = %+v", res)
	}
	_, _, res = reg.Resolve("nope", "x")
	if res == nil || !strings.Contains(res.Hint, "demo") {
		t.Fatalf("res = %+v", res)
	}
	if err := reg.Add(toolenv.NewCollection("demo", "demo", nil), &countingBackend{}); err == nil {
		t.Fatal("duplicate collection accepted")
	}
}

func TestValidationPolicies(t *testing.T) {
	b := &countingBackend{source: toolenv.SourceLive}
	strict, reg, _ := newPipeline(t, b, toolenv.Policy{Validation: toolenv.ValidationStrict, Feedback: toolenv.FeedbackTerse}, Options{})
	res := strict.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Paris","days":"3"}`))
	if res.Status != toolenv.StatusInvalidArguments || len(res.Problems) != 1 || res.Problems[0].Param != "days" || res.Hint != "" {
		t.Fatalf("strict: %+v", res)
	}
	if b.calls.Load() != 0 {
		t.Fatal("invalid call reached the backend")
	}
	lenient, reg2, _ := newPipeline(t, b, toolenv.Policy{Validation: toolenv.ValidationLenient}, Options{})
	res = lenient.Invoke(context.Background(), call(t, reg2, "get_weather", `{"city":"Paris","days":"3"}`))
	if !res.OK() || string(res.Body) != `{"city":"Paris","days":3}` {
		t.Fatalf("lenient: %+v %s", res, res.Body)
	}
}

func TestCacheServesAndStoresOnlyRealAnswers(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		backend   *countingBackend
		wantStore bool
	}{
		{"simulator answer is stored", &countingBackend{source: toolenv.SourceSimulator}, true},
		{"upstream answer is stored", &countingBackend{source: toolenv.SourceUpstream}, true},
		{"synthesized answer is not", &countingBackend{source: toolenv.SourceSynthesizer}, false},
		{"failure is not", &countingBackend{source: toolenv.SourceUpstream, status: toolenv.StatusNotFound}, false},
		{"marked uncacheable is not", &countingBackend{source: toolenv.SourceSimulator, meta: map[string]string{MetaCacheable: "false"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, reg, st := newPipeline(t, tt.backend, toolenv.Policy{Cache: true, Validation: toolenv.ValidationLenient}, Options{})
			first := p.Invoke(ctx, call(t, reg, "get_weather", `{"days":3,"city":"Paris"}`))
			// Same call, other key order and number form: must be a hit.
			second := p.Invoke(ctx, call(t, reg, "get_weather", `{"city":"Paris","days":3.0}`))
			st2, _ := st.Stats(ctx)
			if tt.wantStore {
				if second.Source != toolenv.SourceCache || second.Meta[MetaOrigin] != string(tt.backend.source) || string(second.Body) != string(first.Body) {
					t.Fatalf("second = %+v", second)
				}
				if tt.backend.calls.Load() != 1 || st2.Entries != 1 {
					t.Fatalf("backend calls = %d, entries = %d", tt.backend.calls.Load(), st2.Entries)
				}
			} else if second.Source == toolenv.SourceCache || st2.Entries != 0 || tt.backend.calls.Load() != 2 {
				t.Fatalf("second = %+v, entries = %d, calls = %d", second, st2.Entries, tt.backend.calls.Load())
			}
			if second.Latency <= 0 {
				t.Fatal("latency not set")
			}
		})
	}
}

func TestConcurrentMissesShareOneBackendCall(t *testing.T) {
	b := &countingBackend{source: toolenv.SourceSimulator, delay: 50 * time.Millisecond}
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Oslo"}`))
			res.SetMeta("mine", "x") // each caller owns its result
			if !res.OK() {
				t.Errorf("res = %+v", res)
			}
		}()
	}
	wg.Wait()
	if n := b.calls.Load(); n != 1 {
		t.Fatalf("backend called %d times for one key", n)
	}
}

func TestRecoverTimeoutLimit(t *testing.T) {
	ctx := context.Background()
	panicky := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result { panic("boom") })
	p, reg, _ := newPipeline(t, panicky, toolenv.Policy{}, Options{})
	if res := p.Invoke(ctx, call(t, reg, "get_time", `{}`)); res.Status != toolenv.StatusInternal {
		t.Fatalf("panic: %+v", res)
	}
	slow := &countingBackend{delay: time.Second}
	p, reg, _ = newPipeline(t, slow, toolenv.Policy{}, Options{Timeout: 20 * time.Millisecond})
	if res := p.Invoke(ctx, call(t, reg, "get_time", `{}`)); res.Status != toolenv.StatusTimeout {
		t.Fatalf("timeout: %+v", res)
	}
	big := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`), Source: toolenv.SourceSimulator}
	})
	p, reg, st := newPipeline(t, big, toolenv.Policy{Cache: true}, Options{MaxResultBytes: 100})
	if res := p.Invoke(ctx, call(t, reg, "get_time", `{}`)); res.Status != toolenv.StatusTooLarge || len(res.Body) != 0 {
		t.Fatalf("limit: %+v", res)
	}
	if s, _ := st.Stats(ctx); s.Entries != 0 {
		t.Fatal("oversized result was cached")
	}
	// An entry already in the store (imported, or stored under a higher
	// limit) is not served past the limit either.
	small := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"small"`), Source: toolenv.SourceSimulator}
	})
	p, reg, st = newPipeline(t, small, toolenv.Policy{Cache: true}, Options{MaxResultBytes: 100})
	if _, err := st.Put(ctx, &store.Entry{Tool: "demo/get_time", Args: "{}", Body: json.RawMessage(`"` + strings.Repeat("y", 500) + `"`)}); err != nil {
		t.Fatal(err)
	}
	if res := p.Invoke(ctx, call(t, reg, "get_time", `{}`)); res.Status != toolenv.StatusTooLarge {
		t.Fatalf("oversized cached entry served: %+v", res.Status)
	}
	// Nor by a lenient collection's cache, which looks entries up before
	// validation, nor from memory under the client's exact key.
	lenient := toolenv.Policy{Cache: true, Validation: toolenv.ValidationLenient}
	p, reg, st = newPipeline(t, small, lenient, Options{MaxResultBytes: 100})
	const exact = "{}"
	if _, err := st.Put(ctx, &store.Entry{Tool: "demo/get_time", Args: "{}", Exact: exact, Body: json.RawMessage(`"` + strings.Repeat("z", 500) + `"`)}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time, memory holds the entry
		c := call(t, reg, "get_time", `{}`)
		c.Meta = map[string]string{CallMetaExactKey: exact}
		if res := p.Invoke(ctx, c); res.Status != toolenv.StatusTooLarge {
			t.Fatalf("oversized entry served by the lenient cache: %+v", res.Status)
		}
		if ci, ok := p.(CachedInvoker); ok {
			if res, hit := ci.InvokeCached(ctx, c); hit {
				t.Fatalf("oversized entry served from memory: %+v", res.Status)
			}
		}
	}
}

// blockingBackend answers once release is closed, or fails with the
// context's error when the call's context ends first. started receives
// one value per call as it begins.
type blockingBackend struct {
	calls   atomic.Int64
	started chan struct{}
	release chan struct{}
}

func (b *blockingBackend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	b.calls.Add(1)
	b.started <- struct{}{}
	select {
	case <-b.release:
		body, _ := toolenv.Canonical(call.Args)
		return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSimulator}
	case <-ctx.Done():
		return toolenv.ResultOf(ctx.Err())
	}
}

// TestSingleFlightCallersKeepTheirOwnContext checks that a caller waiting
// for the same call in flight depends on its own context only: it stops
// waiting when its context ends, and it is not failed by the context of
// the caller whose call it was waiting for.
func TestSingleFlightCallersKeepTheirOwnContext(t *testing.T) {
	const wait = 2 * time.Minute // a guard against hangs, never reached when the code is right (generous: a loaded machine is slow, not wrong)
	tests := []struct {
		name string
		// cancelLeader ends the first caller's context while both wait;
		// cancelWaiter ends the second caller's.
		cancelLeader, cancelWaiter bool
		wantWaiter                 toolenv.Status
		wantCalls                  int64
	}{
		{"leader gives up, waiter still gets an answer", true, false, toolenv.StatusOK, 2},
		{"waiter gives up without waiting for the leader", false, true, toolenv.StatusCanceled, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &blockingBackend{started: make(chan struct{}, 4), release: make(chan struct{})}
			joined := make(chan struct{}, 4)
			p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{flightWaiting: func() { joined <- struct{}{} }})
			leaderCtx, cancelLeader := context.WithCancel(context.Background())
			defer cancelLeader()
			waiterCtx, cancelWaiter := context.WithCancel(context.Background())
			defer cancelWaiter()

			leader := make(chan *toolenv.Result, 1)
			go func() { leader <- p.Invoke(leaderCtx, call(t, reg, "get_weather", `{"city":"Oslo"}`)) }()
			select {
			case <-b.started:
			case <-time.After(wait):
				t.Fatal("the first call never reached the backend")
			}
			waiter := make(chan *toolenv.Result, 1)
			go func() { waiter <- p.Invoke(waiterCtx, call(t, reg, "get_weather", `{"city":"Oslo"}`)) }()
			select { // the second caller joined the flight
			case <-joined:
			case <-time.After(wait):
				t.Fatal("the second call never joined the first one's flight")
			}

			if tt.cancelWaiter {
				cancelWaiter()
				select {
				case res := <-waiter:
					if res.Status != tt.wantWaiter {
						t.Fatalf("waiter = %+v, want %s", res, tt.wantWaiter)
					}
				case <-time.After(wait):
					t.Fatal("the waiter ignored its own canceled context and kept waiting for the other call")
				}
				close(b.release)
				if res := <-leader; !res.OK() {
					t.Fatalf("leader = %+v", res)
				}
			}
			if tt.cancelLeader {
				cancelLeader()
				if res := <-leader; res.Status != toolenv.StatusCanceled {
					t.Fatalf("leader = %+v, want canceled", res)
				}
				// The waiter's own call goes on.
				select {
				case <-b.started:
				case res := <-waiter:
					t.Fatalf("waiter got the other caller's failure: %+v", res)
				case <-time.After(wait):
					t.Fatal("the waiter's call never reached the backend")
				}
				close(b.release)
				select {
				case res := <-waiter:
					if res.Status != tt.wantWaiter {
						t.Fatalf("waiter = %+v, want %s", res, tt.wantWaiter)
					}
				case <-time.After(wait):
					t.Fatal("waiter never answered")
				}
			}
			if n := b.calls.Load(); n != tt.wantCalls {
				t.Fatalf("backend calls = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

// countingHandler counts the log records whose message is msg.
type countingHandler struct {
	msg string
	n   *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// TestSingleFlightPanicStaysWithItsCall checks that a backend panic is
// one internal error for each caller of that call and one panic in the
// log: the callers that waited for it must not panic in turn.
func TestSingleFlightPanicStaysWithItsCall(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	panicky := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		started <- struct{}{}
		<-release
		panic("boom")
	})
	var panics atomic.Int64
	log := slog.New(countingHandler{msg: "panic while invoking a tool", n: &panics})
	joined := make(chan struct{}, 1)
	p, reg, _ := newPipeline(t, panicky, toolenv.Policy{Cache: true}, Options{Logger: log, flightWaiting: func() { joined <- struct{}{} }})
	results := make(chan *toolenv.Result, 2)
	go func() { results <- p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Oslo"}`)) }()
	<-started
	go func() { results <- p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Oslo"}`)) }()
	<-joined // the second caller joined the flight
	close(release)
	for i := 0; i < 2; i++ {
		if res := <-results; res.Status != toolenv.StatusInternal {
			t.Fatalf("result %d = %+v, want internal", i, res)
		}
	}
	if n := panics.Load(); n != 1 {
		t.Fatalf("%d panics logged for one backend panic", n)
	}
}

// recordingObserver keeps the status of every call it is told about.
type recordingObserver struct {
	mu       sync.Mutex
	statuses []toolenv.Status
}

func (o *recordingObserver) Observe(_ *toolenv.Call, res *toolenv.Result, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.statuses = append(o.statuses, res.Status)
}

// TestObserverSeesEveryCall checks that metrics count every call with the
// status its client got, a backend panic included.
func TestObserverSeesEveryCall(t *testing.T) {
	tests := []struct {
		name    string
		backend toolenv.Handler
		want    toolenv.Status
	}{
		{"answer", &countingBackend{source: toolenv.SourceSimulator}, toolenv.StatusOK},
		{"failure", &countingBackend{source: toolenv.SourceUpstream, status: toolenv.StatusNotFound}, toolenv.StatusNotFound},
		{"panic", toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result { panic("boom") }), toolenv.StatusInternal},
		{"no result", toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result { return nil }), toolenv.StatusInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &recordingObserver{}
			p, reg, _ := newPipeline(t, tt.backend, toolenv.Policy{}, Options{Observer: obs})
			res := p.Invoke(context.Background(), call(t, reg, "get_time", `{}`))
			if res.Status != tt.want {
				t.Fatalf("result = %+v, want %s", res, tt.want)
			}
			if len(obs.statuses) != 1 || obs.statuses[0] != tt.want {
				t.Fatalf("observed %v, want [%s]", obs.statuses, tt.want)
			}
		})
	}
}
