package mapping

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A field path names a value inside arguments or a response: object keys
// joined by "." and "[]" after a key for the items of an array
// ("results[].isbn"). Keys that themselves hold "." or "[" cannot be
// named by a path; values under them are carried through translations
// unchanged.

// GetPath returns the value at path in v (objects only: a path with "[]"
// is not found).
func GetPath(v map[string]any, path string) (any, bool) {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// SetPath stores val at path in v, creating the objects on the way (an
// existing non-object on the way is replaced).
func SetPath(v map[string]any, path string, val any) {
	keys := strings.Split(path, ".")
	cur := v
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = val
}

// DeletePath removes the value at path, and the objects on the way that
// it leaves empty.
func DeletePath(v map[string]any, path string) {
	keys := strings.Split(path, ".")
	var walk func(m map[string]any, i int) bool
	walk = func(m map[string]any, i int) bool {
		if i == len(keys)-1 {
			delete(m, keys[i])
			return len(m) == 0
		}
		next, ok := m[keys[i]].(map[string]any)
		if !ok {
			return false
		}
		if walk(next, i+1) {
			delete(m, keys[i])
		}
		return len(m) == 0
	}
	walk(v, 0)
}

// LeafPaths returns the paths of v's leaves in a deterministic order:
// scalars, empty objects and empty arrays; array items share the path
// "key[]". Each path appears once.
func LeafPaths(v any) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range leaves(v, nil) {
		p := genericPath(l.segs)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// seg is one step of a concrete path: an object key or an array index.
type seg struct {
	key   string
	index int
	isIdx bool
}

type leaf struct {
	segs  []seg
	value any
}

// leaves flattens v into its leaves with concrete paths, objects in
// sorted key order.
func leaves(v any, prefix []seg) []leaf {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return []leaf{{segs: clone(prefix), value: x}}
		}
		var out []leaf
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, leaves(x[k], append(prefix, seg{key: k}))...)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []leaf{{segs: clone(prefix), value: x}}
		}
		var out []leaf
		for i, e := range x {
			out = append(out, leaves(e, append(prefix, seg{index: i, isIdx: true}))...)
		}
		return out
	}
	return []leaf{{segs: clone(prefix), value: v}}
}

func clone(s []seg) []seg { return append([]seg(nil), s...) }

// genericPath writes a concrete path with its indexes as "[]".
func genericPath(segs []seg) string {
	var b strings.Builder
	for _, s := range segs {
		if s.isIdx {
			b.WriteString("[]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// parseGeneric splits a generic path into segments; each "[]" becomes an
// index segment with index -1, to be filled from a concrete path.
func parseGeneric(p string) []seg {
	var out []seg
	for _, part := range strings.Split(p, ".") {
		key := part
		n := 0
		for strings.HasSuffix(key, "[]") {
			key = strings.TrimSuffix(key, "[]")
			n++
		}
		if key != "" {
			out = append(out, seg{key: key})
		}
		for i := 0; i < n; i++ {
			out = append(out, seg{index: -1, isIdx: true})
		}
	}
	return out
}

// rebuild assembles leaves into a value. Leaves whose paths conflict (an
// object and a scalar at the same place) keep the first.
func rebuild(ls []leaf) any {
	var root any
	for _, l := range ls {
		root = insert(root, l.segs, l.value)
	}
	return root
}

func insert(node any, segs []seg, val any) any {
	if len(segs) == 0 {
		if node != nil {
			return node
		}
		return val
	}
	s := segs[0]
	if s.isIdx {
		arr, ok := node.([]any)
		if node != nil && !ok {
			return node
		}
		for len(arr) <= s.index {
			arr = append(arr, nil)
		}
		arr[s.index] = insert(arr[s.index], segs[1:], val)
		return arr
	}
	m, ok := node.(map[string]any)
	if node != nil && !ok {
		return node
	}
	if m == nil {
		m = map[string]any{}
	}
	m[s.key] = insert(m[s.key], segs[1:], val)
	return m
}

// Flatten returns the leaves of v keyed by their concrete paths
// ("results[0].isbn"), for tests and reports.
func Flatten(v any) map[string]any {
	out := map[string]any{}
	for _, l := range leaves(v, nil) {
		var b strings.Builder
		for _, s := range l.segs {
			if s.isIdx {
				b.WriteString("[" + strconv.Itoa(s.index) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		}
		out[b.String()] = l.value
	}
	return out
}
