package toolenv

import (
	"bytes"
	"iter"
	"reflect"
	"slices"
	"sort"
	"sync"
	"unsafe"
)

// callMemo holds what middleware derived from a call's argument maps, so
// that each is derived once per call whatever the number of middleware
// that need it: on a call of many arguments (a client may send tens of
// thousands of keys) each pass over them costs as much as parsing them.
type callMemo struct {
	mu      sync.Mutex
	entries []memoEntry
}

type memoEntry struct {
	kind any
	m    map[string]any // the map it was derived from (kept alive, so its address stays its own)
	v    any
}

// maxMemo bounds the entries of one call (a handful of argument maps:
// as sent, coerced, renamed).
const maxMemo = 16

// MemoArgs returns what compute derives from the arguments map m, computed
// once per call, map and kind (any comparable value naming what is
// derived): middleware share the canonical form of the arguments and their
// validation instead of each walking them again. A map is recognized by
// its identity: the pipeline never changes an arguments map in place (a
// middleware that changes arguments makes a new map), so what was derived
// from it stays true. Clones share their original's memos. Safe for
// concurrent use.
func (c *Call) MemoArgs(kind any, m map[string]any, compute func() any) any {
	if c.memo == nil {
		c.memo = &callMemo{}
	}
	mm := c.memo
	p := reflect.ValueOf(m).UnsafePointer()
	mm.mu.Lock()
	for _, e := range mm.entries {
		if e.kind == kind && reflect.ValueOf(e.m).UnsafePointer() == p {
			mm.mu.Unlock()
			return e.v
		}
	}
	mm.mu.Unlock()
	v := compute()
	mm.mu.Lock()
	if len(mm.entries) >= maxMemo {
		mm.entries = mm.entries[1:]
	}
	mm.entries = append(mm.entries, memoEntry{kind: kind, m: m, v: v})
	mm.mu.Unlock()
	return v
}

// lookup returns what was derived of kind from m, if anything was.
func (c *Call) lookup(kind any, m map[string]any) (any, bool) {
	if c.memo == nil {
		return nil, false
	}
	p := reflect.ValueOf(m).UnsafePointer()
	c.memo.mu.Lock()
	defer c.memo.mu.Unlock()
	for _, e := range c.memo.entries {
		if e.kind == kind && reflect.ValueOf(e.m).UnsafePointer() == p {
			return e.v, true
		}
	}
	return nil, false
}

type argsTextKind struct{}

// ArgsFromText records that the arguments map m was parsed from text
// (ParseArgs, ParseJSONObject) and has not changed since: CanonicalOf(m)
// then writes the canonical form by streaming over the text, which gives
// the same bytes as walking the map (the text's repeated keys resolved as
// the parser resolves them) without visiting its members in the map's
// order. text must not change for the length of the call.
func (c *Call) ArgsFromText(m map[string]any, text []byte) {
	if m == nil {
		return
	}
	c.MemoArgs(argsTextKind{}, m, func() any { return text })
}

type argsParsedKind struct{}

// ArgsFromParse sets c.Args to pa's arguments and records that they were
// parsed by ParseArgsText and have not changed since: CanonicalOf then
// writes their canonical form from the parser's members, which gives
// the same bytes as walking the map (a repeated key's last member kept,
// as the parser keeps it) without reading the text again nor visiting
// the map's members in its order. ArgsFromParse(nil) does nothing.
func (c *Call) ArgsFromParse(pa *ParsedArgs) {
	if pa == nil {
		return
	}
	c.Args = pa.Args
	if pa.Args == nil {
		return
	}
	c.MemoArgs(argsParsedKind{}, pa.Args, func() any { return pa })
}

type canonicalKind struct{}

type canonicalMemo struct {
	canon string
	keys  iter.Seq[string] // the keys in byte order, each once, when found while writing canon
	nkeys int              // how many keys yields
	err   error
	// Written from a parse of many members: the members, those written
	// (kept, in order) and where each starts in canon, for the maps
	// derived from this one (spliceCanonical).
	members []jsonMember
	kept    []int32
	offs    []int32
}

type argsDerivedKind struct{}

// derivation is what ArgsDerived records: a map is base but for the
// keys in changed (sorted, each once).
type derivation struct {
	base    map[string]any
	changed []string
}

