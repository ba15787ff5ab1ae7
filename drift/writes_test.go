package drift_test

import (
	"context"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// TestDriftWriteTools: the write tools of writable NL2SQL collections
// (a generated corpus with its write shapes, built with writes) drift
// like every other tool — renamed, retyped, moved — and every write
// task's translated gold calls, through the drifted collection's strict
// pipeline, still leave exactly its gold end state.
func TestDriftWriteTools(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 6, Writes: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Writes: true, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	for _, flavor := range nl2api.Flavors {
		t.Run(flavor, func(t *testing.T) {
			src := filepath.Join(out, flavor)
			c1, err := toolenv.ReadCollection(src)
			if err != nil {
				t.Fatal(err)
			}
			tasks := readTasks(t, src)
			d, err := drift.Drift(drift.NewLineage(c1), drift.Options{Seed: 303, Tasks: tasks, Rates: highRates})
			if err != nil {
				t.Fatal(err)
			}
			written := 0
			for _, tc := range d.Step.Tools {
				if tl := c1.Tool(tc.Tool); tl != nil && tl.State() == toolenv.StateWrite && len(tc.Changes) > 0 {
					written++
				}
			}
			if written == 0 {
				t.Fatalf("no write tool drifted (%s)", changeCounts(d.Step))
			}
			vdir := filepath.Join(out, flavor+"-"+d.Step.To)
			if err := drift.Write(vdir, d, drift.WriteOptions{BaseDir: src}); err != nil {
				t.Fatal(err)
			}
			c, err := toolenv.ReadCollection(vdir)
			if err != nil {
				t.Fatal(err)
			}
			l, err := drift.Open(c)
			if err != nil {
				t.Fatal(err)
			}
			h := sqlPipeline(t, c, l, drift.ModeStrict)
			writes := 0
			for _, task := range readTasks(t, vdir) {
				if _, w := task.Meta[nl2api.MetaWrite]; !w {
					continue
				}
				writes++
				if reason, detail := nl2api.Verify(ctx, h, c, task, "drift-"+task.ID); reason != "" {
					t.Errorf("%s %s: %s: %s", d.Step.To, task.ID, reason, detail)
				}
			}
			if writes == 0 {
				t.Fatal("no write task")
			}
			t.Logf("%s: %d write tools drifted, %d write tasks verified on the drifted collection", flavor, written, writes)
		})
	}
}
