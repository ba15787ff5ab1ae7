package drift_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// TestDriftPreservesMeaningToolBench is the proof on every StableToolBench
// API (the four solvable test groups): one valid call per API is answered
// under v1 and its answer recorded in the cache (the offline
// synthesizer's answer, stored as a recorded cache entry); then the
// collection is drifted to v2 and v3, and the call translated through the
// manifest must be answered from that very entry — the cache key is found
// through the translation, no backend runs — with the recorded body in the
// new version's format. A sample of the original calls must be rejected in
// strict mode.
func TestDriftPreservesMeaningToolBench(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction")
	ctx := context.Background()
	src, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c1 := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	c1.Version = "v1"
	tasks := src.Tasks(c1)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "cache.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	synth := simulate.NewSynthesizer(simulate.SynthOptions{})

	// Record one answer per API under v1.
	calls := oneCallPerAPI(t, c1)
	recorded := map[string]json.RawMessage{}
	for _, c := range calls {
		res := synth.Invoke(ctx, &toolenv.Call{Tool: c1.Tool(c.Name), Collection: c1, Args: c.Args})
		if !res.OK() {
			t.Fatalf("%s: synthesizer: %s", c.Name, res.Error)
		}
		canon := canon(t, c.Args)
		if _, err := st.Put(ctx, &store.Entry{Tool: toolenv.ToolID(c1.Name, c.Name), Args: canon, Status: toolenv.StatusOK, Body: res.Body, Origin: "recorded"}); err != nil {
			t.Fatal(err)
		}
		recorded[c.Name] = res.Body
	}

	out := t.TempDir()
	lin := drift.NewLineage(c1)
	for i, seed := range []uint64{31, 32} {
		opts := drift.Options{Seed: seed, Tasks: tasks}
		if i == 0 {
			opts.Rates = highRates
		}
		d, err := drift.Drift(lin, opts)
		if err != nil {
			t.Fatal(err)
		}
		vdir := filepath.Join(out, d.Step.To)
		if err := drift.Write(vdir, d, drift.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		c, err := toolenv.ReadCollection(vdir)
		if err != nil {
			t.Fatal(err)
		}
		l, err := drift.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		reg := invoke.NewRegistry()
		if err := reg.Add(c, synth); err != nil {
			t.Fatal(err)
		}
		enf := drift.NewEnforcer(drift.EnforcerOptions{Cache: st}, l)
		h := invoke.New(reg, invoke.Options{Cache: st, BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
		changed, hits := 0, 0
		for _, call := range calls {
			name, args, err := l.Manifest.Forward("v1", call.Name, call.Args)
			if err != nil {
				t.Fatal(err)
			}
			if name != call.Name || canon(t, args) != canon(t, call.Args) {
				changed++
			}
			res := h.Invoke(ctx, &toolenv.Call{Tool: c.Tool(name), Collection: c, Args: args, Frontend: "go"})
			want := l.Manifest.ForwardBody(call.Name, recorded[call.Name])
			switch {
			case !res.OK():
				t.Errorf("%s %s %v: %s: %s", d.Step.To, name, args, res.Status, res.Error)
			case res.Source != toolenv.SourceCache:
				t.Errorf("%s %s %v (v1: %s %v) missed the cache: answered by %s", d.Step.To, name, args, call.Name, call.Args, res.Source)
			case string(res.Body) != string(want):
				t.Errorf("%s %s: body %s, want the recorded %s", d.Step.To, name, res.Body, want)
			default:
				hits++
			}
		}
		t.Logf("StableToolBench %s: %d APIs, %d tools changed (%s); %d of %d translated calls differ from v1; %d/%d answered from the v1 cache entry",
			d.Step.To, len(calls), len(d.Step.Tools), changeCounts(d.Step), changed, len(calls), hits, len(calls))
		lin = l
	}
	rejected, sampled := rejectOldToolBenchCalls(t, lin, calls, synth, 200)
	t.Logf("StableToolBench %s strict: %d of %d sampled v1 calls that drifted detectably were rejected", lin.Manifest.Version, rejected, sampled)
}

// oneCallPerAPI makes a call per API that is valid for its v1 schema even
// when checked strictly: every required parameter, and about half the
// optional ones, with the documented example value made to fit the
// declared type (or a plain value of that type).
func oneCallPerAPI(t *testing.T, c *toolenv.Collection) []toolenv.GoldCall {
	t.Helper()
	var v validate.Validator
	rng := rand.New(rand.NewPCG(5, 5))
	var out []toolenv.GoldCall
	for _, tool := range c.Tools {
		args := map[string]any{}
		for _, n := range tool.Input.Names() {
			if !tool.Input.IsRequired(n) && rng.IntN(2) == 0 {
				continue
			}
			args[n] = exampleValue(tool.Input.Properties[n])
		}
		if o := v.Args(tool.Input, args, false); len(o.Problems) > 0 {
			t.Fatalf("%s: generated call %v is invalid: %v", tool.Name, args, o.Problems)
		}
		out = append(out, toolenv.GoldCall{Name: tool.Name, Args: args})
	}
	return out
}

func exampleValue(s *toolenv.Schema) any {
	var ex any
	if raw, ok := s.Extra["example_value"]; ok {
		_ = toolenv.DecodeJSON(raw, &ex)
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	str := fmt.Sprint(ex)
	switch s.Type {
	case "integer":
		if n, err := strconv.ParseInt(str, 10, 64); err == nil {
			return json.Number(strconv.FormatInt(n, 10))
		}
		return json.Number("1")
	case "number":
		if _, err := strconv.ParseFloat(str, 64); err == nil {
			return json.Number(str)
		}
		return json.Number("1.5")
	case "boolean":
		if b, err := strconv.ParseBool(str); err == nil {
			return b
		}
		return true
	}
	if ex == nil || str == "" {
		return "example"
	}
	return str
}

// rejectOldToolBenchCalls sends a seeded sample of the v1 calls whose
// translation changes them (other than by a flipped default) to the strict
// pipeline of the chain's last version.
func rejectOldToolBenchCalls(t *testing.T, l *drift.Lineage, calls []toolenv.GoldCall, backend toolenv.Handler, n int) (rejected, sampled int) {
	t.Helper()
	c := l.Current
	reg := invoke.NewRegistry()
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	enf := drift.NewEnforcer(drift.EnforcerOptions{Mode: drift.ModeStrict}, l)
	h := invoke.New(reg, invoke.Options{BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
	var cands []toolenv.GoldCall
	for _, g := range calls {
		name, args, _ := l.Manifest.Forward(l.Manifest.BaseVersion, g.Name, g.Args)
		if name != g.Name || canon(t, withoutFlippedDefaults(l.Manifest, g, args)) != canon(t, g.Args) {
			cands = append(cands, g)
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	if len(cands) > n {
		cands = cands[:n]
	}
	for _, g := range cands {
		tool := c.Tool(g.Name)
		if tool == nil {
			t.Errorf("old tool %s does not resolve (no stub left?)", g.Name)
			continue
		}
		res := h.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: c, Args: g.Args, Frontend: "go"})
		sampled++
		if res.Status == toolenv.StatusInvalidArguments || res.Status == toolenv.StatusGone {
			rejected++
		} else {
			t.Errorf("old call %s %v was not rejected in strict mode: %s", g.Name, g.Args, res.Status)
		}
	}
	return rejected, sampled
}