// ArgsDerived records that the arguments map m is base but for the
// outermost keys in changed: each of those holds a value of its own in m
// or is absent from it, and every other key has the same value in both
// maps. CanonicalOf(m) then writes m's canonical form from base's, when
// that was written from its parse (see ArgsFromParse): base's form
// copied around the changed members, instead of a walk over m's members
// in its order (a call may send tens of thousands of keys and have one
// of them coerced or renamed). A base itself recorded as derived stands
// for its own base, the changes joined. Neither map may change
// afterwards, as for every memo (see MemoArgs).
func (c *Call) ArgsDerived(m, base map[string]any, changed []string) {
	if m == nil || base == nil {
		return
	}
	keys := slices.Clone(changed)
	if d, ok := c.lookup(argsDerivedKind{}, base); ok {
		d := d.(derivation)
		base = d.base
		keys = append(keys, d.changed...)
	}
	if reflect.ValueOf(base).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
		return // m is its own base: nothing to derive from
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	c.MemoArgs(argsDerivedKind{}, m, func() any { return derivation{base: base, changed: keys} })
}

// spliceCanonical writes the canonical form of m, derived from the map
// whose canonical form bm is (see ArgsDerived), or reports false when bm
// does not know where its members start.
func spliceCanonical(bm canonicalMemo, m map[string]any, changed []string) (canonicalMemo, bool) {
	if bm.err != nil || bm.offs == nil {
		return canonicalMemo{}, false
	}
	n := len(bm.kept)
	key := func(i int) string { return bm.members[bm.kept[i]].k }
	// base's members from i to j-1, as they are in its form, commas
	// between them included
	run := func(i, j int) string {
		end := len(bm.canon) - 1 // the closing brace
		if j < n {
			end = int(bm.offs[j]) - 1 // the comma before member j
		}
		return bm.canon[bm.offs[i]:end]
	}
	var b bytes.Buffer
	b.Grow(len(bm.canon) + 64)
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	next := 0 // base's next member to copy
	for _, k := range changed {
		i := next + sort.Search(n-next, func(i int) bool { return key(next+i) >= k })
		if i > next {
			sep()
			b.WriteString(run(next, i))
		}
		next = i
		if i < n && key(i) == k {
			next = i + 1 // base's member is m's own or gone
		}
		if v, ok := m[k]; ok {
			sep()
			writeCanonicalString(&b, k, true)
			b.WriteByte(':')
			if err := writeCanonical(&b, v, 1); err != nil {
				return canonicalMemo{err: err}, true
			}
		}
	}
	if next < n {
		sep()
		b.WriteString(run(next, n))
	}
	b.WriteByte('}')
	canon := b.Bytes() // not written again: its bytes are the key
	return canonicalMemo{canon: unsafe.String(unsafe.SliceData(canon), len(canon))}, true
}

// CanonicalOf returns Canonical(m) as a string (an empty object for a
// nil map): the cache key of a call with these arguments, computed once
// per call and map (see MemoArgs).
func (c *Call) CanonicalOf(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	r := c.MemoArgs(canonicalKind{}, m, func() any {
		if pa, ok := c.lookup(argsParsedKind{}, m); ok {
			return canonicalFromParse(pa.(*ParsedArgs))
		}
		if d, ok := c.lookup(argsDerivedKind{}, m); ok {
			d := d.(derivation)
			if _, err := c.CanonicalOf(d.base); err == nil {
				if bm, ok := c.lookup(canonicalKind{}, d.base); ok {
					if r, ok := spliceCanonical(bm.(canonicalMemo), m, d.changed); ok {
						return r
					}
				}
			}
		}
		if text, ok := c.lookup(argsTextKind{}, m); ok {
			var b bytes.Buffer
			b.Grow(len(text.([]byte)))
			keys, err := writeCanonicalRawKeys(&b, unsafe.String(unsafe.SliceData(text.([]byte)), len(text.([]byte))), 0, true)
			canon := b.Bytes()
			r := canonicalMemo{canon: unsafe.String(unsafe.SliceData(canon), len(canon)), err: err} // canon is not written again
			if keys != nil {
				r.keys, r.nkeys = keys.all, len(keys.ends)
			}
			return r
		}
		canon, err := Canonical(m)
		return canonicalMemo{canon: string(canon), err: err}
	}).(canonicalMemo)
	return r.canon, r.err
}

// SortedKeys returns the keys of the arguments map m in byte order, each
// once, when the call knows them without sorting them: when CanonicalOf(m)
// wrote m's canonical form from its text or its parse (see ArgsFromText,
// ArgsFromParse) and m has many members (from 64). Otherwise it reports false.
func (c *Call) SortedKeys(m map[string]any) (iter.Seq[string], bool) {
	v, ok := c.lookup(canonicalKind{}, m)
	if !ok {
		return nil, false
	}
	r := v.(canonicalMemo)
	if r.err != nil || r.keys == nil || r.nkeys != len(m) {
		return nil, false
	}
	return r.keys, true
}
