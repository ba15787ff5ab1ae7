package store

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// lru is a sharded, byte-bounded LRU of cache entries.
type lru struct {
	seed   maphash.Seed
	shards [lruShards]lruShard
}

const lruShards = 32

type lruShard struct {
	mu    sync.Mutex
	max   int
	size  int
	ll    *list.List
	items map[lruKey]*list.Element
}

type lruKey struct{ tool, args string }

type lruItem struct {
	key   lruKey
	entry *Entry
	size  int
}

func newLRU(maxBytes int) *lru {
	l := &lru{seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i] = lruShard{max: maxBytes / lruShards, ll: list.New(), items: map[lruKey]*list.Element{}}
	}
	return l
}

func (l *lru) shard(key lruKey) *lruShard {
	return &l.shards[(maphash.String(l.seed, key.args)^maphash.String(l.seed, key.tool))%lruShards]
}

func (l *lru) get(key lruKey) (*Entry, bool) {
	s := l.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.items[key]
	if !ok {
		return nil, false
	}
	s.ll.MoveToFront(el)
	return el.Value.(*lruItem).entry, true
}

func (l *lru) add(key lruKey, e *Entry) {
	size := len(key.tool) + len(key.args) + len(e.Args) + len(e.Body) + len(e.Error) + 96
	s := l.shard(key)
	if size > s.max {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		it := el.Value.(*lruItem)
		s.size += size - it.size
		it.entry, it.size = e, size
		s.ll.MoveToFront(el)
	} else {
		s.items[key] = s.ll.PushFront(&lruItem{key: key, entry: e, size: size})
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
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		s.ll.Init()
		s.items = map[lruKey]*list.Element{}
		s.size = 0
		s.mu.Unlock()
	}
}
