package toolbench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/toolbench"
)

// adversarialTree writes a ToolBench tree of n tool files built to trip a
// loader that keeps what it should copy or merges what it should not:
// names and texts with JSON escapes (which a zero-copy decoder must
// unescape into new strings) beside plain ones (which it need not), the
// same tool in two categories, categories and tools that standardize
// alike, an API documented twice in one file and again in another file,
// API names long enough that their function names collide, parameter
// names that standardize alike, defaults of every JSON kind, templates
// with whitespace and invalid ones, and a StableToolBench query file
// among the tool files.
func adversarialTree(t testing.TB, dir string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	word := func() string {
		return pick("data", "Data", "user", "get user", "get-user", "GetUser", "weather", "naïve", "天气", "a\"quote", "tab\there",
			"back\\slash", "line\nbreak", "é", "x", strings.Repeat("long_name_", 8), "page", "Page", "offset", "q", "")
	}
	text := func() string {
		switch r.IntN(5) {
		case 0:
			return ""
		case 1:
			return strings.Repeat(word()+" ", 40+r.IntN(40)) // beyond 256 characters
		default:
			return word() + " " + word() + " " + word()
		}
	}
	value := func() any {
		switch r.IntN(8) {
		case 0:
			return nil
		case 1:
			return r.IntN(1000) - 500
		case 2:
			return r.Float64()*1e6 - 5e5
		case 3:
			return r.IntN(2) == 0
		case 4:
			return []any{word(), r.IntN(9), map[string]any{"k": word()}}
		case 5:
			return map[string]any{word(): word()}
		default:
			return word()
		}
	}
	params := func() []map[string]any {
		out := []map[string]any{}
		for range r.IntN(5) {
			out = append(out, map[string]any{"name": pick("page", "Page", "page!", "offset", "q", "user id", "user_id", word()),
				"type": pick("STRING", "NUMBER", "BOOLEAN", "ENUM", "ARRAY", "OBJECT", ""), "description": text(), "default": value()})
		}
		return out
	}
	template := func() json.RawMessage {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return json.RawMessage("{\n  \"a\" : [ 1 , \"x y\" ] ,\n  \"b\\\"\" : { }\n}")
		case 2:
			return json.RawMessage(`"not an object"`)
		default:
			raw, _ := json.Marshal(map[string]any{word(): value(), "n": r.IntN(50)})
			return raw
		}
	}
	api := func() map[string]any {
		name := pick(word(), word()+" "+word(), strings.Repeat("very long api name ", 5)+word())
		return map[string]any{"name": name, "url": pick("https://h.example/"+word(), "http://x.example:8080/a%20b?q=1", "not a url", ""),
			"description": text(), "method": pick("GET", "post", "", "PATCH"),
			"required_parameters": params(), "optional_parameters": params(), "template_response": template()}
	}
	write := func(path string, v any) {
		raw, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	categories := []string{"Data", "Data ", "Sports, Games", "Sports_Games", "Weather/News", "Finance"}
	var earlier []map[string]any // APIs already written, to document again
	for i := range n {
		tool := pick("Weather API", "weather api", "Weather-API", word()+" "+word(), fmt.Sprintf("tool %d %s", i, word()))
		var list []map[string]any
		for range 1 + r.IntN(6) {
			a := api()
			if len(earlier) > 0 && r.IntN(6) == 0 {
				a = earlier[r.IntN(len(earlier))] // documented again, maybe in another tool or category
			}
			list = append(list, a)
			if r.IntN(8) == 0 {
				list = append(list, a) // twice in one file
			}
		}
		earlier = append(earlier, list...)
		write(filepath.Join(dir, categories[r.IntN(len(categories))], fmt.Sprintf("t%03d.json", i)), map[string]any{
			"tool_name": tool, "tool_description": text(), "host": pick("h.example", "", "x.p.rapidapi.com"), "api_list": list})
	}
	var queries []map[string]any
	for q := range 3 {
		var list []map[string]any
		for range 2 {
			a := api()
			a["category_name"], a["tool_name"], a["api_name"], a["api_description"] = categories[r.IntN(len(categories))], pick("Weather API", word()), a["name"], a["description"]
			list = append(list, a)
		}
		queries = append(queries, map[string]any{"query": text(), "query_id": q + 1, "api_list": list,
			"relevant APIs": [][]string{{list[0]["tool_name"].(string), list[0]["api_name"].(string)}}})
	}
	write(filepath.Join(dir, "queries", "G1_instruction.json"), queries)
}

