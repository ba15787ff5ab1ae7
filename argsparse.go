package toolenv

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"unsafe"
)

// ParsedArgs is a JSON object of a call's arguments as ParseArgsText
// parsed it: the map, and the outermost object's members in the order
// they came, from which Call.CanonicalOf writes the cache key (see
// Call.ArgsFromParse) without reading the text again.
type ParsedArgs struct {
	// Args are the arguments, as ParseArgs gives them.
	Args map[string]any
	// members are the outermost object's members as they came (a
	// repeated key's last member is the one Args holds), in the chunks
	// the parser collected them in: joined only when the canonical form
	// is written (a strict tool refusing the call never needs them).
	members [][]jsonMember
	// size is the length of the text parsed (the canonical form is
	// rarely longer).
	size int
}

// ParseArgsText parses data, a JSON object of a call's arguments, as
// ParseArgs does (as ParseArgsOwned when owned: data must then not change
// afterwards), keeping what Call.ArgsFromParse needs to write the
// arguments' canonical form from their members. Its errors are
// ParseArgs's, word for word.
func ParseArgsText(data []byte, s *Schema, owned bool) (*ParsedArgs, error) {
	p := argsParser(data, s, owned)
	p.keepTop = true
	m, err := p.documentObject()
	if err != nil {
		return nil, err
	}
	return &ParsedArgs{Args: m, members: p.top, size: len(data)}, nil
}

// argsParser returns the parser of ParseArgs (ParseArgsOwned when owned)
// for data and the tool input schema s.
func argsParser(data []byte, s *Schema, owned bool) jsonParser {
	p := jsonParser{data: data, keep: undescribed(s)}
	if owned {
		p.arena = ownedArena(data)
	} else {
		p.arena = argsArena(data)
	}
	p.boxes = boxesFor(p.arena)
	return p
}

// writeCanonicalMembers writes the canonical form of the object whose
// members a holds in the order they came, as Canonical writes the map
// ParseJSON makes of them (a repeated key's last member kept), and
// returns the indexes in a of the members written, in order, and, when
// offsets, where each of them starts in what it wrote (the opening brace
// at 0).
func writeCanonicalMembers(b *bytes.Buffer, a []jsonMember, offsets bool) (kept, offs []int32, err error) {
	// Where each run of members in order starts: most calls' members
	// come in order, or in a few ordered runs (a documented argument or
	// two before many others), merged; more runs are sorted.
	runs := []int{0}
	for i := 1; i < len(a) && len(runs) <= maxMergeRuns; i++ {
		if a[i-1].k >= a[i].k {
			runs = append(runs, i)
		}
	}
	order := make([]int32, len(a))
	for i := range order {
		order[i] = int32(i)
	}
	switch {
	case len(runs) == 1: // in order already, each key once
		offs = memberOffsets(offsets, len(order))
		return order, offs, writeMembers(b, a, order, offs)
	case len(runs) <= maxMergeRuns:
		mergeRuns(order, runs, make([]int32, len(order)), func(i, j int32) bool { return a[i].k < a[j].k })
	default:
		mo := make([]memberOrder, len(a))
		for i := range a {
			mo[i] = memberOrder{p: keyWord(a[i].k, 0), i: int32(i)}
		}
		sortByWords(a, mo, make([]memberOrder, len(a)), 0)
		for i, o := range mo {
			order[i] = o.i
		}
	}
	kept = order[:0]
	for i := 0; i < len(order); {
		// Members of one key are together; the last to come wins.
		last := order[i]
		j := i + 1
		for ; j < len(order) && a[order[j]].k == a[order[i]].k; j++ {
			last = max(last, order[j])
		}
		kept = append(kept, last)
		i = j
	}
	offs = memberOffsets(offsets, len(kept))
	return kept, offs, writeMembers(b, a, kept, offs)
}

// memberOffsets returns room for n members' offsets when want, else nil.
func memberOffsets(want bool, n int) []int32 {
	if !want {
		return nil
	}
	return make([]int32, n)
}

// mergeRuns sorts order by less, given where each of its runs already in
// that order starts (runs[0] is 0): the runs merged two by two through
// tmp (at least as long as order), the earlier run first among elements
// less does not tell apart, so that a repeated key's members stay in the
// order they came. Canonical's two writers (from a parse's members and
// streaming over the text) share it.
func mergeRuns(order []int32, runs []int, tmp []int32, less func(i, j int32) bool) {
	tmp = tmp[:len(order)]
	for len(runs) > 1 {
		next := runs[:0:0]
		for r := 0; r < len(runs); r += 2 {
			lo, mid, hi := runs[r], len(order), len(order)
			if r+1 < len(runs) {
				mid = runs[r+1]
			}
			if r+2 < len(runs) {
				hi = runs[r+2]
			}
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if less(order[j], order[i]) {
					tmp[k], j = order[j], j+1
				} else {
					tmp[k], i = order[i], i+1
				}
				k++
			}
			k += copy(tmp[k:], order[i:mid])
			copy(tmp[k:], order[j:hi])
			copy(order[lo:hi], tmp[lo:hi])
			next = append(next, lo)
		}
		runs = next
	}
}

