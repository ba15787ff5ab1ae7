package store

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// BulkLoader is a store that loads large imports faster in a mode of its
// own (cache import uses it when the store offers it). Everything a store
// guarantees holds in that mode too.
type BulkLoader interface {
	// BeginBulk starts the mode; end stops it. PutMany and the other
	// calls work as always in between, from any goroutine.
	BeginBulk(ctx context.Context) (end func() error, err error)
}

var _ BulkLoader = (*SQLite)(nil)

// bulkWALFrames bounds the write-ahead log in bulk mode: once the log
// holds more frames than this (128 MiB of 4 KiB pages, about three import
// batches), the next transaction waits until the checkpointer has copied
// the log into the database, so that it starts the log over.
const bulkWALFrames = 32768

// sqliteBulk is the background checkpointer of an SQLite store in bulk
// mode.
type sqliteBulk struct {
	kick chan struct{} // a commit happened
	stop chan struct{}
	done chan struct{}

	maxLog int   // bulkWALFrames unless a test says otherwise
	limit  int64 // the log file's size at maxLog frames

	mu      sync.Mutex
	cond    *sync.Cond
	commits int   // transactions committed in bulk mode
	cleanAt int   // commits when the last checkpoint began, if it copied the whole log; else -1
	passes  int   // checkpoints run
	err     error // the last checkpoint's error
}

// BeginBulk moves the work of checkpoints (copying the write-ahead log
// into the database file, which SQLite otherwise does inside the commit
// that grows the log past 1,000 pages) from the writer to a goroutine of
// its own, which copies each committed batch while the writer stores the
// next. The log stays bounded: past bulkWALFrames frames, the next
// PutMany waits until the copy has caught up (then the log starts over).
// A crash in bulk mode loses nothing committed, as always in WAL mode:
// the log holds what the database file does not yet.
func (s *SQLite) BeginBulk(ctx context.Context) (func() error, error) {
	if s.path == ":memory:" {
		return func() error { return nil }, nil
	}
	s.bulkMu.Lock()
	defer s.bulkMu.Unlock()
	if s.bulk != nil {
		return nil, fmt.Errorf("store %s: already in bulk mode", s.path)
	}
	b := &sqliteBulk{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), maxLog: cmp.Or(s.bulkWALFrames, bulkWALFrames), cleanAt: -1}
	var pageSize int64
	if err := s.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return nil, fmt.Errorf("store %s: bulk mode: %w", s.path, err)
	}
	b.limit = 32 + int64(b.maxLog)*(24+pageSize)
	// The writer is one connection: the settings apply to it (a
	// connection opened in its place checkpoints as usual). The log file
	// is cut back to the bound when the log starts over, so that its
	// size says whether the log is past the bound.
	for _, q := range []string{`PRAGMA wal_autocheckpoint=0`, fmt.Sprintf(`PRAGMA journal_size_limit=%d`, b.limit)} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			// Back to checkpoints in the commits.
			_, _ = s.w.ExecContext(context.Background(), `PRAGMA wal_autocheckpoint=1000`)
			_, _ = s.w.ExecContext(context.Background(), `PRAGMA journal_size_limit=-1`)
			return nil, fmt.Errorf("store %s: bulk mode: %w", s.path, err)
		}
	}
	b.cond = sync.NewCond(&b.mu)
	s.bulk = b
	go s.checkpointer(b)
	return func() error { return s.endBulk(b) }, nil
}

// endBulk ends bulk mode b (if it is still on): the checkpointer stops,
// the writer checkpoints in its commits again, and what the last batches
// left in the log is copied.
func (s *SQLite) endBulk(b *sqliteBulk) error {
	s.bulkMu.Lock()
	if s.bulk != b {
		s.bulkMu.Unlock()
		return nil
	}
	s.bulk = nil
	s.bulkMu.Unlock()
	close(b.stop)
	<-b.done
	_, err := s.w.ExecContext(context.Background(), `PRAGMA wal_autocheckpoint=1000`)
	if err == nil {
		_, err = s.w.ExecContext(context.Background(), `PRAGMA journal_size_limit=-1`)
	}
	if err == nil {
		_, err = s.w.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
	}
	if err != nil {
		return fmt.Errorf("store %s: end bulk mode: %w", s.path, err)
	}
	return nil
}

// checkpointer copies the log into the database after every commit (and
// every 100 ms) until b stops.
func (s *SQLite) checkpointer(b *sqliteBulk) {
	defer close(b.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			b.mu.Lock()
			b.passes, b.err = b.passes+1, errBulkEnded
			b.cond.Broadcast()
			b.mu.Unlock()
			return
		case <-b.kick:
		case <-tick.C:
		}
		b.mu.Lock()
		at := b.commits
		b.mu.Unlock()
		var busy, frames, copied int
		err := s.r.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
		b.mu.Lock()
		b.passes++
		b.cleanAt, b.err = -1, err
		if err == nil && copied == frames {
			b.cleanAt = at
		}
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

var errBulkEnded = fmt.Errorf("bulk mode ended")

// bulkWait is called before a write transaction: in bulk mode, when the
// log has grown past its bound (its file is larger: SQLite cuts the file
// back to the bound when the log starts over), it waits until a checkpoint that began
// after the last commit has copied the whole log, so that this
// transaction starts the log over. If a reader still needs part of the
// log (no checkpoint can copy it), the wait ends after two checkpoints.
func (s *SQLite) bulkWait() {
	s.bulkMu.Lock()
	b := s.bulk
	s.bulkMu.Unlock()
	if b == nil {
		return
	}
	if fi, err := os.Stat(s.path + "-wal"); err != nil || fi.Size() <= b.limit {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for start := b.passes; b.err == nil && b.cleanAt != b.commits && b.passes < start+2; {
		b.kickLocked()
		b.cond.Wait()
	}
}

// bulkCommitted tells the checkpointer a transaction committed.
func (s *SQLite) bulkCommitted() {
	s.bulkMu.Lock()
	b := s.bulk
	s.bulkMu.Unlock()
	if b == nil {
		return
	}
	b.mu.Lock()
	b.commits++
	b.kickLocked()
	b.mu.Unlock()
}

func (b *sqliteBulk) kickLocked() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}