// TestLoadCollectionEqualsLoadThenNewCollection: LoadCollection, which
// decodes tool files without copying and builds each file's tools while
// its bytes are in the read buffer, gives the collection (every tool, in
// order, by its JSON) and the queries that NewCollection(Load(...).Docs)
// gives, on one core (every file read into one buffer, so a kept string
// still pointing into it would hold a later file's bytes) and on several,
// for adversarial trees, a generated StableToolBench-shaped tree, and the
// shared StableToolBench queries.
func TestLoadCollectionEqualsLoadThenNewCollection(t *testing.T) {
	var dirs []string
	for seed := range uint64(4) {
		dir := t.TempDir()
		adversarialTree(t, dir, 60, seed)
		dirs = append(dirs, dir)
	}
	gen := t.TempDir()
	if _, err := toolbenchgen.WriteTree(context.Background(), gen, toolbenchgen.Options{APIs: 3000, Seed: 11}, nil); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, gen)
	if d, ok := shareddata.Dir(); ok {
		dirs = append(dirs, filepath.Join(d, "stabletoolbench", "solvable_queries", "test_instruction"))
	} else {
		t.Log("../shared/data is absent: the StableToolBench queries are not loaded")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for _, dir := range dirs {
			src, err := toolbench.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: "c"})
			got, gsrc, err := toolbench.LoadCollection(toolbench.CollectionOptions{Name: "c"}, dir)
			if err != nil {
				t.Fatal(err)
			}
			if gsrc.Docs != nil || gsrc.Files != src.Files {
				t.Errorf("%s: source holds %d docs and %d files, want none and %d", dir, len(gsrc.Docs), gsrc.Files, src.Files)
			}
			if gj, wj := mustJSON(t, gsrc.Queries), mustJSON(t, src.Queries); gj != wj {
				t.Errorf("%s: queries differ from Load's", dir)
			}
			if len(got.Tools) != len(want.Tools) || len(got.Tools) == 0 {
				t.Fatalf("%s (%d cores): %d tools, NewCollection made %d", dir, procs, len(got.Tools), len(want.Tools))
			}
			for i := range want.Tools {
				if gj, wj := mustJSON(t, got.Tools[i]), mustJSON(t, want.Tools[i]); gj != wj {
					t.Fatalf("%s (%d cores): tool %d:\n got %s\nwant %s", dir, procs, i, gj, wj)
				}
			}
			if err := got.Validate(); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
			if len(gsrc.Tasks(got)) != len(src.Tasks(want)) {
				t.Errorf("%s: tasks differ", dir)
			}
		}
	}
}

// TestAdversarialTreeIsAdversarial checks that the adversarial trees hold
// what they are meant to: APIs documented more than once, function names
// made unique, escaped texts, and a query file.
func TestAdversarialTreeIsAdversarial(t *testing.T) {
	dir := t.TempDir()
	adversarialTree(t, dir, 60, 1)
	src, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	renamed, escaped := 0, 0
	for _, tool := range c.Tools {
		if tool.Name != tool.Meta["toolbench_name"] {
			renamed++
		}
		if strings.ContainsAny(tool.Description+tool.GroupDescription, "\"\t\n\\é") {
			escaped++
		}
	}
	if len(c.Tools) >= len(src.Docs) || renamed == 0 || escaped == 0 || len(src.Queries) != 1 {
		t.Errorf("%d docs, %d tools, %d renamed, %d with escaped texts, %d query groups", len(src.Docs), len(c.Tools), renamed, escaped, len(src.Queries))
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
