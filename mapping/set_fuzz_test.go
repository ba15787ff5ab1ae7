package mapping

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadSet reads any file as a mappings file: no panic; a set it
// returns is valid, and written and read again it holds the same
// mappings.
func FuzzReadSet(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "collections": ["a", "b"], "mappings": [{"from": "a/x", "to": "b/y", "score": 0.9, "provenance": "llm",
		  "inputs": [{"from": "q", "to": "query", "transform": "string"}], "outputs": [{"from": "r", "to": "s"}]}], "clusters": [["a/x", "b/y"]]}`,
		`{"version": 1, "mappings": [{"from": "a/x", "to": "a/x", "score": 2}]}`, `{"version": 9, "mappings": []}`,
		`{"mappings": [null]}`, `{"version": 1, "mappings": [{"from": "", "to": "b/y"}]}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSet(path)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("read an invalid set: %v", err)
		}
		out := filepath.Join(dir, "out.json")
		if err := WriteSet(out, s); err != nil {
			t.Fatalf("a set that was read does not write: %v", err)
		}
		back, err := ReadSet(out)
		if err != nil {
			t.Fatalf("a set written does not read back: %v", err)
		}
		if len(back.Mappings) != len(s.Mappings) {
			t.Fatalf("%d mappings, %d after a round trip", len(s.Mappings), len(back.Mappings))
		}
		for i, m := range s.Mappings {
			if b := back.Mappings[i]; b.From != m.From || b.To != m.To || len(b.Inputs) != len(m.Inputs) {
				t.Fatalf("mapping %d changed in a round trip: %+v became %+v", i, m, b)
			}
		}
	})
}
