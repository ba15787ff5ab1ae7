package faults

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/server"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pipeline serves the demo collection with its real offline answers and
// the faults of cfg in front, on a manual clock.
func pipeline(t *testing.T, cfg string) (toolenv.Handler, *invoke.Registry, *ManualClock) {
	t.Helper()
	return observedPipeline(t, cfg, nil)
}

func observedPipeline(t *testing.T, cfg string, obs invoke.Observer) (toolenv.Handler, *invoke.Registry, *ManualClock) {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	backend := toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		if len(call.Tool.Examples) == 0 {
			return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`{}`), Source: toolenv.SourceLive}
		}
		return &toolenv.Result{Status: toolenv.StatusOK, Body: call.Tool.Examples[0].Response, Source: toolenv.SourceLive}
	})
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	conf, err := ParseConfig([]byte(cfg), "test")
	if err != nil {
		t.Fatal(err)
	}
	clock := NewManualClock(t0)
	in, err := New(conf, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return invoke.New(reg, invoke.Options{Observer: obs, BeforeValidate: []toolenv.Middleware{in.Middleware()}}), reg, clock
}

func call(t *testing.T, h toolenv.Handler, reg *invoke.Registry, tool string) *toolenv.Result {
	t.Helper()
	args := map[string]map[string]any{"current_weather": {"city": "Paris"}, "get_book": {"isbn": "9780441172696"}}[tool]
	c, res := reg.NewCall("demo", tool, args)
	if res != nil {
		t.Fatal(res.Error)
	}
	return h.Invoke(context.Background(), c)
}

func TestRateLimit(t *testing.T) {
	h, reg, clock := pipeline(t, `{"rules":[{"tool":"current_weather","rate_limit":{"per_second":2,"burst":3}}]}`)
	var statuses []string
	for i := 0; i < 5; i++ {
		statuses = append(statuses, string(call(t, h, reg, "current_weather").Status))
	}
	if got := strings.Join(statuses, ","); got != "ok,ok,ok,rate_limited,rate_limited" {
		t.Fatalf("statuses %s", got)
	}
	res := call(t, h, reg, "current_weather")
	if res.RetryAfter != 500*time.Millisecond || len(res.Faults) != 1 || res.Faults[0] != "rate_limited" {
		t.Fatalf("retry after %s, faults %v", res.RetryAfter, res.Faults)
	}
	if st := call(t, h, reg, "get_book").Status; st != toolenv.StatusOK {
		t.Fatalf("another tool was limited: %s", st)
	}
	clock.Advance(500 * time.Millisecond)
	if st := call(t, h, reg, "current_weather").Status; st != toolenv.StatusOK {
		t.Fatalf("after the refill: %s", st)
	}
}

func TestLatencyAndTimeout(t *testing.T) {
	h, reg, clock := pipeline(t, `{"seed":3,"rules":[{"tool":"current_weather","latency":{"fixed":"120ms"}},
	 {"tool":"get_book","timeout":{"rate":1,"after":"2s"}}]}`)
	res := call(t, h, reg, "current_weather")
	if !res.OK() || clock.Slept() != 120*time.Millisecond || res.Faults[0] != "latency:120ms" {
		t.Fatalf("latency: %+v slept %s", res, clock.Slept())
	}
	res = call(t, h, reg, "get_book")
	if res.Status != toolenv.StatusTimeout || clock.Slept() != 2120*time.Millisecond || res.Faults[0] != "timeout:2s" {
		t.Fatalf("timeout: %+v slept %s", res, clock.Slept())
	}
}

func TestLatencyDistributions(t *testing.T) {
	for _, tt := range []struct {
		cfg       string
		lo, hi    time.Duration
		wantMeanN time.Duration
	}{
		{`{"distribution":"uniform","min":"10ms","max":"30ms"}`, 10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond},
		{`{"distribution":"normal","mean":"50ms","stddev":"5ms"}`, 0, time.Second, 50 * time.Millisecond},
		{`{"distribution":"exponential","mean":"40ms"}`, 0, 10 * time.Second, 40 * time.Millisecond},
		{`{"distribution":"lognormal","median":"80ms","sigma":0.1}`, 0, time.Second, 80 * time.Millisecond},
	} {
		var l Latency
		if err := json.Unmarshal([]byte(tt.cfg), &l); err != nil || l.check() != nil {
			t.Fatalf("%s: %v %v", tt.cfg, err, l.check())
		}
		d := &draws{state: 1}
		var sum time.Duration
		const n = 4000
		for i := 0; i < n; i++ {
			v := l.delay(d)
			if v < tt.lo || v > tt.hi {
				t.Fatalf("%s: %s out of [%s, %s]", tt.cfg, v, tt.lo, tt.hi)
			}
			sum += v
		}
		if mean := sum / n; mean < tt.wantMeanN*9/10 || mean > tt.wantMeanN*11/10 {
			t.Errorf("%s: mean %s, want about %s", tt.cfg, mean, tt.wantMeanN)
		}
	}
}

