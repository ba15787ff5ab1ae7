package index

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/embed"
)

func world(t testing.TB) []*toolenv.Tool {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	return c.Tools
}

func build(t testing.TB, tools []*toolenv.Tool, opts BuildOptions) (*Index, *Report) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "map.db")
	rep, err := Build(context.Background(), path, tools, opts)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), path, OpenOptions{Embedder: opts.Embedder})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, rep
}

// hashServer is an OpenAI-compatible embeddings endpoint whose model is
// the offline hash embedder, so that remote vectors are meaningful.
func hashServer(t *testing.T, down bool) *llmtest.Server {
	t.Helper()
	var srv *llmtest.Server
	srv = llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
		if down {
			return llmtest.Reply{Status: 503}
		}
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(srv.RawRequests()[n], &req)
		vs, _ := embed.Hash{Dims: 64}.Embed(context.Background(), req.Input)
		return llmtest.Reply{Embeddings: vs}
	})
	t.Cleanup(srv.Close)
	return srv
}

func remote(srv *llmtest.Server) embed.Remote {
	return embed.Remote{Client: llm.New(srv.URL(), llm.Options{MaxRetries: -1}), Model: "test-embed"}
}

func TestSearchModes(t *testing.T) {
	ix, rep := build(t, world(t), BuildOptions{})
	if rep.Embedder != "hash-v1-512" || rep.Dims != 512 || rep.Tools != 11 || rep.VectorNote != "" {
		t.Fatalf("report = %+v", rep.Meta)
	}
	tests := []struct {
		query string
		mode  Mode
		want  string // expected first hit ("a|b": either)
	}{
		{"current weather in a city", Hybrid, "world/skylark_current_weather"},
		{"find a book by its author", Lexical, "world/find_titles"},
		{"convert euros to dollars", Vector, "world/convert_currency|world/exchange_money"},
		{"fetch the forecast for the next days", Hybrid, "world/nimbus_get_forecast"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := ix.Search(context.Background(), tt.query, 3, SearchOptions{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != tt.mode || len(res.Notes) != 0 {
				t.Fatalf("mode %s, notes %v", res.Mode, res.Notes)
			}
			if len(res.Hits) == 0 || !strings.Contains("|"+tt.want+"|", "|"+res.Hits[0].ID+"|") {
				t.Fatalf("hits = %+v", res.Hits)
			}
			for i := 1; i < len(res.Hits); i++ {
				if res.Hits[i].Score > res.Hits[i-1].Score || res.Hits[i].Rank != i+1 {
					t.Fatalf("hits out of order: %+v", res.Hits)
				}
			}
		})
	}
}

func TestSearchReturnsAlternatives(t *testing.T) {
	set := &mapping.Set{Version: mapping.SetVersion}
	set.Add(&mapping.Mapping{From: "world/search_books", To: "world/find_titles", Score: 0.8, Provenance: mapping.Structural,
		Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}}})
	set.Add(&mapping.Mapping{From: "world/search_books", To: "world/filter_data", Score: 0.3, Provenance: mapping.Structural})
	set.Clusters = [][]string{{"world/find_titles", "world/search_books", "world/sort_data"}}
	ix, _ := build(t, world(t), BuildOptions{Mappings: set})
	res, err := ix.Search(context.Background(), "search books", 1, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hits[0]
	if h.ID != "world/search_books" || len(h.Alternatives) != 2 {
		t.Fatalf("hit = %+v", h)
	}
	if a := h.Alternatives[0]; a.ID != "world/find_titles" || a.Score != 0.8 || a.Fields != 1 {
		t.Fatalf("alternative = %+v", a)
	}
	if a := h.Alternatives[1]; a.ID != "world/sort_data" || a.Provenance != "cluster" {
		t.Fatalf("cluster member = %+v", a)
	}
	if ix.Mappings().Between("world/find_titles", "world/search_books") == nil {
		t.Fatal("stored mappings not readable back")
	}
}

