package nl2api_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// checkWrites re-reads every flavor's collection from disk, opens its
// backend the way a server does and verifies every kept write task again
// on the state it leaves; it returns the kept write tasks by flavor.
func checkWrites(t *testing.T, rep *nl2api.Report, out string) map[string][]*toolenv.Task {
	t.Helper()
	got := map[string][]*toolenv.Task{}
	for _, f := range rep.Flavors {
		w := f.Writes
		if w == nil {
			t.Fatalf("%s: no write report", f.Flavor)
		}
		if w.Kept+w.Dropped != w.Candidates {
			t.Errorf("%s: %d kept + %d dropped != %d candidates", f.Flavor, w.Kept, w.Dropped, w.Candidates)
		}
		dropped := 0
		for _, g := range w.Rejections {
			dropped += g.Count
			if g.Reason == "" || len(g.Tasks) != g.Count {
				t.Errorf("%s: a drop group without its reason or tasks: %+v", f.Flavor, g)
			}
		}
		if dropped != w.Dropped {
			t.Errorf("%s: drops by reason add up to %d, not %d", f.Flavor, dropped, w.Dropped)
		}
		c, h, tasks := openServed(t, filepath.Join(out, f.Flavor))
		writes := 0
		for _, task := range tasks {
			if _, ok := task.Meta[nl2api.MetaWrite]; !ok {
				continue
			}
			writes++
			if !endstate.Stateful(task) {
				t.Errorf("%s %s: a write task without a gold end state", f.Flavor, task.ID)
			}
			if reason, detail := nl2api.Verify(context.Background(), h, c, task, "again-"+task.ID); reason != "" {
				t.Errorf("%s %s: verified at build, not from disk: %s: %s", f.Flavor, task.ID, reason, detail)
			}
			for _, name := range task.Tools {
				if tl := c.Tool(name); tl == nil || tl.Hidden() {
					t.Errorf("%s %s offers %s, which is missing or hidden", f.Flavor, task.ID, name)
				}
			}
			got[f.Flavor] = append(got[f.Flavor], task)
		}
		if writes != w.Kept {
			t.Errorf("%s: %d write tasks on disk, the report keeps %d", f.Flavor, writes, w.Kept)
		}
		for _, tl := range c.Tools {
			if tl.State() == toolenv.StateWrite && tl.Hidden() {
				t.Errorf("%s: write tool %s is hidden", f.Flavor, tl.Name)
			}
		}
	}
	return got
}

// TestWriteTasksGenerated: on generated adversarial corpora (odd and
// Unicode names, NULLs, a WITHOUT ROWID table, and the write shapes: a
// table referring to itself, a composite key with ON DELETE CASCADE, a
// table without a key holding identical rows), a build with writes keeps
// write tasks in every flavor, among them tasks on each write shape;
// every one verifies again from disk; a second build with the same seed
// writes the same task files.
func TestWriteTasksGenerated(t *testing.T) {
	for _, seed := range []uint64{3, 8} {
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed, Writes: true}); err != nil {
			t.Fatal(err)
		}
		build := func(out string) *nl2api.Report {
			rep, err := nl2api.Build(context.Background(), nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Writes: true, Seed: int64(seed), Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		out := filepath.Join(dir, "out")
		rep := build(out)
		kept := checkWrites(t, rep, out)
		for _, f := range nl2api.Flavors {
			if len(kept[f]) == 0 {
				t.Errorf("seed %d %s: no write task kept", seed, f)
			}
		}
		// The write shapes' tables are written by kept SLOT tasks.
		touched := map[string]bool{}
		for _, task := range kept["slot"] {
			gold, _, _ := endstate.GoldChanges(task)
			for _, tc := range gold.Tables {
				touched[tc.Table] = true
				if len(tc.Key) == 0 {
					touched["(a table without a key)"] = true
				}
				if len(tc.Key) > 1 {
					touched["(a composite key)"] = true
				}
			}
		}
		for _, want := range []string{"(a table without a key)", "(a composite key)"} {
			if !touched[want] {
				t.Errorf("seed %d: no kept SLOT write task changes %s (touched: %v)", seed, want, touched)
			}
		}
		again := filepath.Join(dir, "again")
		build(again)
		for _, f := range nl2api.Flavors {
			for _, file := range []string{toolenv.TasksFile, "tools.json"} {
				a, _ := os.ReadFile(filepath.Join(out, f, file))
				b, _ := os.ReadFile(filepath.Join(again, f, file))
				if !bytes.Equal(a, b) {
					t.Errorf("seed %d %s/%s differs between two builds of one seed", seed, f, file)
				}
			}
		}
	}
}

// TestWriteTasksBIRDAndSpider: BIRD and spider-de built with writes keep
// write tasks for every database in SLOT and REST, and every kept one
// verifies again from disk.
func TestWriteTasksBIRDAndSpider(t *testing.T) {
	for _, name := range []string{"bird", "spider-de"} {
		t.Run(name, func(t *testing.T) {
			data := shareddata.Require(t, name)
			out := t.TempDir()
			rep, err := nl2api.Build(context.Background(), nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Writes: true})
			if err != nil {
				t.Fatal(err)
			}
			checkWrites(t, rep, out)
			for _, f := range rep.Flavors {
				if f.Flavor == nl2api.Sel {
					continue // composite keys are dropped for SEL, with their reason
				}
				for _, d := range rep.Databases {
					if f.Writes.KeptByDB[d.Name] == 0 {
						t.Errorf("%s %s: no write task kept for %s", name, f.Flavor, d.Name)
					}
				}
			}
			md, _ := os.ReadFile(filepath.Join(out, "report.md"))
			if !strings.Contains(string(md), "## Write tasks") {
				t.Error("report.md has no write task section")
			}
		})
	}
}
