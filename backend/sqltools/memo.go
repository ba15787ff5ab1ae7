package sqltools

import (
	"container/list"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// renderMemo remembers what rendering a result read from a database: a
// table's row count and preview, a grouping's group count, a value, a
// list's or rows' values. The databases are read-only, so a query's SQL
// text and bound values decide its answer, and the same query in another
// session (the same task's starting table in every episode of it, the
// same calls of an RL rollout repeated thousands of times) is answered
// from memory instead of running the count and the preview again. It is
// bounded by bytes, least recently used first out; an answer larger than
// a sixteenth of the bound is not kept.
type renderMemo struct {
	hits, misses atomic.Int64

	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front: most recently used
	items map[memoKey]*list.Element
}

type memoKey struct {
	db    *rodb.DB
	query string // kind, SQL text and bound values
}

type memoEntry struct {
	key   memoKey
	n     int64
	value any
	rows  [][]any
	trunc bool
	size  int64
}

func newRenderMemo(max int64) *renderMemo {
	if max <= 0 {
		return nil
	}
	return &renderMemo{max: max, order: list.New(), items: map[memoKey]*list.Element{}}
}

// key is the memo key of a query of kind on db.
func (m *renderMemo) key(db *rodb.DB, kind string, s frag) memoKey {
	var b strings.Builder
	b.Grow(len(s.sql) + 16*len(s.args) + len(kind) + 2)
	b.WriteString(kind)
	b.WriteByte(0)
	b.WriteString(s.sql)
	for _, a := range s.args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	return memoKey{db: db, query: b.String()}
}

func (m *renderMemo) get(k memoKey) (*memoEntry, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[k]
	if !ok {
		m.misses.Add(1)
		return nil, false
	}
	m.hits.Add(1)
	m.order.MoveToFront(el)
	return el.Value.(*memoEntry), true
}

func (m *renderMemo) put(e *memoEntry) {
	if m == nil || e.key.query == "" {
		return
	}
	e.size = int64(len(e.key.query)) + 64 + approxSize(e.value)
	for _, r := range e.rows {
		e.size += 24
		for _, v := range r {
			e.size += approxSize(v)
		}
	}
	if e.size > m.max/16 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[e.key]; ok {
		m.order.MoveToFront(el)
		return
	}
	m.items[e.key] = m.order.PushFront(e)
	m.used += e.size
	for m.used > m.max {
		last := m.order.Back()
		old := last.Value.(*memoEntry)
		m.order.Remove(last)
		delete(m.items, old.key)
		m.used -= old.size
	}
}

// approxSize is about what a decoded SQLite value holds.
func approxSize(v any) int64 {
	switch x := v.(type) {
	case string:
		return 16 + int64(len(x))
	case []byte:
		return 24 + int64(len(x))
	}
	return 16
}
