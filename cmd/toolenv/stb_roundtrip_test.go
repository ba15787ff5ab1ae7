package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/toolbench/toolbenchtest"
)

// TestStableToolBenchCacheRoundTrip is the property test of StableToolBench
// compatibility, on generated ToolBench tool sets and caches (odd,
// Unicode and colliding names, missing fields; keys in any order, ints
// beside strings of their digits, repeated and documented parameter
// names, missing arguments, NaN, recorded errors, files cut short):
//
//   - cache import reads every entry it can and reports each one it
//     cannot (with its key);
//   - every imported entry is answered through /virtual over HTTP, for the
//     request a StableToolBench client sends, with its recorded answer;
//   - cache export --format stabletoolbench writes every entry under its
//     key exactly as recorded, where StableToolBench's own lookup
//     (stb_lookup.py, following its server/main.py) finds it: 100 % hits.
func TestStableToolBenchCacheRoundTrip(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(seed, 11))
			tools, cache, st, out := filepath.Join(dir, "tools"), filepath.Join(dir, "cache"), filepath.Join(dir, "store.db"), filepath.Join(dir, "export")
			set, err := toolbenchtest.WriteToolSet(tools, rng, toolbenchtest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries, err := toolbenchtest.WriteCache(cache, set, rng, toolbenchtest.Options{})
			if err != nil {
				t.Fatal(err)
			}

			code, stdout, stderr := run(t, ctx, "cache", "import", cache, "--toolbench", tools, "--store", st, "--json")
			if code != 0 {
				t.Fatalf("import exit %d: %s", code, stderr)
			}
			var rep importReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err, stdout)
			}
			reported := map[string]bool{}
			for _, p := range rep.Problems {
				reported[p.Key] = true
			}
			var reachable, imported []*toolbenchtest.Entry
			unreadable := 0
			for _, e := range entries {
				if e.Reachable() {
					reachable = append(reachable, e)
				}
				if e.Imported() {
					imported = append(imported, e)
					continue
				}
				unreadable++
				if !reported[e.Key] {
					t.Errorf("import did not report the unreadable entry %s in %s", e.Key, e.File)
				}
			}
			if rep.Skipped != unreadable || len(rep.Unresolved) > 0 {
				t.Errorf("import report %+v; want %d skipped entries and every API resolved", rep, unreadable)
			}

			base, stop := serveInBackground(t, "--toolbench", tools, "--store", st)
			for _, e := range reachable {
				got, src := virtualAnswer(t, base, e.Request())
				if src != "cache" || got.Error != e.Error || !sameJSON(got.Response, e.Want) {
					t.Errorf("/virtual %+v\n  got %s %q %s\n want the recorded %q %s (key %s in %s)", e.Request(), src, got.Error, got.Response, e.Error, e.Want, e.Key, e.File)
				}
			}
			stop()

			code, _, stderr = run(t, ctx, "cache", "export", out, "--format", "stabletoolbench", "--toolbench", tools, "--store", st)
			if code != 0 {
				t.Fatalf("export exit %d: %s", code, stderr)
			}
			reqs := make([]toolbenchtest.Request, len(imported))
			for i, e := range imported {
				reqs[i] = e.Request()
			}
			res, err := toolbenchtest.Lookup(ctx, out, reqs)
			if err != nil {
				t.Fatal(err)
			}
			hits := 0
			for i, r := range res {
				e := imported[i]
				if !r.Hit || r.Key != e.Key {
					t.Errorf("StableToolBench's lookup misses %s (key %s) in the export: %+v", e.File, e.Key, r)
					continue
				}
				var v struct {
					Error    string          `json:"error"`
					Response json.RawMessage `json:"response"`
				}
				json.Unmarshal(r.Value, &v)
				if v.Error != e.Error || !sameJSON(v.Response, e.Want) {
					t.Errorf("exported %s: %q %s, recorded %q %s", e.Key, v.Error, v.Response, e.Error, e.Want)
					continue
				}
				hits++
			}
			// Nothing else is exported: one key per imported entry.
			exported := 0
			if _, problems, err := toolbench.ReadCache(out, func(*toolbench.CacheRecord) error { exported++; return nil }); err != nil || len(problems) > 0 || exported != len(imported) {
				t.Errorf("the export holds %d entries (%v %v), want the %d imported", exported, problems, err, len(imported))
			}
			t.Logf("%d entries, %d imported, %d answered through /virtual; StableToolBench's lookup hits %d/%d in the export", len(entries), len(imported), len(reachable), hits, len(imported))
		})
	}
}

type virtualReply struct {
	Error    string          `json:"error"`
	Response json.RawMessage `json:"response"`
}

func virtualAnswer(t *testing.T, base string, r toolbenchtest.Request) (virtualReply, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"category": r.Category, "tool_name": r.ToolName, "api_name": r.APIName,
		"tool_input": r.ToolInput, "strip": "", "toolbench_key": ""})
	resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v virtualReply
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("/virtual answered %s: %v", raw, err)
	}
	return v, resp.Header.Get("X-Toolenv-Source")
}
