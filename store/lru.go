package store

import (
	"container/list"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// lru is a sharded, byte-bounded LRU of cache entries. It holds three
// kinds of item: a canonical entry under (tool, args), an entry recorded
// under an exact key under (tool, exact), and a resolution, under (tool,
// exact, args), of an exact key the store holds no entry for to the
// canonical entry of args (see resolved).
type lru struct {
	seed   maphash.Seed
	shards [lruShards]lruShard
	// gen counts the writes that may change what an exact key resolves
	// to; a resolution holds the gen it was read at and is void after
	// such a write.
	gen atomic.Uint64
	// writes counts every write: a search's resolution (see searched)
	// may change with any new entry.
	writes atomic.Uint64
	// ttl bounds how long a resolution is served from memory, so that
	// an entry another process records under its exact key is seen
	// within ttl (this process's own writes void it at once).
	ttl time.Duration
}

// resolvedTTL is lru.ttl.
const resolvedTTL = 5 * time.Second

const lruShards = 32

type lruShard struct {
	mu    sync.Mutex
	max   int
	size  int
	ll    *list.List
	items map[lruKey]*list.Element
}

// lruKey is an item's key: {tool, args, ""} for a canonical entry,
// {tool, "", exact} for an entry recorded under exact, and {tool, args,
// exact} for a resolution (canonical JSON is never empty, nor is an
// exact key the store keeps).
type lruKey struct{ tool, args, exact string }

type lruItem struct {
	key   lruKey
	entry *Entry
	size  int
	// For a resolution: the count of clock (gen or writes) it was read
	// at and when it expires (unix ns).
	gen     uint64
	clock   *atomic.Uint64
	expires int64
}

func newLRU(maxBytes int) *lru {
	l := &lru{seed: maphash.MakeSeed(), ttl: resolvedTTL}
	for i := range l.shards {
		l.shards[i] = lruShard{max: maxBytes / lruShards, ll: list.New(), items: map[lruKey]*list.Element{}}
	}
	return l
}

func (l *lru) shard(key lruKey) *lruShard {
	return &l.shards[(maphash.String(l.seed, key.args)^maphash.String(l.seed, key.exact)^maphash.String(l.seed, key.tool))%lruShards]
}

func (l *lru) get(key lruKey) (*Entry, bool) {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.items[key]
	if !ok {
		return nil, false
	}
	it := el.Value.(*lruItem)
	if it.expires != 0 && (it.gen != it.clock.Load() || time.Now().UnixNano() > it.expires) {
		s.size -= it.size
		s.ll.Remove(el)
		delete(s.items, key)
		return nil, false
	}
	s.ll.MoveToFront(el)
	return it.entry, true
}

// getExact returns what GetExact would: the entry recorded under exact,
// else the canonical entry of args when this process resolved exact to
// it (and nothing written since may have changed that).
func (l *lru) getExact(tool, exact, args string) (*Entry, bool) {
	if e, ok := l.get(lruKey{tool: tool, exact: exact}); ok {
		return e, true
	}
	return l.get(lruKey{tool, args, exact})
}

// resolved keeps what the store answered for GetExact(tool, exact, args),
// read when the gen was gen: the entry under its own key, and, when it is
// a canonical entry found for an exact key the store holds no entry for,
// that resolution too, so that the next identical lookup does not read
// the store.
func (l *lru) resolved(tool, exact, args string, e *Entry, gen uint64) {
	if e.Exact == exact {
		l.add(lruKey{tool: tool, exact: exact}, e)
		return
	}
	l.add(lruKey{tool: tool, args: args}, e)
	l.addItem(lruKey{tool, args, exact}, e, &l.gen, gen, time.Now().Add(l.ttl).UnixNano())
}

// searched keeps that a lookup of (tool, exact, args) which found nothing
// under those keys went on to find e under other keys (a lenient search,
// see Searcher), read when the write count was writes: the next identical
// lookup finds e at once, until anything is written.
func (l *lru) searched(tool, exact, args string, e *Entry, writes uint64) {
	l.addItem(lruKey{tool, args, exact}, e, &l.writes, writes, time.Now().Add(l.ttl).UnixNano())
}

// written drops the items entries (just written) may have changed. A
// write that replaces entries or records exact keys voids every
// resolution: it may store the entry a resolved exact key now finds.
func (l *lru) written(entries []*Entry, overwrite bool) {
	bump := overwrite
	for _, e := range entries {
		l.remove(lruKey{tool: e.Tool, args: e.Args}) // the next Get reads what won
		if e.Exact != "" {
			l.remove(lruKey{tool: e.Tool, exact: e.Exact})
			bump = true
		}
	}
	if bump {
		l.gen.Add(1)
	}
	l.writes.Add(1)
}

func (l *lru) add(key lruKey, e *Entry) { l.addItem(key, e, nil, 0, 0) }

func (l *lru) addItem(key lruKey, e *Entry, clock *atomic.Uint64, gen uint64, expires int64) {
	size := len(key.tool) + len(key.args) + len(key.exact) + len(e.Args) + len(e.Exact) + len(e.Body) + len(e.Error) + 96
	s := l.shard(key)
	if size > s.max {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		it := el.Value.(*lruItem)
		s.size += size - it.size
		it.entry, it.size, it.clock, it.gen, it.expires = e, size, clock, gen, expires
		s.ll.MoveToFront(el)
	} else {
		s.items[key] = s.ll.PushFront(&lruItem{key: key, entry: e, size: size, clock: clock, gen: gen, expires: expires})
		s.size += size
	}
	for s.size > s.max {
		last := s.ll.Back()
		it := last.Value.(*lruItem)
		s.ll.Remove(last)
		delete(s.items, it.key)
		s.size -= it.size
	}
}

func (l *lru) remove(key lruKey) {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		s.size -= el.Value.(*lruItem).size
		s.ll.Remove(el)
		delete(s.items, key)
	}
}

func (l *lru) clear() {
	l.gen.Add(1)
	l.writes.Add(1)
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		s.ll.Init()
		s.items = map[lruKey]*list.Element{}
		s.size = 0
		s.mu.Unlock()
	}
}

// memLayer is the in-memory cache a store keeps in front of its database
// (mem is nil when it keeps none), with the methods both stores offer
// through it.
type memLayer struct{ mem *lru }

// Writes returns the count of writes through this handle so far (0 without
// the in-memory cache), for Searched.
func (m memLayer) Writes() uint64 {
	if m.mem == nil {
		return 0
	}
	return m.mem.writes.Load()
}

// Searched keeps in memory that GetExact(tool, exact, args) found
// nothing and a search of other keys, begun when Writes returned writes,
// found e: the next such lookup returns e without reading the database,
// until anything is written through this handle (or, for another
// process's writes, for a few seconds at most).
func (m memLayer) Searched(tool, exact, args string, e *Entry, writes uint64) {
	if m.mem != nil && exact != "" && e != nil {
		m.mem.searched(tool, exact, args, e, writes)
	}
}

// CachedExact returns the entry recorded under exact for tool when the
// in-memory cache holds it, without reading the database: a caller that
// finds it there need not compute the canonical key at all.
func (m memLayer) CachedExact(tool, exact string) (*Entry, bool) {
	if m.mem == nil || exact == "" {
		return nil, false
	}
	return m.mem.get(lruKey{tool: tool, exact: exact})
}
