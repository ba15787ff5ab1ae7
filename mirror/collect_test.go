package mirror_test

import (
	"context"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sample"
)

// TestCollectOverHTTP generates requests with the sampler and collects
// them from a real HTTP API on loopback through the invoke pipeline and
// the upstream backend, then filters them: each way a real API fails is
// retried, deferred or classified as Appendix D says, and every pair
// keeps its provenance.
func TestCollectOverHTTP(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	c := weatherTools(srv.URL, "forecast", "cities", "flaky", "slow", "ratelimited", "missing", "private", "binary", "huge")
	e := engine(t, newStore(t), c, 64<<10)
	gen, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 3, Invalid: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if gen.Method != mirror.RequestSampler || gen.Total == 0 {
		t.Fatalf("generate: %+v", gen)
	}
	before := time.Now()
	st, err := e.Collect(ctx, mirror.CollectOptions{Workers: 1, CallTimeout: 300 * time.Millisecond, Backoff: 5 * time.Millisecond, BreakAfter: 2, BreakFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if st.Deferred == 0 || st.Retried == 0 {
		t.Fatalf("collect: %+v: want deferred requests (slow API's breaker) and retried calls (flaky, rate limited)", st)
	}

	// forecast: answers, and refuses a call without its city (HTTP 400).
	var sawOK, sawRefusal bool
	for _, p := range pairsOf(t, e, "weather/forecast") {
		if p.Source != string(toolenv.SourceUpstream) || p.Attempts != 1 || p.CalledAt.Before(before) || p.Latency <= 0 {
			t.Errorf("forecast pair %s: provenance %+v", p.Args, p)
		}
		switch {
		case p.Kind == sample.KindInvalid+sample.InvalidMissingRequired:
			sawRefusal = true
			if p.Class != "parameter_change" || p.Status != toolenv.StatusInvalidArguments || p.HTTPStatus != 400 || !strings.Contains(p.Error, "missing required parameter") {
				t.Errorf("a call without city: %+v", p)
			}
		case p.OK():
			sawOK = true
			if p.Class != "success" || p.HTTPStatus != 200 || !strings.Contains(string(p.Body), `"city"`) {
				t.Errorf("a good call: %+v", p)
			}
		}
	}
	if !sawOK || !sawRefusal {
		t.Errorf("forecast: ok %v, refusal %v", sawOK, sawRefusal)
	}
	// flaky and ratelimited: the first attempt fails, the second answers.
	for _, tool := range []string{"weather/flaky", "weather/ratelimited"} {
		for _, p := range pairsOf(t, e, tool) {
			if p.Kind == sample.KindInvalid+sample.InvalidMissingRequired {
				continue
			}
			if !p.OK() || p.Attempts != 2 || len(p.History) != 1 || !p.History[0].Retrying || p.History[0].Class != "not_connected" {
				t.Errorf("%s %s: status %s after %d attempts, history %+v; want ok on the second attempt", tool, p.Args, p.Status, p.Attempts, p.History)
			}
		}
	}
	// slow: two calls time out three times each, then the breaker defers
	// the rest.
	slow := pairsOf(t, e, "weather/slow")
	if len(slow) != 2 {
		t.Fatalf("slow API: %d pairs, want 2 before its breaker opened", len(slow))
	}
	for _, p := range slow {
		if p.Status != toolenv.StatusTimeout || p.Attempts != 3 || len(p.History) != 2 || p.Class != "not_connected" {
			t.Errorf("slow %s: %+v", p.Args, p)
		}
	}
	if n := pending(t, e); n != st.Deferred {
		t.Errorf("%d requests pending, %d deferred", n, st.Deferred)
	}
	for tool, class := range map[string]string{"weather/missing": "not_found", "weather/private": "not_authorized", "weather/huge": "other", "weather/binary": "success"} {
		for _, p := range pairsOf(t, e, tool) {
			if p.Class != class {
				t.Errorf("%s %s: class %s (rule %s), want %s", tool, p.Args, p.Class, p.Rule, class)
			}
		}
	}

	// The filter keeps successes and refusals, and drops the rest with
	// their reason.
	fs, err := e.Filter(ctx, mirror.FilterOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"weather/missing": "appendix_d:not_found", "weather/private": "appendix_d:not_authorized", "weather/huge": "appendix_d:other",
		"weather/binary": mirror.FilterBinary, "weather/slow": "appendix_d:not_connected"}
	for tool, reason := range want {
		for _, p := range pairsOf(t, e, tool) {
			if p.Filter != reason || p.FilterDetail == "" {
				t.Errorf("%s %s: filter %q (%s), want %q with a detail", tool, p.Args, p.Filter, p.FilterDetail, reason)
			}
		}
	}
	for _, p := range pairsOf(t, e, "weather/forecast") {
		if p.Filter != mirror.FilterKept {
			t.Errorf("forecast %s: filter %q, want kept", p.Args, p.Filter)
		}
	}
	if fs.Dropped["appendix_d:not_found"] == 0 || fs.KeptFailures == 0 || fs.Kept+sum(fs.Dropped) != fs.Real {
		t.Errorf("filter stats %+v", fs)
	}
	// The report counts the dropped pairs per rule.
	sm, err := e.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sm.DroppedByRule["appendix_d:not_found http_404_410"] == 0 || sm.DroppedByRule["appendix_d:not_connected transport_timeout"] != 2 || sum(sm.DroppedByRule) != sum(fs.Dropped) {
		t.Errorf("dropped by rule %v", sm.DroppedByRule)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestCollectRateLimit checks that one API is never called faster than
// its rate, however many workers there are.
func TestCollectRateLimit(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	e := engine(t, newStore(t), weatherTools(srv.URL, "forecast", "cities"), 1<<20)
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 8, Invalid: -1, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	const rate = 25.0
	if _, err := e.Collect(ctx, mirror.CollectOptions{Workers: 16, Rate: rate, Burst: 1}); err != nil {
		t.Fatal(err)
	}
	times := srv.callTimes("forecast")
	if len(times) < 6 {
		t.Fatalf("%d calls of forecast", len(times))
	}
	// A token bucket of one token releases the n calls at least
	// (n-1)/rate apart in all; a slow machine only makes the span longer.
	span := times[len(times)-1].Sub(times[0])
	if want := time.Duration(float64(len(times)-1) / rate * float64(time.Second) * 0.9); span < want {
		t.Fatalf("%d calls of one API within %s under a rate of %.0f/s (want at least %s)", len(times), span, rate, want)
	}
}

// TestCollectInterrupt cancels a collection midway: only finished calls
// are stored, and the next run collects exactly the rest.
func TestCollectInterrupt(t *testing.T) {
	srv := newAPIServer(t)
	srv.delay = 30 * time.Millisecond
	c := weatherTools(srv.URL, "slow", "forecast")
	e := engine(t, newStore(t), c, 1<<20)
	if _, err := e.Generate(context.Background(), mirror.GenerateOptions{PerAPI: 40, Invalid: -1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	total := pending(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.callTimes("slow")) < 10 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	st, err := e.Collect(ctx, mirror.CollectOptions{Workers: 2, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Interrupted || st.Called >= total {
		t.Fatalf("collect: %+v; want an interrupted run", st)
	}
	for _, p := range pairsOf(t, e, "weather/slow") {
		if !p.OK() {
			t.Fatalf("a pair cut short by the interrupt was stored: %+v", p)
		}
	}
	left := pending(t, e)
	if left != total-st.Called {
		t.Fatalf("%d pending after %d of %d calls", left, st.Called, total)
	}
	st2, err := e.Collect(context.Background(), mirror.CollectOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Called != left || pending(t, e) != 0 {
		t.Fatalf("the second run called %d, want %d; %d left", st2.Called, left, pending(t, e))
	}
}