func TestIntermittentErrorsAreSeeded(t *testing.T) {
	run := func(seed int) string {
		h, reg, _ := pipeline(t, `{"seed":`+string(rune('0'+seed))+`,"rules":[{"tool":"get_book","errors":{"rate":0.3,"status":503}}]}`)
		var b strings.Builder
		for i := 0; i < 40; i++ {
			res := call(t, h, reg, "get_book")
			if res.OK() {
				b.WriteByte('.')
			} else {
				if res.Status != toolenv.StatusUnavailable || res.Meta[MetaHTTPStatus] != "503" {
					t.Fatalf("%+v", res)
				}
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	a, b, c := run(1), run(1), run(2)
	if a != b {
		t.Fatalf("same seed, other faults:\n%s\n%s", a, b)
	}
	if a == c {
		t.Fatalf("another seed, same faults: %s", a)
	}
	if n := strings.Count(a, "x"); n < 4 || n > 20 {
		t.Fatalf("%d errors in 40 calls at rate 0.3: %s", n, a)
	}
}

func TestFlakyWindow(t *testing.T) {
	h, reg, clock := pipeline(t, `{"rules":[{"collection":"demo","tool":"get_*","flaky":{"period":"10s","down":"3s","offset":"1s","status":502}}]}`)
	var got []toolenv.Status
	for i := 0; i < 10; i++ {
		got = append(got, call(t, h, reg, "get_book").Status)
		clock.Advance(time.Second)
	}
	// Down while (t + 1s) mod 10s < 3s: t = 0, 1 and 9.
	down := map[int]bool{0: true, 1: true, 9: true}
	for i, st := range got {
		if (st == toolenv.StatusUpstreamError) != down[i] {
			t.Fatalf("second %d: %s (all: %v)", i, st, got)
		}
	}
	if st := call(t, h, reg, "current_weather").Status; st != toolenv.StatusOK && !down[10%10] {
		t.Fatalf("a tool outside the glob failed: %s", st)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{`{"rules":[{"tool":"x"}]}`, "no fault"},
		{`{"rules":[{"latency":{"fixed":"soon"}}]}`, "not a duration"},
		{`{"rules":[{"latency":{"distribution":"pareto"}}]}`, "unknown distribution"},
		{`{"rules":[{"errors":{"rate":2}}]}`, "rate must be in [0, 1]"},
		{`{"rules":[{"errors":{"rate":0.1,"status":404}}]}`, "not a 5xx"},
		{`{"rules":[{"rate_limit":{"per_second":0}}]}`, "per_second must be positive"},
		{`{"rules":[{"flaky":{"period":"1s","down":"2s"}}]}`, "down between"},
		{`{"rules":[{"tool":"[","latency":{"fixed":"1ms"}}]}`, "bad glob"},
		{`{"rulez":[]}`, "unknown field"},
	} {
		_, err := ParseConfig([]byte(tt.cfg), "f.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestFaultsOnTheWire checks what clients see: 429 with Retry-After for
// REST, StableToolBench's "Too many requests" (its status 9) on /virtual.
func TestFaultsOnTheWire(t *testing.T) {
	metrics := server.NewMetrics()
	h, reg, _ := observedPipeline(t, `{"rules":[{"tool":"current_weather","rate_limit":{"per_second":0.5,"burst":1}}]}`, metrics)
	ts := httptest.NewServer(server.New(server.Options{Pipeline: h, Registry: reg, Metrics: metrics}))
	defer ts.Close()
	get := func() *http.Response {
		resp, err := http.Get(ts.URL + "/tools/demo/current_weather?city=Paris")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get(); r.StatusCode != 200 {
		t.Fatalf("first call: %d", r.StatusCode)
	}
	r := get()
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "2" || r.Header.Get("X-Toolenv-Fault") != "rate_limited" {
		t.Fatalf("second call: %d %v", r.StatusCode, r.Header)
	}
	resp, err := http.Post(ts.URL+"/virtual", "application/json", strings.NewReader(`{"category":"Weather","tool_name":"Skylark Weather","api_name":"current_weather","tool_input":{"city":"Paris"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if server.STBCode(body.Error) != 9 {
		t.Fatalf("/virtual: %q", body.Error)
	}
	resp, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(m), `toolenv_faults_total{collection="demo",fault="rate_limited"} 2`) {
		t.Fatalf("metrics do not count the faults:\n%s", grepLines(string(m), "toolenv_faults"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkInjector measures the injector's cost on a call it leaves
// alone (a rate limit with room, a 0% error rate).
func BenchmarkInjector(b *testing.B) {
	cfg, err := ParseConfig([]byte(`{"rules":[{"tool":"*","rate_limit":{"per_second":1e9,"burst":1e9},"errors":{"rate":0}}]}`), "bench")
	if err != nil {
		b.Fatal(err)
	}
	in, _ := New(cfg, Options{})
	h := in.Middleware()(toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK}
	}))
	call := &toolenv.Call{Tool: &toolenv.Tool{ID: "c/t", Collection: "c", Name: "t"}}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Invoke(ctx, call)
	}
}
