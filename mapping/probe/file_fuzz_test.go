package probe

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadFile reads any file as a probe file: no panic; every tool of a
// file it returns has an ID and an input schema, and its set of proposed
// mappings can be built.
func FuzzReadFile(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "model": "m", "created": "2026-01-02T03:04:05Z", "tools": {"a/x": {"name": "x", "input": {"type": "object"}}, "b/y": {"name": "y"}},
		  "queries": [{"query": {"id": "q1", "text": "t"}, "candidates": ["a/x", "b/y"], "initial": [{"from": "a/x", "to": "b/y", "score": 0.5}]}]}`,
		`{"version": 1, "tools": {"a/x": null}}`, `{"version": 2}`, `{"version": 1, "queries": [null, {}]}`, `{"version": 1, "created": "yesterday"}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "probe.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pf, err := ReadFile(path)
		if err != nil {
			return
		}
		for id, tool := range pf.Tools {
			if tool.ID == "" || tool.Input == nil {
				t.Fatalf("tool %q read without an ID or input schema: %+v", id, tool)
			}
		}
		pf.Set()
	})
}

// FuzzLoadQueries reads any file as queries, in each of the three forms
// its name selects (.jsonl tasks, a .json query file, plain text): no
// panic, and every query it returns has an ID.
func FuzzLoadQueries(f *testing.F) {
	f.Add([]byte(`{"id": "t1", "query": "find a book"}`+"\n"+`{"id": "t2", "query": "convert 3 EUR"}`), uint8(0))
	f.Add([]byte(`[{"query": "q", "query_id": 3, "api_list": [{"category_name": "Data", "tool_name": "T", "api_name": "a"}]}]`), uint8(1))
	f.Add([]byte("first query\n\n  second query  \n"), uint8(2))
	f.Add([]byte(`[{"query_id": null}]`), uint8(1))
	f.Add([]byte("\xff\xfe\n{"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		name := []string{"q.jsonl", "G1_instruction.json", "q.txt"}[kind%3]
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		qs, err := LoadQueries(path)
		if err != nil {
			return
		}
		for i, q := range qs {
			if q.ID == "" {
				t.Fatalf("query %d has no ID: %+v", i, q)
			}
		}
	})
}
