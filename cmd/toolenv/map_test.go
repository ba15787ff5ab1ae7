package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/probe"
)

const worldDir = "../../mapping/testdata/world"

func TestMapIndexSearchMatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix := filepath.Join(dir, "map.db")
	code, out, errs := run(t, ctx, "map", "index", "--collection", worldDir, "--store", ":memory:", "--index", ix, "--mappings-out", filepath.Join(dir, "m.json"))
	if code != 0 || !strings.Contains(out, "tools: 11") || !strings.Contains(out, "hash-v1-512") {
		t.Fatalf("index: code %d\n%s\n%s", code, out, errs)
	}
	set, err := mapping.ReadSet(filepath.Join(dir, "m.json"))
	if err != nil || set.Between("world/search_books", "world/find_titles") == nil {
		t.Fatalf("mappings: %v", err)
	}
	code, out, errs = run(t, ctx, "map", "search", "search books by author", "-k", "2", "--index", ix, "--json")
	if code != 0 {
		t.Fatalf("search: %d %s", code, errs)
	}
	var res struct {
		Mode string
		Hits []struct {
			ID           string
			Alternatives []struct{ ID string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	// The offline embedder makes the default lexical (hybrid needs a real model).
	if res.Mode != "lexical" || len(res.Hits) != 2 || len(res.Hits[0].Alternatives) == 0 {
		t.Fatalf("search result = %+v", res)
	}
	// The table form names each hit with its alternatives.
	if code, out, _ = run(t, ctx, "map", "search", "current weather", "--index", ix, "-k", "1"); code != 0 || !strings.Contains(out, "world/") {
		t.Fatalf("table: %d %s", code, out)
	}
	// Bad input: a missing index is "not found" (3), a bad mode a usage error (2).
	if code, _, errs = run(t, ctx, "map", "search", "x", "--index", filepath.Join(dir, "none.db")); code != 3 || !strings.Contains(errs, "toolenv map index") {
		t.Fatalf("missing index: %d %s", code, errs)
	}
	if code, _, _ = run(t, ctx, "map", "search", "x", "--index", ix, "--mode", "psychic"); code != 2 {
		t.Fatalf("bad mode: %d", code)
	}
	code, out, errs = run(t, ctx, "map", "match", "--collection", worldDir, "--store", ":memory:", "--out", filepath.Join(dir, "match.json"))
	if code != 0 || !strings.Contains(out, "11 tools") {
		t.Fatalf("match: %d %s %s", code, out, errs)
	}
}

func TestMapProbe(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix := filepath.Join(dir, "map.db")
	if code, _, errs := run(t, ctx, "map", "index", "--collection", worldDir, "--store", ":memory:", "--index", ix); code != 0 {
		t.Fatal(errs)
	}
	queries := filepath.Join(dir, "q.txt")
	if err := os.WriteFile(queries, []byte("find a book by its title\nconvert euros to dollars\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := `{"mappings":[{"from":"world/search_books","to":"world/find_titles","score":0.9,"inputs":[{"from":"q","to":"searchTerm"}],"reasoning":"same catalogue search"}]}`
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: answer}))
	defer srv.Close()
	out := filepath.Join(dir, "probe.json")
	store := filepath.Join(dir, "records.db")
	code, stdout, errs := run(t, ctx, "map", "probe", "--index", ix, "--queries", queries, "--llm-url", srv.URL(), "--model", "m", "-k", "4", "--out", out, "--record", "--store", store)
	if code != 0 || !strings.Contains(stdout, "queries: 2") || !strings.Contains(stdout, "after self-reflection") {
		t.Fatalf("probe: %d\n%s\n%s", code, stdout, errs)
	}
	f, err := probe.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Queries) != 2 || len(f.Tools) < 4 || f.Queries[0].Calls != 2 {
		t.Fatalf("probe file: %d queries, %d tools, %d calls", len(f.Queries), len(f.Tools), f.Queries[0].Calls)
	}
	// Replayed from the records with no endpoint, the run is the same.
	out2 := filepath.Join(dir, "probe2.json")
	code, _, errs = run(t, ctx, "map", "probe", "--index", ix, "--queries", queries, "--model", "m", "-k", "4", "--out", out2, "--replay", "--store", store)
	if code != 0 {
		t.Fatalf("replay: %d %s", code, errs)
	}
	f2, err := probe.ReadFile(out2)
	if err != nil || len(f2.Set().Mappings) != len(f.Set().Mappings) {
		t.Fatalf("replayed set differs: %v", err)
	}
	if code, _, _ = run(t, ctx, "map", "probe", "--index", ix, "--queries", queries, "--out", out2); code != 2 {
		t.Fatalf("no model: %d", code)
	}
}

func TestMapEvalDriftRepairAndReview(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v2 := filepath.Join(dir, "world-v2")
	if code, _, errs := run(t, ctx, "drift", "--in", worldDir, "--out", v2, "--seed", "1"); code != 0 {
		t.Fatalf("drift: %s", errs)
	}
	code, out, errs := run(t, ctx, "map", "eval", "drift", "--collection", v2, "--out", filepath.Join(dir, "eval"))
	if code != 0 || !strings.Contains(out, "| world | v1→v2 | 11 |") {
		t.Fatalf("eval drift: %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "eval", "drift-eval.json")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, ctx, "map", "eval", "repair", "--collection", v2)
	if code != 0 || !strings.Contains(out, "strict + repair adapter") {
		t.Fatalf("eval repair: %d\n%s\n%s", code, out, errs)
	}
	// The repaired run completes more of the old calls than the strict one.
	var without, with int
	for _, line := range strings.Split(out, "\n") {
		var n int
		if strings.HasPrefix(line, "| oracle | strict, no repair |") {
			fmt.Sscanf(strings.Split(line, "|")[4], " %d", &n)
			without = n
		}
		if strings.HasPrefix(line, "| oracle | strict + repair adapter |") {
			fmt.Sscanf(strings.Split(line, "|")[4], " %d", &n)
			with = n
		}
	}
	if with <= without {
		t.Fatalf("repair: %d without, %d with\n%s", without, with, out)
	}
	// Bad input: a folder that is not drifted.
	if code, _, _ := run(t, ctx, "map", "eval", "repair", "--collection", worldDir); code != 2 {
		t.Fatalf("undrifted: %d", code)
	}
}

func TestMapReviewExport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := &probe.File{Version: probe.FileVersion, Tools: map[string]*toolenv.Tool{}, Queries: []*probe.Result{{Query: probe.Query{ID: "q", Text: "x"}}}}
	path := filepath.Join(dir, "probe.json")
	if err := probe.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, ctx, "map", "review", "--probe", path, "--export", filepath.Join(dir, "r.json"), "--export-set", filepath.Join(dir, "s.json"))
	if code != 0 || !strings.Contains(out, "0 annotations") {
		t.Fatalf("review export: %d %s %s", code, out, errs)
	}
	if _, err := mapping.ReadSet(filepath.Join(dir, "s.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, ctx, "map", "review", "--probe", filepath.Join(dir, "none.json")); code != 2 {
		t.Fatalf("missing probe file: %d", code)
	}
}
