package episode_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

// TestEndedEpisodesBounded: without episodes in the store, a process
// keeps the records of ended episodes in memory within
// Options.RecordBytes, and writes every one to the store when it ends:
// rollouts at thousands of episodes a second must not grow the heap,
// and every record stays readable (and exportable) after the fact.
func TestEndedEpisodesBounded(t *testing.T) {
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{RecordBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	var ids []string
	for i := 0; i < 300; i++ {
		r, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Observation.EpisodeID)
		if _, err := eps.Step(ctx, "", ids[i], &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{
			{Name: "convert_currency", Args: map[string]any{"amount": i, "from": "EUR", "to": "USD"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := eps.End(ctx, "", ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	if eps.Open() != 0 {
		t.Fatalf("%d open", eps.Open())
	}
	if kept := episode.KeptRecordBytes(eps); kept > 4096 || kept <= 0 {
		t.Fatalf("the records kept in memory hold %d bytes, want at most the budget of 4096 (and some)", kept)
	}
	for _, id := range []string{ids[0], ids[len(ids)-1]} {
		rec, err := eps.Record(ctx, "", id)
		if err != nil || rec.TaskID != "demo-3" || len(rec.Steps) != 1 {
			t.Fatalf("the record of %s: %+v %v", id, rec, err)
		}
	}
	if _, err := eps.Step(ctx, "", ids[0], &episode.Action{Type: episode.ActionListTools}); !errors.Is(err, episode.ErrClosed) {
		t.Fatalf("a step on the oldest: %v, want ErrClosed", err)
	}
	if _, err := eps.Record(ctx, "someone else", ids[len(ids)-1]); err == nil {
		t.Fatal("another principal read a closed episode's record")
	}
	if _, err := eps.Step(ctx, "someone else", ids[len(ids)-1], &episode.Action{Type: episode.ActionListTools}); err == nil {
		t.Fatal("another principal stepped a closed episode")
	}
}
