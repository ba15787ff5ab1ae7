package episode

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolenv/toolenv/store/epstore"
)

// An episode kept in this process's memory is written to the store when
// it ends (so that toolenv episodes export has it after the fact): at
// once when nothing else is being written, else by a writer of its own,
// to which the ended episodes queue up to be written a batch per
// transaction, off the final steps' path (under load, one transaction
// for many). Until written, a queued episode is read from the queue
// (view). Close writes what is queued.

// archiveBatch is the most episodes one transaction writes.
const archiveBatch = 256

// archiving is an ended episode waiting to be written.
type archiving struct {
	ep  *Episode
	rec epstore.Ended
}

// queueArchive queues ep, which ended (state), to be written.
func (e *Env) queueArchive(ep *Episode, state string, now time.Time) {
	ep.mu.Lock()
	raw, err := json.Marshal(ep.spec)
	rec := epstore.Ended{ID: ep.id, Digest: ep.principal, State: state, Spec: raw, Created: ep.created, Ended: now}
	for i := range ep.history {
		if err != nil {
			break
		}
		var data []byte
		data, err = json.Marshal(&ep.history[i])
		rec.Steps = append(rec.Steps, epstore.Step{Seq: int64(i + 1), Data: data})
	}
	ep.mu.Unlock()
	if err != nil {
		e.opts.Logger.Warn("ended episode not written to the store", "episode", ep.id, "err", err)
		return
	}
	e.archMu.Lock()
	if e.archQ == nil || (!e.archBusy && len(e.archQ) == 0) {
		// Closed, or nothing being written: write it now, so that an
		// idle server's ended episode is in the store when its last
		// step is answered.
		e.archBusy = e.archQ != nil
		e.archMu.Unlock()
		e.writeArchive([]archiving{{ep, rec}})
		e.archMu.Lock()
		e.archBusy = false
		e.archMu.Unlock()
		return
	}
	e.archPending[ep.id] = ep
	q := e.archQ
	e.archMu.Unlock()
	q <- archiving{ep, rec} // blocks while the writer is a full queue behind
}

// archiver writes the queued episodes until the queue is closed.
func (e *Env) archiver(q <-chan archiving, done chan<- struct{}) {
	defer close(done)
	for first := range q {
		batch := []archiving{first}
	more:
		for len(batch) < archiveBatch {
			select {
			case a, ok := <-q:
				if !ok {
					break more
				}
				batch = append(batch, a)
			default:
				break more
			}
		}
		e.archMu.Lock()
		e.archBusy = true
		e.archMu.Unlock()
		e.writeArchive(batch)
		e.archMu.Lock()
		e.archBusy = false
		e.archMu.Unlock()
	}
}

func (e *Env) writeArchive(batch []archiving) {
	recs := make([]epstore.Ended, len(batch))
	for i, a := range batch {
		recs[i] = a.rec
	}
	if err := e.archive.Archive(context.Background(), recs...); err != nil {
		e.opts.Logger.Warn("ended episodes not written to the store", "episodes", len(recs), "err", err)
	}
	e.archMu.Lock()
	for _, a := range batch {
		if e.archPending[a.ep.id] == a.ep {
			delete(e.archPending, a.ep.id)
		}
	}
	e.archMu.Unlock()
}

// pendingArchive returns the ended episode id waiting to be written, or
// nil.
func (e *Env) pendingArchive(id string) *Episode {
	e.archMu.Lock()
	defer e.archMu.Unlock()
	return e.archPending[id]
}

// closeArchive writes what is queued and stops the writer.
func (e *Env) closeArchive() {
	e.archMu.Lock()
	q := e.archQ
	e.archQ = nil
	e.archMu.Unlock()
	if q != nil {
		close(q)
		<-e.archDone
	}
}
