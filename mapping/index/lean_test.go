package index

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestLexicalOnlyWithCallersTools builds an index without vectors and
// opens it over the caller's own tools (a server's): searches are
// lexical, hits are the caller's tool values, and a tool the caller no
// longer has is left out.
func TestLexicalOnlyWithCallersTools(t *testing.T) {
	tools := world(t)
	path := filepath.Join(t.TempDir(), "lean.db")
	rep, err := Build(context.Background(), path, tools, BuildOptions{NoVectors: true, NoDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embedder != "" || rep.Dims != 0 || !strings.Contains(rep.VectorNote, "lexical") {
		t.Fatalf("report = %+v, want no vectors and a note saying so", rep.Meta)
	}
	if _, err := Open(context.Background(), path, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "without tool documents") {
		t.Errorf("opening an index without documents on its own: %v, want an error saying why", err)
	}
	byID := map[string]*toolenv.Tool{}
	for _, tl := range tools {
		byID[tl.ID] = tl
	}
	delete(byID, "world/find_titles") // gone since the build
	resolved := 0
	ix, err := Open(context.Background(), path, OpenOptions{Tools: func(id string) *toolenv.Tool { resolved++; return byID[id] }})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if resolved != len(tools) || len(ix.Tools()) != len(tools)-1 {
		t.Fatalf("resolved %d IDs, index holds %d tools; want %d and %d", resolved, len(ix.Tools()), len(tools), len(tools)-1)
	}
	if ix.Tool("world/skylark_current_weather") != byID["world/skylark_current_weather"] {
		t.Error("the index holds a copy of a tool instead of the caller's")
	}
	res, err := ix.Search(context.Background(), "current weather in a city", 3, SearchOptions{Mode: Lexical})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != "world/skylark_current_weather" {
		t.Fatalf("lexical search: %v %+v", err, res)
	}
	res, err = ix.Search(context.Background(), "find a book by its author", 5, SearchOptions{Mode: Lexical})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.ID == "world/find_titles" {
			t.Error("a tool the caller no longer has was returned")
		}
	}
	if res, err := ix.Search(context.Background(), "current weather", 3, SearchOptions{}); err != nil || res.Mode != Lexical || len(res.Notes) == 0 {
		t.Errorf("the default (hybrid) search of an index without vectors: %v, mode %s, notes %v; want lexical, saying why", err, res.Mode, res.Notes)
	}
}
