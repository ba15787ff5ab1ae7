package sequence

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/probe"
)

func setup(t *testing.T) (*toolenv.Collection, probe.IndexRetriever) {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "map.db")
	if _, err := index.Build(context.Background(), path, c.Tools, index.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(context.Background(), path, index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return c, probe.IndexRetriever{Index: ix}
}

func task(id, q string, gold ...string) *toolenv.Task {
	rel := make([]any, len(gold))
	for i, g := range gold {
		rel[i] = g
	}
	return &toolenv.Task{ID: id, Query: q, Collection: "world", Tools: gold, Meta: map[string]any{"relevant_apis": rel}}
}

func TestSequenceWithMappingReflection(t *testing.T) {
	c, retr := setup(t)
	pool := []*toolenv.Task{
		task("p1", "what is the weather in Rome", "skylark_current_weather"),
		task("p2", "convert 10 euros to yen", "convert_currency"),
	}
	target := task("t1", "search the book catalogue for dune by frank herbert and give the ISBN", "find_titles")
	set := &mapping.Set{Version: mapping.SetVersion}
	set.Add(&mapping.Mapping{From: "world/search_books", To: "world/find_titles", Score: 0.8, Provenance: mapping.Structural, Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}}})
	// The model first picks search_books (plus an API that was not
	// offered), then, told that find_titles maps to it, answers
	// find_titles.
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Content: `[["Open Shelf", "Search books"], ["Nowhere", "Teleport"]]`},
		llmtest.Reply{Content: "[['Bookworm', 'Find titles']]\n\nI refined my answer: the mapping says Find titles can replace Search books and its name matches the utterance."},
	))
	defer srv.Close()
	s := New(llm.New(srv.URL(), llm.Options{MaxRetries: -1}), retr, pool, c.Tool, Options{Model: "m", K: 5, Mappings: set, Seed: 1})
	o := s.Run(context.Background(), target)
	if o.Error != "" {
		t.Fatal(o.Error)
	}
	if fmt.Sprint(o.Initial) != "[search_books]" || fmt.Sprint(o.Unknown) != "[Nowhere/Teleport]" {
		t.Fatalf("initial = %v, unknown = %v", o.Initial, o.Unknown)
	}
	if fmt.Sprint(o.Reflected) != "[find_titles]" || o.SetReflected.F1 != 1 || o.Set.F1 != 0 {
		t.Fatalf("reflected = %v, set %+v → %+v", o.Reflected, o.Set, o.SetReflected)
	}
	if !strings.Contains(o.MappingInfo, "There are 1 API mappings") || !strings.Contains(o.MappingInfo, `["Bookworm","Find titles"]`) {
		t.Fatalf("mapping info = %s", o.MappingInfo)
	}
	reqs := srv.Requests()
	first, second := reqs[0].Messages[0].Content, reqs[1].Messages[0].Content
	for _, want := range []string{"EXAMPLE 1", "EXAMPLE 2", "User utterance: search the book catalogue", `api_name: "Find titles"`, "OUTPUT:"} {
		if !strings.Contains(first, want) {
			t.Errorf("few-shot prompt lacks %q", want)
		}
	}
	if !strings.Contains(second, `Your initial answer was:`+"\n"+`[["Open Shelf","Search books"]]`) || !strings.Contains(second, o.MappingInfo) {
		t.Errorf("reflection prompt = %s", second)
	}
}

func TestParseSequence(t *testing.T) {
	tests := []struct{ text, want string }{
		{`[["a", "b"], ["c", "d"]]`, "[[a b] [c d]]"},
		{"THOUGHT: I need [1] step.\nOUTPUT:\n[['a', 'b']]", "[[a b]]"},
		{`["x", "y"]`, "[[ x] [ y]]"},
		{`[{"tool_name": "a", "api_name": "b"}]`, "[[a b]]"},
		{"no list here", "[]"},
		{"[[unclosed", "[]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(parseSequence(tt.text)); got != tt.want {
			t.Errorf("parseSequence(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func FuzzParseSequence(f *testing.F) {
	for _, s := range []string{`[["a","b"]]`, "[[", "]]][[", `[{'tool_name': 1}]`, "OUTPUT: [\"x\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range parseSequence(s) {
			if p[1] == "" {
				t.Fatalf("empty api name from %q", s)
			}
		}
	})
}

func TestBaselineAndSummary(t *testing.T) {
	_, retr := setup(t)
	tasks := []*toolenv.Task{
		task("a", "current weather conditions in a city", "skylark_current_weather", "nimbus_get_current_conditions"),
		task("b", "sort the rows of a table", "sort_data"),
	}
	outs := Baseline(context.Background(), retr, tasks, 3)
	s := Summarise(outs)
	if s.Tasks != 2 || s.Errors != 0 || s.RetrievalRecall != 1 {
		t.Fatalf("summary = %+v (%+v)", s, outs[0])
	}
	if s.Set.F1 <= 0.5 {
		t.Fatalf("baseline set F1 = %v", s.Set.F1)
	}
}
