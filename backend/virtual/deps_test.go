package virtual

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// hungServer accepts connections on loopback and never answers: a model
// endpoint or an API that hangs. It counts the connections.
type hungServer struct {
	ln    net.Listener
	conns atomic.Int64
	mu    sync.Mutex
	held  []net.Conn
}

func newHungServer(t *testing.T) *hungServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			h.mu.Lock()
			h.held = append(h.held, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		h.mu.Lock()
		for _, c := range h.held {
			c.Close()
		}
		h.mu.Unlock()
	})
	return h
}

func (h *hungServer) URL() string { return "http://" + h.ln.Addr().String() }

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// pipeline serves one collection with b through the real pipeline, with
// a call budget of timeout (the Timeout middleware answers 504 when it
// passes).
func pipeline(t *testing.T, b toolenv.Handler, timeout time.Duration) (toolenv.Handler, *toolenv.Tool, *toolenv.Collection) {
	t.Helper()
	_, tool := concert()
	c := toolenv.NewCollection("tb", "toolbench", []*toolenv.Tool{tool})
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, invoke.Options{Timeout: timeout}), c.Tools[0], c
}

// TestHungModelEndpointIsSynthesized: an LLM endpoint that accepts and
// never answers, with a simulator budget (30 s) and a per-request timeout
// (the client's 120 s) far longer than the call's budget (1 s): the call
// still answers, synthesized and marked, naming the real cause; after
// three such calls the endpoint's breaker opens and calls skip it without
// connecting; after the cooldown one call probes it.
func TestHungModelEndpointIsSynthesized(t *testing.T) {
	hung := newHungServer(t)
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	b, err := Build(Options{
		LLM: llm.New(hung.URL()+"/v1?api-key=SECRET", llm.Options{}), Model: "MirrorAPI",
		SimulatorBudget: 30 * time.Second,
		Breakers:        BreakerOptions{Failures: 3, Cooldown: time.Minute, Now: clk.now},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, tool, coll := pipeline(t, b, time.Second)
	call := func() *toolenv.Result {
		return p.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: coll, Args: map[string]any{"id_conc": "1"}})
	}
	for i := 1; i <= 3; i++ {
		r := call()
		if !r.OK() || r.Source != toolenv.SourceSynthesizer {
			t.Fatalf("call %d: %s from %s: %s", i, r.Status, r.Source, r.Error)
		}
		if r.Meta[MetaFallback] != "synthesizer" || r.Meta[simulate.MetaFailure] != "endpoint" {
			t.Fatalf("call %d: provenance %v", i, r.Meta)
		}
		w := strings.Join(r.Warnings, " | ")
		if strings.Contains(w, "no LLM simulator is configured") || !strings.Contains(w, "could not answer") || !strings.Contains(w, "no answer") {
			t.Fatalf("call %d: the warning does not name the cause: %s", i, w)
		}
		if strings.Contains(w, "SECRET") {
			t.Fatalf("the endpoint's key leaks into the warning: %s", w)
		}
	}
	if n := hung.conns.Load(); n != 3 {
		t.Fatalf("%d connections for 3 calls", n)
	}
	r := call()
	if !r.OK() || r.Meta[simulate.MetaFailure] != FailureCircuitOpen || !strings.Contains(strings.Join(r.Warnings, " "), "circuit open after 3 failures") {
		t.Fatalf("with the breaker open: %s %v %q", r.Status, r.Meta, r.Warnings)
	}
	if n := hung.conns.Load(); n != 3 {
		t.Fatalf("the open breaker still connected (%d connections)", n)
	}
	clk.add(time.Minute)
	call()
	if n := hung.conns.Load(); n != 4 {
		t.Fatalf("no probe after the cooldown (%d connections)", n)
	}
	call()
	if n := hung.conns.Load(); n != 4 {
		t.Fatalf("the failed probe did not open the breaker again (%d connections)", n)
	}
}

// TestOnSimulatorFailureError returns the simulator's failure instead of
// synthesizing, and says so in the provenance.
func TestOnSimulatorFailureError(t *testing.T) {
	hung := newHungServer(t)
	b, err := Build(Options{LLM: llm.New(hung.URL()+"/v1", llm.Options{}), Model: "m", OnSimulatorFailure: FallbackError})
	if err != nil {
		t.Fatal(err)
	}
	p, tool, coll := pipeline(t, b, time.Second)
	r := p.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: coll, Args: map[string]any{}})
	if r.OK() || r.Status != toolenv.StatusTimeout || r.Source != toolenv.SourceSimulator || r.Meta[MetaFallback] != "none" {
		t.Fatalf("%s from %s %v: %s", r.Status, r.Source, r.Meta, r.Error)
	}
	if _, err := Build(Options{OnSimulatorFailure: "retry"}); err == nil {
		t.Fatal("an unknown fallback was accepted")
	}
}

