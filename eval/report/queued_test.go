package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/store"
)

// FromQueue writes a queued run's files and reports from the episodes
// its workers finished, and says how many are still to go; a run the
// queue does not hold is an error.
func TestFromQueue(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "q.db"), store.Options{Migrations: queue.Migrations})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := queue.Open(ctx, st, queue.Spec{Name: "run-q", Fingerprint: "fp", Info: []byte(`{"agent":"oracle"}`)}, queue.Options{Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	keys := []eval.EpisodeKey{{Task: "a"}, {Task: "b"}, {Task: "c"}}
	if err := r.Join(ctx, keys); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, done, err := r.Claim(ctx)
		if err != nil || c == nil {
			t.Fatalf("claim: %v done %v %v", c, done, err)
		}
		if err := r.Finish(ctx, c, &eval.Episode{TaskID: c.Task, Run: c.Run, Agent: "oracle", Outcome: &agent.Outcome{Trajectory: &toolenv.Trajectory{TaskID: c.Task, Finished: true}}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	q, err := FromQueue(ctx, st, "run-q", "q.db", dir)
	if err != nil {
		t.Fatal(err)
	}
	if q.Episodes != 2 || q.Remaining != 1 || q.Info == nil || q.Summary == nil {
		t.Fatalf("queued report: %+v", q)
	}
	for _, f := range append([]string{"run.json", "episodes.jsonl"}, Files...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := FromQueue(ctx, st, "no-such-run", "q.db", t.TempDir()); err == nil {
		t.Error("a run the queue does not hold was reported")
	}
}
