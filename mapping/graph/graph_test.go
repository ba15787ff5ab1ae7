package graph

import (
	"context"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
)

func TestOperations(t *testing.T) {
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	m := structural.New(c.Tools, nil, structural.Options{})
	g := Operations(m.Profiles())
	got := strings.Join(g.Neighbours("world/filter_data"), " ")
	if got != "world/select_data_greater_than_equal_to world/sort_data_descending world/sort_data" {
		t.Fatalf("neighbours of filter_data = %s", got)
	}
	es := g.Edges("world/filter_data")
	if es[0].Weight != 1 || strings.Join(es[0].Shared, ",") != "identifier nam,result sourc,valu" {
		t.Fatalf("edge = %+v", es[0])
	}
	// Nimbus's two operations share only the city name, a quarter of the
	// forecast's fields: too little.
	if got := g.Neighbours("world/nimbus_get_forecast"); len(got) != 0 {
		t.Fatalf("nimbus neighbours = %v", got)
	}
	// Operations of different APIs are never neighbours.
	for _, n := range g.Neighbours("world/skylark_current_weather") {
		t.Errorf("skylark has neighbour %s", n)
	}
}

func TestClusters(t *testing.T) {
	mk := func(a, b string, s float64) *mapping.Mapping {
		return &mapping.Mapping{From: a, To: b, Score: s, Provenance: mapping.Structural}
	}
	ms := []*mapping.Mapping{
		mk("a", "b", 0.9), mk("b", "c", 0.8), // one cluster
		mk("x", "y", 0.7),
		mk("p", "q", 0.3), // below the threshold
		// a chain of six weak links with two strong pairs inside
		mk("c1", "c2", 0.95), mk("c2", "c3", 0.6), mk("c3", "c4", 0.6), mk("c4", "c5", 0.6), mk("c5", "c6", 0.95),
	}
	got := fmt.Sprint(Clusters(ms, 0.55, 3))
	want := "[[a b c] [c1 c2] [c5 c6] [x y]]"
	if got != want {
		t.Fatalf("clusters = %s, want %s", got, want)
	}
	if got := fmt.Sprint(Clusters(ms, 0.55, 10)); got != "[[c1 c2 c3 c4 c5 c6] [a b c] [x y]]" {
		t.Fatalf("clusters (max 10) = %s", got)
	}
}

// TestMapStructural: a collection and a renamed copy of it map onto each
// other tool for tool (MapBetween), every pair clusters (MapStructural),
// and the output paths are the profiles'.
func TestMapStructural(t *testing.T) {
	ctx := context.Background()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	tools := append([]*toolenv.Tool(nil), c.Tools...)
	for _, tl := range c.Tools {
		cp := *tl
		cp.Collection, cp.ID = "copy", "copy/"+tl.Name
		tools = append(tools, &cp)
	}
	set, err := MapBetween(ctx, nil, tools, "world", "copy", structural.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Mappings) < len(c.Tools)/2 {
		t.Fatalf("%d of %d tools mapped onto their copy", len(set.Mappings), len(c.Tools))
	}
	for _, m := range set.Mappings {
		if strings.TrimPrefix(m.From, "world/") != strings.TrimPrefix(m.To, "copy/") {
			t.Errorf("%s mapped onto %s", m.From, m.To)
		}
	}
	run, err := MapStructural(ctx, nil, tools, structural.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Set.Mappings) == 0 || len(run.Set.Clusters) == 0 || run.Graph.Len() == 0 {
		t.Errorf("mapped %d, clusters %d, graph %d", len(run.Set.Mappings), len(run.Set.Clusters), run.Graph.Len())
	}
	want := fmt.Sprintf("structural mappings: %d, clusters of alternatives: %d, operation graph: %d edges", len(run.Set.Mappings), len(run.Set.Clusters), run.Graph.EdgeCount())
	if !strings.HasPrefix(run.Summary(), want) {
		t.Errorf("summary %q, want it to start with %q", run.Summary(), want)
	}
	pairs := 0
	for _, m := range run.Set.Mappings {
		pairs += len(m.Inputs) + len(m.Outputs)
	}
	if got := run.Set.FieldPairs(); got != pairs || pairs == 0 {
		t.Errorf("field pairs %d, want %d (> 0)", got, pairs)
	}
	paths := run.OutputPaths()
	if paths(&toolenv.Tool{ID: "nowhere"}) != nil || len(paths(c.Tools[0])) == 0 {
		t.Errorf("output paths of %s: %v", c.Tools[0].ID, paths(c.Tools[0]))
	}
}