// TestHungUpstreamOpensItsBreaker: a real API that hangs costs each call
// at most its share of the budget, then its host's breaker opens and calls
// go straight to the simulator.
func TestHungUpstreamOpensItsBreaker(t *testing.T) {
	hung := newHungServer(t)
	b, err := Build(Options{UpstreamURL: hung.URL() + "/rapidapi?key=SECRET", UpstreamTimeout: 15 * time.Second, Breakers: BreakerOptions{Failures: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p, tool, coll := pipeline(t, b, time.Second)
	for i := 1; i <= 3; i++ {
		r := p.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: coll, Args: map[string]any{"id_conc": "1"}})
		if !r.OK() || r.Source != toolenv.SourceSynthesizer || r.Meta[MetaFallback] != "synthesizer" {
			t.Fatalf("call %d: %s from %s %v: %s", i, r.Status, r.Source, r.Meta, r.Error)
		}
		w := strings.Join(r.Warnings, " | ")
		if strings.Contains(w, "SECRET") {
			t.Fatalf("the proxy's key leaks: %s", w)
		}
		if i == 3 && (r.Meta[upstream.MetaRule] != FailureCircuitOpen || !strings.Contains(w, "circuit open")) {
			t.Fatalf("call 3: breaker not open: %v %s", r.Meta, w)
		}
	}
	if n := hung.conns.Load(); n != 2 {
		t.Fatalf("%d connections to the hung upstream, want 2 (then the breaker opens)", n)
	}
}

// TestOversizedAnswersOpenTheBreaker: an upstream or a model that keeps
// answering more than the server accepts (--max-result-bytes, or the
// upstream client's own 4 MiB) fails its stage each time: the call falls
// through to the next stage, saying why, and after Failures such answers
// the stage's breaker opens, so the dependency is no longer asked (and
// its answer no longer downloaded) on every call.
func TestOversizedAnswersOpenTheBreaker(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	huge := strings.Repeat("y", 5<<20) // over upstream.Config.MaxBody's default
	tests := []struct {
		name     string
		upstream string // the proxy's answer; "" none
		model    string // the model's answer; "" none
		max      int
		wantRule string
	}{
		{name: "upstream over --max-result-bytes", upstream: `{"error": "", "response": "` + big + `"}`, max: 4 << 10, wantRule: "body_too_large"},
		{name: "upstream over its client's limit", upstream: `{"error": "", "response": "` + huge + `"}`, wantRule: "body_too_large"},
		{name: "model over --max-result-bytes", model: `{"error": "", "response": {"date": "` + big + `"}}`, max: 4 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{MaxAnswerBytes: tt.max, Breakers: BreakerOptions{Failures: 2, Cooldown: time.Hour}}
			var hits func() int
			if tt.upstream != "" {
				srv, n := proxy(t, tt.upstream)
				opts.UpstreamURL = srv.URL
				hits = func() int { return int(n.Load()) }
			}
			if tt.model != "" {
				srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: tt.model}))
				t.Cleanup(srv.Close)
				opts.LLM, opts.Model = llm.New(srv.URL(), llm.Options{MaxRetries: -1}), "MirrorAPI"
				hits = func() int { return len(srv.Requests()) }
			}
			b, err := Build(opts)
			if err != nil {
				t.Fatal(err)
			}
			p, tool, coll := pipeline(t, b, time.Minute)
			for i := 1; i <= 4; i++ {
				r := p.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: coll, Args: map[string]any{"id_conc": "1"}})
				if !r.OK() || r.Source != toolenv.SourceSynthesizer {
					t.Fatalf("call %d: %s from %s: %s", i, r.Status, r.Source, r.Error)
				}
				w := strings.Join(r.Warnings, " | ")
				want := "bytes"
				if i > 2 {
					want = "circuit open"
				}
				if !strings.Contains(w, want) {
					t.Errorf("call %d: warnings %q do not say %q", i, w, want)
				}
				if tt.wantRule != "" && i <= 2 && r.Meta[upstream.MetaRule] != tt.wantRule {
					t.Errorf("call %d: rule %q, want %q", i, r.Meta[upstream.MetaRule], tt.wantRule)
				}
			}
			if n := hits(); n != 2 {
				t.Errorf("the dependency was asked %d times in 4 calls, want 2 (then its breaker is open)", n)
			}
		})
	}
}
