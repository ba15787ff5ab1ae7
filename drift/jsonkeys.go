package drift

import (
	"bytes"
	"encoding/json"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// renameKeys renames the key from to to in every object found at path in
// the JSON text data, leaving everything else — key order, whitespace,
// number literals — byte for byte as it was. path is "" for the top-level
// object, "[]" for the elements of a top-level array, "a.b[]" for the
// elements of the array at a.b. An object that already has a key to keeps
// its keys (renaming would make a duplicate). It reports false when data
// is not valid JSON.
func renameKeys(data []byte, path, from, to string) ([]byte, bool) {
	r := &keyRenamer{data: data, path: path, from: from, to: to}
	var b strings.Builder
	b.Grow(len(data) + 16)
	r.out = &b
	r.space()
	if !r.value("", 0) {
		return nil, false
	}
	r.space()
	if r.pos != len(r.data) {
		return nil, false
	}
	return []byte(b.String()), true
}

type keyRenamer struct {
	data           []byte
	pos            int
	out            *strings.Builder
	path, from, to string
}

const maxKeyDepth = 256

func (r *keyRenamer) space() {
	start := r.pos
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
			continue
		}
		break
	}
	r.out.Write(r.data[start:r.pos])
}

func (r *keyRenamer) value(path string, depth int) bool {
	if depth > maxKeyDepth || r.pos >= len(r.data) {
		return false
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return r.object(path, depth)
	case c == '[':
		return r.array(path, depth)
	case c == '"':
		_, raw, ok := r.str()
		r.out.Write(raw)
		return ok
	default:
		start := r.pos
		for r.pos < len(r.data) && strings.IndexByte(",]} \t\n\r", r.data[r.pos]) < 0 {
			r.pos++
		}
		lit := r.data[start:r.pos]
		if !json.Valid(lit) {
			return false
		}
		r.out.Write(lit)
		return true
	}
}

// str reads a JSON string, returning its value and raw bytes.
func (r *keyRenamer) str() (string, []byte, bool) {
	start := r.pos
	r.pos++
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case '\\':
			r.pos += 2
			continue
		case '"':
			r.pos++
			raw := r.data[start:r.pos]
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", nil, false
			}
			return s, raw, true
		}
		r.pos++
	}
	return "", nil, false
}

func (r *keyRenamer) object(path string, depth int) bool {
	// First pass: does the object already hold the target key?
	hasTo := false
	if path == r.path {
		hasTo = r.objectHas(r.to)
	}
	if r.open('{', '}') {
		return true
	}
	for {
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return false
		}
		key, raw, ok := r.str()
		if !ok {
			return false
		}
		if path == r.path && key == r.from && !hasTo {
			enc, _ := toolenv.MarshalJSONNoHTML(r.to)
			r.out.Write(enc)
		} else {
			r.out.Write(raw)
		}
		r.space()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return false
		}
		r.out.WriteByte(':')
		r.pos++
		r.space()
		child := key
		if path != "" {
			child = path + "." + key
		}
		if !r.value(child, depth+1) {
			return false
		}
		if more, ok := r.next('}'); !more {
			return ok
		}
	}
}

// objectHas reports whether the object starting at r.pos has key k at its
// top level, without consuming anything.
func (r *keyRenamer) objectHas(k string) bool {
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(r.data[r.pos:]))
	if err := d.Decode(&m); err != nil {
		return false
	}
	_, ok := m[k]
	return ok
}

func (r *keyRenamer) array(path string, depth int) bool {
	if r.open('[', ']') {
		return true
	}
	for {
		if !r.value(path+"[]", depth+1) {
			return false
		}
		if more, ok := r.next(']'); !more {
			return ok
		}
	}
}

// open copies the opening bracket of a container; empty says the
// closing one follows at once (copied too).
func (r *keyRenamer) open(opener, closer byte) (empty bool) {
	r.out.WriteByte(opener)
	r.pos++
	r.space()
	if r.pos < len(r.data) && r.data[r.pos] == closer {
		r.out.WriteByte(closer)
		r.pos++
		return true
	}
	return false
}

// next copies what follows a member or an item: a comma, after which
// another follows (more), or the closing bracket, which ends the
// container (ok); anything else is malformed (neither).
func (r *keyRenamer) next(closer byte) (more, ok bool) {
	r.space()
	if r.pos >= len(r.data) {
		return false, false
	}
	switch r.data[r.pos] {
	case ',':
		r.out.WriteByte(',')
		r.pos++
		r.space()
		return true, true
	case closer:
		r.out.WriteByte(closer)
		r.pos++
		return false, true
	}
	return false, false
}
