package structural

import (
	"context"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/toolbench"
)

// BenchmarkAllToolBench maps the 1,920 StableToolBench APIs among
// themselves (profiles, candidates, field alignment).
func BenchmarkAllToolBench(b *testing.B) {
	dir := shareddata.Require(b, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	for b.Loop() {
		m := New(c.Tools, nil, Options{})
		if _, err := m.All(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompare measures one full comparison of two tools.
func BenchmarkCompare(b *testing.B) {
	c := world(b)
	m := New(c.Tools, nil, Options{})
	for b.Loop() {
		m.Compare("world/skylark_current_weather", "world/nimbus_get_current_conditions")
	}
}
