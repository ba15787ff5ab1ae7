package sqltools

import (
	"container/list"
	"fmt"
	"sort"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// session is one task session: its database and labelled results.
type session struct {
	id string

	mu      sync.Mutex // serialises the calls of one session
	db      *rodb.DB
	dbName  string
	results map[string]*result
	auto    int   // last automatic label number
	seq     int   // subquery alias counter
	bytes   int64 // estimated memory held
	// applied is how many calls the session holds: the last entry of
	// its log (Options.Log) it applied.
	applied int64
	// calls counts the successful calls the session holds; mark is the
	// count of the last CheckpointSession (-1: none) and undo what
	// undoes each call since, oldest first (see rollback.go).
	calls int64
	mark  int64
	undo  []undoEntry
	// world is the session's world (nil: none yet: reads see the
	// databases), worldSpec the initial state it started from.
	world     *world.World
	worldSpec *world.Spec

	// guarded by the store's mutex
	lastUsed time.Time
	elem     *list.Element // nil while pinned
	pinned   bool
	gone     bool
	refs     int // calls holding the session (get to release)
}

// store holds the sessions of a backend and evicts them after an idle
// timeout or when together they hold more than a memory cap (least
// recently used first). now is injectable so that tests control time.
type store struct {
	mu       sync.Mutex
	sessions map[string]*session
	lru      *list.List // front: most recently used; pinned sessions are not in it
	idle     time.Duration
	maxBytes int64
	total    int64 // bytes of the sessions in lru
	// pins are the ids of sessions their owner holds (PinSession): not
	// evicted, idle or over the cap, until DropSession. pinnedBytes is
	// what they hold.
	pins        map[string]bool
	pinnedBytes int64
	now         func() time.Time
	evictions   int
	// restored counts sessions rebuilt from their log, calls how many
	// logged calls were replayed.
	restored, calls int
}

func newStore(idle time.Duration, maxBytes int64, now func() time.Time) *store {
	return &store{sessions: map[string]*session{}, lru: list.New(), pins: map[string]bool{}, idle: idle, maxBytes: maxBytes, now: now}
}

// get returns the session, creating it when create is set. A missing
// session without create is an error whose hint says how to start one.
func (s *store) get(id string, create bool) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.evictIdleLocked(now)
	ss := s.sessions[id]
	if ss == nil {
		if !create {
			return nil, &toolenv.Error{Status: toolenv.StatusNotFound,
				Message: fmt.Sprintf("session %q does not exist (never started, or evicted after being idle or over the memory cap)", id),
				Hint:    "start the session again: call initialize_active_data with the task's meta.init arguments, then repeat the calls"}
		}
		ss = &session{id: id, results: map[string]*result{}, mark: -1}
		if s.pins[id] {
			ss.pinned = true
		} else {
			ss.elem = s.lru.PushFront(ss)
		}
		s.sessions[id] = ss
	} else if ss.elem != nil {
		s.lru.MoveToFront(ss.elem)
	}
	ss.lastUsed = now
	ss.refs++
	return ss, nil
}

// release ends a call's hold on ss (taken by get).
func (s *store) release(ss *session) {
	s.mu.Lock()
	ss.refs--
	s.mu.Unlock()
}

// dropUnused drops ss, which holds nothing, unless another call holds it
// too (and may fill it). It runs with ss.mu held.
func (s *store) dropUnused(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.refs == 1 && len(ss.results) == 0 && !ss.gone {
		s.dropLocked(ss)
		s.evictions--
	}
}

// evictIdleLocked drops sessions idle for longer than the timeout.
func (s *store) evictIdleLocked(now time.Time) {
	if s.idle <= 0 {
		return
	}
	for e := s.lru.Back(); e != nil; {
		ss := e.Value.(*session)
		if now.Sub(ss.lastUsed) <= s.idle {
			break // the rest were used more recently
		}
		prev := e.Prev()
		s.dropLocked(ss)
		e = prev
	}
}

func (s *store) dropLocked(ss *session) {
	if ss.gone {
		return
	}
	ss.gone = true
	if ss.pinned {
		s.pinnedBytes -= ss.bytes
	} else {
		s.lru.Remove(ss.elem)
		s.total -= ss.bytes
	}
	delete(s.sessions, ss.id)
	s.evictions++
}

// pin marks session id as held by its owner: it is taken out of the
// idle and memory evictions (which only ever see sessions no one holds)
// until drop. A session not yet made is pinned when it is.
func (s *store) pin(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pins[id] = true
	if ss := s.sessions[id]; ss != nil && !ss.pinned {
		s.lru.Remove(ss.elem)
		ss.elem = nil
		ss.pinned = true
		s.total -= ss.bytes
		s.pinnedBytes += ss.bytes
	}
}

// fits reports an error when ss would be over the memory cap alone after
// growing by delta: the call is refused and the session keeps what it
// holds.
func (s *store) fits(ss *session, delta int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxBytes <= 0 || ss.bytes+delta <= s.maxBytes {
		return nil
	}
	return &toolenv.Error{Status: toolenv.StatusTooLarge,
		Message: fmt.Sprintf("session %q would hold more than the memory cap of %d bytes with this result", ss.id, s.maxBytes),
		Hint:    "start again with fewer stored results (reuse labels), or raise the session memory cap"}
}

// replayed counts n logged calls replayed, and a restored session when
// the first was.
func (s *store) replayed(seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if seq == 1 {
		s.restored++
	}
}

// grew records that ss now holds delta more bytes and evicts least
// recently used sessions (other than ss) while the total is over the cap.
// If ss alone is over the cap it is dropped too and an error says so.
func (s *store) grew(ss *session, delta int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.gone {
		return nil
	}
	ss.bytes += delta
	if ss.pinned {
		// Its owner bounds it (an episode's steps); fits bounded the
		// session itself.
		s.pinnedBytes += delta
		return nil
	}
	s.total += delta
	if s.maxBytes <= 0 {
		return nil
	}
	for e := s.lru.Back(); e != nil && s.total > s.maxBytes; {
		prev := e.Prev()
		if o := e.Value.(*session); o != ss {
			s.dropLocked(o)
		}
		e = prev
	}
	if s.total > s.maxBytes {
		s.dropLocked(ss)
		return &toolenv.Error{Status: toolenv.StatusTooLarge,
			Message: fmt.Sprintf("session %q holds more than the memory cap of %d bytes and was dropped", ss.id, s.maxBytes),
			Hint:    "start again with fewer stored results, or raise the session memory cap"}
	}
	return nil
}

// drop removes a session.
func (s *store) drop(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pins, id)
	ss := s.sessions[id]
	if ss == nil {
		return false
	}
	s.dropLocked(ss)
	s.evictions-- // an explicit drop is not an eviction
	return true
}

// stats reports the sessions held, their bytes, evictions so far and
// what was replayed from logs.
func (s *store) stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Sessions: len(s.sessions), Bytes: s.total + s.pinnedBytes, Pinned: len(s.pins), Evictions: s.evictions, Restored: s.restored, Replayed: s.calls}
}

// labels lists a session's labels, sorted.
func (ss *session) labels() []string {
	out := make([]string, 0, len(ss.results))
	for l := range ss.results {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}