func TestRemoteEmbeddings(t *testing.T) {
	srv := hashServer(t, false)
	ix, rep := build(t, world(t), BuildOptions{Embedder: remote(srv)})
	if rep.Embedder != "openai:test-embed" || rep.Dims != 64 {
		t.Fatalf("report = %+v", rep.Meta)
	}
	res, err := ix.Search(context.Background(), "exchange money between currencies", 2, SearchOptions{Mode: Vector})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hits[0].ID != "world/exchange_money" {
		t.Fatalf("hits = %+v", res.Hits)
	}
}

func TestFallbacks(t *testing.T) {
	ctx := context.Background()
	t.Run("endpoint down at build", func(t *testing.T) {
		ix, rep := build(t, world(t), BuildOptions{Embedder: remote(hashServer(t, true))})
		if rep.Embedder != "" || !strings.Contains(rep.VectorNote, "503") {
			t.Fatalf("report = %+v", rep.Meta)
		}
		res, err := ix.Search(ctx, "weather", 2, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != Lexical || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "lexical results only") || len(res.Hits) == 0 {
			t.Fatalf("res = %+v", res)
		}
		if _, err := ix.Search(ctx, "weather", 2, SearchOptions{Mode: Vector}); err == nil {
			t.Fatal("vector-only search of an index without vectors succeeded")
		}
	})
	t.Run("endpoint down at query", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "map.db")
		if _, err := Build(ctx, path, world(t), BuildOptions{Embedder: remote(hashServer(t, false))}); err != nil {
			t.Fatal(err)
		}
		ix, err := Open(ctx, path, OpenOptions{Embedder: remote(hashServer(t, true))})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		res, err := ix.Search(ctx, "weather", 2, SearchOptions{})
		if err != nil || res.Mode != Lexical || !strings.Contains(strings.Join(res.Notes, " "), "embeddings endpoint failed") {
			t.Fatalf("res = %+v, err = %v", res, err)
		}
	})
	t.Run("another model", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "map.db")
		if _, err := Build(ctx, path, world(t), BuildOptions{}); err != nil {
			t.Fatal(err)
		}
		ix, err := Open(ctx, path, OpenOptions{Embedder: embed.Hash{Dims: 32}})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		res, err := ix.Search(ctx, "weather", 2, SearchOptions{})
		if err != nil || res.Mode != Lexical || !strings.Contains(res.Notes[0], "not comparable") {
			t.Fatalf("res = %+v, err = %v", res, err)
		}
	})
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Build(ctx, filepath.Join(dir, "x.db"), nil, BuildOptions{}); err == nil || !strings.Contains(err.Error(), "no tools") {
		t.Fatalf("empty build: %v", err)
	}
	tools := world(t)
	if _, err := Build(ctx, filepath.Join(dir, "x.db"), append(tools, tools[0]), BuildOptions{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate build: %v", err)
	}
	if _, err := Open(ctx, filepath.Join(dir, "none.db"), OpenOptions{}); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("missing index: %v", err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := toolenv.WriteFileAtomic(garbage, []byte("not sqlite at all")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, garbage, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Fatalf("garbage index: %v", err)
	}
	ix, _ := build(t, world(t), BuildOptions{})
	for _, q := range []string{"", "  ?! ", `"`, "AND OR NOT", "*", "a:b", "((("} {
		res, err := ix.Search(ctx, q, 3, SearchOptions{Mode: Lexical})
		if err != nil && !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("query %q: %v", q, err)
		}
		_ = res
	}
	if _, err := ix.Search(ctx, "weather", 3, SearchOptions{Collections: []string{"nope"}}); err == nil {
		t.Fatal("unknown collection accepted")
	}
}

func FuzzSearch(f *testing.F) {
	ix, _ := build(f, world(f), BuildOptions{})
	for _, s := range []string{"weather", `"quoted" OR x`, "NEAR(a b)", "col:val", "^start", "ünï", "-x", "{a b}: c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		res, err := ix.Search(context.Background(), q, 5, SearchOptions{})
		if err != nil {
			if !errors.Is(err, ErrEmptyQuery) {
				t.Fatalf("query %q: %v", q, err)
			}
			return
		}
		if len(res.Hits) > 5 {
			t.Fatalf("%d hits", len(res.Hits))
		}
	})
}
