package failover

import (
	"context"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/faults"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
)

// world serves the test collection with the offline synthesizer behind
// the standard pipeline, faults injected by the faults package, and the
// failover in front.
func world(t *testing.T, rules []faults.Rule, opts Options) (toolenv.Handler, *invoke.Registry, *Failover) {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	b, err := virtual.Build(virtual.Options{Tools: c.Tools})
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	ms, err := structural.New(c.Tools, nil, structural.Options{}).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if opts.Mappings == nil {
		opts.Mappings = &mapping.Set{Version: mapping.SetVersion, Mappings: ms}
	}
	f := New(reg, opts)
	inj, err := faults.New(&faults.Config{Seed: 1, Rules: rules}, faults.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := invoke.New(reg, invoke.Options{BeforeValidate: []toolenv.Middleware{f.Middleware(), inj.Middleware()}})
	return p, reg, f
}

func call(t *testing.T, reg *invoke.Registry, name, args string) *toolenv.Call {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	c, res := reg.NewCall("world", name, m)
	if res != nil {
		t.Fatalf("resolve %s: %+v", name, res)
	}
	return c
}

func down(tool string) faults.Rule {
	return faults.Rule{Collection: "world", Tool: tool, Errors: &faults.Errors{Rate: 1, Status: 503}}
}

func TestFailoverToAMappedAlternative(t *testing.T) {
	p, reg, f := world(t, []faults.Rule{down("skylark_current_weather")}, Options{})
	res := p.Invoke(context.Background(), call(t, reg, "skylark_current_weather", `{"city":"Oslo"}`))
	if !res.OK() {
		t.Fatalf("res = %+v", res)
	}
	if res.Meta[MetaFrom] != "world/skylark_current_weather" || res.Meta[MetaTo] != "world/nimbus_get_current_conditions" || res.Meta[MetaReason] != "unavailable" {
		t.Fatalf("meta = %v", res.Meta)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "answered by world/nimbus_get_current_conditions") || !strings.Contains(w, "city → location.city_name") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
	// The answer comes in the shape the caller expects: nimbus's fields
	// carry skylark's names.
	var body map[string]any
	if err := toolenv.DecodeJSON(res.Body, &body); err != nil {
		t.Fatalf("body %s: %v", res.Body, err)
	}
	for _, k := range []string{"temperature", "condition", "humidity"} {
		if _, ok := body[k]; !ok {
			t.Errorf("answer lacks %q: %s", k, res.Body)
		}
	}
	if _, ok := body["temp"]; ok {
		t.Errorf("answer kept nimbus's field names: %s", res.Body)
	}
	if h := f.Health().Snapshot(); len(h) != 2 || h[1].Failures != 1 || h[0].Failures != 0 {
		t.Fatalf("health = %+v", h)
	}
}

func TestNoFailover(t *testing.T) {
	tests := []struct {
		name   string
		rules  []faults.Rule
		tool   string
		args   string
		status toolenv.Status
	}{
		{"a working tool is not re-routed", nil, "skylark_current_weather", `{"city":"Oslo"}`, toolenv.StatusOK},
		{"invalid arguments are the caller's problem", nil, "skylark_current_weather", `{"town":"Oslo"}`, toolenv.StatusInvalidArguments},
		{"no alternative", []faults.Rule{down("nimbus_get_forecast")}, "nimbus_get_forecast", `{"location":{"city_name":"Oslo"},"days":2}`, toolenv.StatusUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, reg, _ := world(t, tt.rules, Options{})
			res := p.Invoke(context.Background(), call(t, reg, tt.tool, tt.args))
			if res.Status != tt.status || res.Meta[MetaTo] != "" {
				t.Fatalf("res = %+v", res)
			}
		})
	}
}

func TestAlternativeDownToo(t *testing.T) {
	p, reg, _ := world(t, []faults.Rule{down("search_books"), down("find_titles")}, Options{})
	res := p.Invoke(context.Background(), call(t, reg, "search_books", `{"q":"dune"}`))
	if res.Status != toolenv.StatusUnavailable || !strings.Contains(res.Meta[MetaTried], "world/find_titles (unavailable)") {
		t.Fatalf("res = %+v", res)
	}
}

func TestRankingByHealthAndCost(t *testing.T) {
	now := time.Unix(1000, 0)
	h := NewHealth(HealthOptions{Now: func() time.Time { return now }, Trip: 2, Cooldown: time.Minute})
	set := &mapping.Set{Version: mapping.SetVersion}
	set.Add(
		&mapping.Mapping{From: "world/search_books", To: "world/find_titles", Score: 0.8, Provenance: mapping.Structural},
		&mapping.Mapping{From: "world/search_books", To: "world/skylark_current_weather", Score: 0.8, Provenance: mapping.Structural}, // cost 2 in the fixture
		&mapping.Mapping{From: "world/search_books", To: "world/sort_data", Score: 0.5, Provenance: mapping.Human},
	)
	_, reg, f := world(t, nil, Options{Mappings: set, Health: h})
	_ = reg
	order := func() string {
		var ids []string
		for _, m := range f.Alternatives("world/search_books") {
			ids = append(ids, strings.TrimPrefix(m.To, "world/"))
		}
		return strings.Join(ids, " ")
	}
	if got := order(); got != "find_titles sort_data skylark_current_weather" {
		t.Fatalf("order = %s", got)
	}
	// find_titles fails twice: its circuit opens and it goes last.
	h.Record("world/find_titles", false, 10*time.Millisecond)
	h.Record("world/find_titles", false, 10*time.Millisecond)
	if got := order(); got != "sort_data skylark_current_weather find_titles" {
		t.Fatalf("order after failures = %s", got)
	}
	now = now.Add(2 * time.Minute)
	if h.Open("world/find_titles") {
		t.Fatal("circuit still open after the cooldown")
	}
}

func TestOpenCircuitSkipsThePrimary(t *testing.T) {
	now := time.Unix(1000, 0)
	h := NewHealth(HealthOptions{Now: func() time.Time { return now }, Trip: 1})
	p, reg, _ := world(t, nil, Options{Health: h})
	h.Record("world/search_books", false, time.Millisecond) // down a moment ago
	res := p.Invoke(context.Background(), call(t, reg, "search_books", `{"q":"dune","limit":3}`))
	if !res.OK() || res.Meta[MetaTo] != "world/find_titles" || !strings.Contains(res.Meta[MetaReason], "circuit is open") {
		t.Fatalf("res = %+v", res)
	}
}
