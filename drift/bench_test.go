package drift_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

func stbLineage(b *testing.B) (*drift.Lineage, []*toolenv.Task) {
	b.Helper()
	src, err := toolbench.Load(shareddata.Require(b, "stabletoolbench", "solvable_queries", "test_instruction"))
	if err != nil {
		b.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	c.Version = "v1"
	return drift.NewLineage(c), src.Tasks(c)
}

// BenchmarkDriftToolBench drifts the 1,920 StableToolBench APIs (plan,
// replay, task translation), without writing.
func BenchmarkDriftToolBench(b *testing.B) {
	l, tasks := stbLineage(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := drift.Drift(l, drift.Options{Seed: uint64(i), Tasks: tasks}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteAndOpenToolBench writes a drifted ToolBench collection
// (with the oasdiff report) and opens it again (manifest replayed and
// verified), as drift and serve do.
func BenchmarkWriteAndOpenToolBench(b *testing.B) {
	l, tasks := stbLineage(b)
	d, err := drift.Drift(l, drift.Options{Seed: 1, Tasks: tasks})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, "v2")
		if err := drift.Write(out, d, drift.WriteOptions{Force: true}); err != nil {
			b.Fatal(err)
		}
		c, err := toolenv.ReadCollection(out)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := drift.Open(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall measures one call answered from the cache: through the
// plain pipeline of the original collection, and through the enforcing
// pipeline of its drifted version (a current call, and an old call in
// compat mode).
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	l, tasks := demoLineage(b)
	d, err := drift.Drift(l, drift.Options{Seed: 4, Tasks: tasks, Operators: []string{"rename", "type", "errors"}, Rates: map[string]float64{"rename": 1, "type": 1}})
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "v2")
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	c2, _ := toolenv.ReadCollection(dir)
	l2, err := drift.Open(c2)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := store.Open(ctx, ":memory:", store.Options{})
	defer st.Close()
	synth := simulate.NewSynthesizer(simulate.SynthOptions{})
	old := map[string]any{"city": "Paris", "units": "metric"}
	canon, _ := toolenv.Canonical(old)
	st.Put(ctx, &store.Entry{Tool: "demo/current_weather", Args: string(canon), Status: toolenv.StatusOK, Body: []byte(`{"temperature":14.5}`), Origin: "simulator"})
	name, nargs, _ := l2.Manifest.Forward("v1", "current_weather", old)

	bench := func(b *testing.B, h toolenv.Handler, c *toolenv.Collection, tool string, args map[string]any) {
		t := c.Tool(tool)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res := h.Invoke(ctx, &toolenv.Call{Tool: t, Collection: c, Args: args})
			if res.Source != toolenv.SourceCache {
				b.Fatalf("%s: %s %s", res.Status, res.Source, res.Error)
			}
		}
	}
	b.Run("original", func(b *testing.B) {
		c1 := l.Current
		reg := invoke.NewRegistry()
		reg.Add(c1, synth)
		bench(b, invoke.New(reg, invoke.Options{Cache: st}), c1, "current_weather", old)
	})
	for _, mode := range []string{drift.ModeStrict, drift.ModeCompat} {
		reg := invoke.NewRegistry()
		reg.Add(c2, synth)
		enf := drift.NewEnforcer(drift.EnforcerOptions{Mode: mode, Cache: st}, l2)
		h := invoke.New(reg, invoke.Options{Cache: st, BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
		b.Run("drifted-"+mode+"-current-call", func(b *testing.B) { bench(b, h, c2, name, nargs) })
		if mode == drift.ModeCompat {
			b.Run("drifted-compat-old-call", func(b *testing.B) { bench(b, h, c2, "current_weather", old) })
		}
	}
}

// BenchmarkCloneToolBenchSchemas copies the input and output schemas of
// the 1,920 StableToolBench APIs, as each replayed drift step does for
// every tool: Schema.Clone against the JSON round trip it replaced.
func BenchmarkCloneToolBenchSchemas(b *testing.B) {
	l, _ := stbLineage(b)
	var schemas []*toolenv.Schema
	for _, t := range l.Base.Tools {
		schemas = append(schemas, t.Input, t.Output)
	}
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				s.Clone()
			}
		}
	})
	b.Run("json-round-trip", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if s == nil {
					continue
				}
				raw, err := json.Marshal(s)
				if err != nil {
					b.Fatal(err)
				}
				var c toolenv.Schema
				if err := c.UnmarshalJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkOpenToolBench opens a drifted ToolBench collection (manifest
// replayed and verified against tools.json), as every command reading a
// drifted collection does.
func BenchmarkOpenToolBench(b *testing.B) {
	l, tasks := stbLineage(b)
	d, err := drift.Drift(l, drift.Options{Seed: 1, Tasks: tasks})
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "v2")
	if err := drift.Write(out, d, drift.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	c, err := toolenv.ReadCollection(out)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := drift.Open(c); err != nil {
			b.Fatal(err)
		}
	}
}
