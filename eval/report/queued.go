package report

import (
	"context"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/store"
)

// Queued is what FromQueue wrote: the run's information, its summary,
// how many episodes it holds and how many are still to go.
type Queued struct {
	Info    *eval.RunInfo
	Summary *eval.Summary
	// Episodes is the number of finished episodes the reports hold.
	Episodes int
	// Remaining counts the episodes pending or running: the run is not
	// finished when it is above 0.
	Remaining int
}

// FromQueue writes into dir the run.json and episodes.jsonl of the run
// named name in the evaluation queue st (queue.Export; where says where
// the queue is, without secrets) and its reports (Write), from every
// episode its workers finished, on any machine.
func FromQueue(ctx context.Context, st store.Store, name, where, dir string) (*Queued, error) {
	snap, info, err := queue.Export(ctx, st, name, where, dir)
	if err != nil {
		return nil, err
	}
	s, err := Write(dir, info, snap.Episodes, nil)
	if err != nil {
		return nil, err
	}
	return &Queued{Info: info, Summary: s, Episodes: len(snap.Episodes), Remaining: snap.Status.Pending + snap.Status.Running}, nil
}
