package toolenv

import "bytes"

// ParsedArgs is a JSON object of a call's arguments as ParseArgsText
// parsed it: the map, and the outermost object's members in the order
// they came, from which Call.CanonicalOf writes the cache key (see
// Call.ArgsFromParse) without reading the text again.
type ParsedArgs struct {
	// Args are the arguments, as ParseArgs gives them.
	Args map[string]any
	// members are the outermost object's members as they came (a
	// repeated key's last member is the one Args holds).
	members []jsonMember
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
// returns the indexes in a of the members written, in order.
func writeCanonicalMembers(b *bytes.Buffer, a []jsonMember) ([]int32, error) {
	kept := make([]int32, 0, len(a))
	sorted := true
	for i := 1; i < len(a); i++ {
		if a[i-1].k >= a[i].k {
			sorted = false
			break
		}
	}
	if sorted {
		for i := range a {
			kept = append(kept, int32(i))
		}
	} else {
		order := make([]memberOrder, len(a))
		for i := range a {
			order[i] = memberOrder{p: keyWord(a[i].k, 0), i: int32(i)}
		}
		sortByWords(a, order, make([]memberOrder, len(a)), 0)
		for i := 0; i < len(order); {
			// Members of one key are together; the last to come wins.
			last := order[i].i
			j := i + 1
			for ; j < len(order) && a[order[j].i].k == a[order[i].i].k; j++ {
				last = max(last, order[j].i)
			}
			kept = append(kept, last)
			i = j
		}
	}
	b.WriteByte('{')
	for n, i := range kept {
		if n > 0 {
			b.WriteByte(',')
		}
		m := &a[i]
		writeCanonicalString(b, m.k, true)
		b.WriteByte(':')
		if err := writeCanonical(b, m.v, 1); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return kept, nil
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
	var b bytes.Buffer
	b.Grow(pa.size)
	kept, err := writeCanonicalMembers(&b, pa.members)
	if err != nil {
		return canonicalMemo{err: err}
	}
	r := canonicalMemo{canon: b.String()}
	if len(pa.members) >= minTopKeys { // as from the text (SortedKeys)
		r.keys, r.nkeys = memberKeys(pa.members, kept), len(kept)
	}
	return r
}
