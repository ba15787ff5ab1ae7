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
