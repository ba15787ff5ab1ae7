package episode_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

// TestEndedEpisodesBounded: without a store, a process remembers how
// every recent episode ended (a late step is told it was closed), but
// keeps the records of the newest 10,000 only: rollouts at thousands of
// episodes a second must not grow the heap for an hour.
func TestEndedEpisodesBounded(t *testing.T) {
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	var ids []string
	for i := 0; i < 10050; i++ {
		r, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Observation.EpisodeID)
		if err := eps.End(ctx, "", ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	if eps.Open() != 0 {
		t.Fatalf("%d open", eps.Open())
	}
	if _, err := eps.Record(ctx, "", ids[0]); !errors.Is(err, episode.ErrClosed) {
		t.Fatalf("the oldest episode's record: %v, want ErrClosed (its record forgotten)", err)
	}
	if rec, err := eps.Record(ctx, "", ids[len(ids)-1]); err != nil || rec.TaskID != "demo-3" {
		t.Fatalf("the newest episode's record: %v %v", rec, err)
	}
	if _, err := eps.Step(ctx, "", ids[0], &episode.Action{Type: episode.ActionListTools}); !errors.Is(err, episode.ErrClosed) {
		t.Fatalf("a step on the oldest: %v, want ErrClosed", err)
	}
	if _, err := eps.Step(ctx, "someone else", ids[len(ids)-1], &episode.Action{Type: episode.ActionListTools}); err == nil {
		t.Fatal("another principal stepped a closed episode")
	}
}