// writeMembers writes the object of a's members at kept, in that order.
func writeMembers(b *bytes.Buffer, a []jsonMember, kept []int32, offs []int32) error {
	// Most members are a plain key and a scalar already in canonical
	// form: they are appended to the buffer's free space as they are, a
	// few bytes each, instead of through a Buffer call per piece (which
	// cost more than the bytes: a megabyte of small keys took 3.4 ms).
	// Anything else goes through writeCanonical, as before.
	start := b.Len()
	var rc *rawCanon
	asIsMisses := 0         // objects or arrays in a row not already canonical
	var lastRaw string      // the last object or array text written
	var lastAt, lastLen int // and where its canonical form is in b
	out := b.AvailableBuffer()
	out = append(out, '{')
	for n, i := range kept {
		if n > 0 {
			out = append(out, ',')
		}
		if offs != nil {
			offs[n] = int32(b.Len() + len(out) - start)
		}
		m := &a[i]
		if plainString(m.k) {
			lit, quoted, ok := plainScalar(m.v)
			if r, raw := m.v.(RawJSON); raw && asIsMisses < maxAsIsMisses {
				// A short object or array kept as text is often already
				// in canonical form ({}, [1], {"a":1}): copied, not
				// rewritten. After many that are not in a row, the rest
				// of the call goes straight to the writer, whose work
				// the check would only add to.
				if lit, ok = r.text, rawCanonicalAsIs(r.text); ok {
					asIsMisses = 0
				} else {
					asIsMisses++
				}
			}
			if ok {
				out = append(out, '"')
				out = append(out, m.k...)
				out = append(out, '"', ':')
				if quoted {
					out = append(out, '"')
					out = append(out, lit...)
					out = append(out, '"')
				} else {
					out = append(out, lit...)
				}
				continue
			}
		}
		b.Write(out)
		writeCanonicalString(b, m.k, true)
		b.WriteByte(':')
		if r, ok := m.v.(RawJSON); ok && r.text != "" {
			// An object or array kept as text: one writer serves every
			// such member (from the pool per value, many small objects
			// cost more in taking and giving back than in writing), and
			// the same text as the last one written is copied from
			// where it was (the parse boxes a short one once).
			if len(r.text) <= maxAsIs && r.text == lastRaw {
				b.Write(b.Bytes()[lastAt : lastAt+lastLen])
			} else {
				if rc == nil {
					rc = rawCanons.Get().(*rawCanon)
					defer func() { rc.release() }()
				}
				at := b.Len()
				err := rc.write(b, r.text, 1)
				rc.reset()
				if err != nil {
					return err
				}
				lastRaw, lastAt, lastLen = r.text, at, b.Len()-at
			}
		} else if err := writeCanonical(b, m.v, 1); err != nil {
			return err
		}
		out = b.AvailableBuffer()
	}
	out = append(out, '}')
	b.Write(out)
	return nil
}

// maxAsIsMisses is how many objects or arrays in a row that are not in
// canonical form as they are writeMembers checks before it stops checking.
const maxAsIsMisses = 16

// plainScalar returns the canonical text of v when writeCanonical would
// write it as it is: null, a boolean, a json.Number already in
// canonical form, a string with nothing to escape (quoted reports
// that it goes between quotes).
func plainScalar(v any) (lit string, quoted, ok bool) {
	switch x := v.(type) {
	case nil:
		return "null", false, true
	case bool:
		if x {
			return "true", false, true
		}
		return "false", false, true
	case json.Number:
		if alreadyCanonical(strings.TrimPrefix(string(x), "-")) {
			return string(x), false, true
		}
	case string:
		if plainString(x) {
			return x, true, true
		}
	}
	return "", false, false
}

// memberKeys yields the keys of the members of a at kept, in order.
func memberKeys(a []jsonMember, kept []int32) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, i := range kept {
			if !yield(a[i].k) {
				return
			}
		}
	}
}

// canonicalFromParse writes the canonical form of pa's arguments from
// their members.
func canonicalFromParse(pa *ParsedArgs) canonicalMemo {
	sent := 0 // members sent, repeated keys counted each time
	for _, c := range pa.members {
		sent += len(c)
	}
	var all []jsonMember
	switch {
	case sent >= minTopKeys && len(pa.Args)*2 <= sent:
		// Most members repeat a key: the map holds each key's last
		// value, as the members written would, and sorting its few keys
		// costs less than sorting every member (one key sent 100,000
		// times sorted 100,000 members).
		all = make([]jsonMember, 0, len(pa.Args))
		for k, v := range pa.Args {
			all = append(all, jsonMember{k, v})
		}
	case len(pa.members) == 1:
		all = pa.members[0] // one chunk: the members as they are
	default:
		all = make([]jsonMember, 0, sent)
		for _, c := range pa.members {
			all = append(all, c...)
		}
	}
	var b bytes.Buffer
	b.Grow(pa.size)
	// Where each member starts, for the canonical forms of maps derived
	// from this one (Call.ArgsDerived): only for many members, whose
	// offsets fit an int32.
	many := sent >= minTopKeys && pa.size < math.MaxInt32/2
	kept, offs, err := writeCanonicalMembers(&b, all, many)
	if err != nil {
		return canonicalMemo{err: err}
	}
	// b is not written again: its bytes are the key, not a copy of them.
	canon := b.Bytes()
	r := canonicalMemo{canon: unsafe.String(unsafe.SliceData(canon), len(canon))}
	if sent >= minTopKeys { // as from the text (SortedKeys)
		r.keys, r.nkeys = memberKeys(all, kept), len(kept)
	}
	if many && len(canon) < math.MaxInt32 {
		r.members, r.kept, r.offs = all, kept, offs
	}
	return r
}
