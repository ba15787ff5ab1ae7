package simulate

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// substitution replaces a recorded call's argument value with the current
// call's value of the same parameter.
type substitution struct {
	old, new string // the values as text
	// newValue is the current value, written where a whole JSON value
	// equal to old stood.
	newValue any
	// forms are the ways old may be written inside a text, each with the
	// same writing of new: as is, and escaped as inside a Python string
	// literal in single or double quotes (a str(dict) in a text).
	forms []form
}

type form struct{ old, new string }

// pyEscape escapes s as a Python string literal in quote q does.
func pyEscape(s string, q byte) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, string(q), `\`+string(q))
}

// textForms are the writings of old (and new) a text may hold, longest
// first.
func textForms(old, new string) []form {
	fs := []form{{old, new}}
	for _, q := range []byte{'\'', '"'} {
		if e := pyEscape(old, q); e != old {
			fs = append(fs, form{e, pyEscape(new, q)})
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return len(fs[i].old) > len(fs[j].old) })
	return fs
}

// substitutions pairs the scalar arguments of the recorded call from with
// the current call's values of the same parameter (names compared as
// normName does) where they differ, longest recorded value first.
func substitutions(from, to map[string]any) []substitution {
	byName := make(map[string]any, len(to))
	for k, v := range to {
		byName[normName(k)] = v
	}
	var subs []substitution
	seen := map[string]bool{}
	for k, rv := range from {
		cv, ok := to[k]
		if !ok {
			cv, ok = byName[normName(k)]
		}
		if !ok {
			continue
		}
		old, okOld := scalarText(rv)
		cur, okNew := scalarText(cv)
		if !okOld || !okNew || old == cur || strings.TrimSpace(old) == "" || seen[old] {
			continue
		}
		seen[old] = true
		subs = append(subs, substitution{old: old, new: cur, newValue: cv, forms: textForms(old, cur)})
	}
	sort.Slice(subs, func(i, j int) bool {
		if len(subs[i].old) != len(subs[j].old) {
			return len(subs[i].old) > len(subs[j].old)
		}
		return subs[i].old < subs[j].old
	})
	return subs
}

// scalarText is a scalar argument as the text it shows as in a response.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// adaptBody rewrites a recorded response for another call: wherever one of
// the recorded call's argument values appears in it (as a whole value, an
// object key, or a word of a text, also inside a string that holds JSON
// or a Python literal), the current call's value takes its place. It
// returns the body unchanged (and 0) when no argument appears.
func adaptBody(body json.RawMessage, subs []substitution) (json.RawMessage, int) {
	if len(subs) == 0 || len(body) == 0 {
		return body, 0
	}
	v, err := pyfmt.DecodeOrdered(body)
	if err != nil {
		return body, 0
	}
	a := &adapter{subs: subs}
	out := a.value(v, 0)
	if a.n == 0 {
		return body, 0
	}
	return encodeJSON(out), a.n
}

type adapter struct {
	subs []substitution
	n    int // replacements made
}

func (a *adapter) value(v any, depth int) any {
	if depth > maxDepth {
		return v
	}
	switch x := v.(type) {
	case pyfmt.Dict:
		out := make(pyfmt.Dict, 0, len(x))
		for _, m := range x {
			key := m.Key
			for _, s := range a.subs {
				if key == s.old {
					key = s.new
					a.n++
					break
				}
			}
			if _, dup := out.Get(key); dup {
				key = m.Key // never merge two members
			}
			out = append(out, pyfmt.Item{Key: key, Value: a.value(m.Value, depth+1)})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = a.value(e, depth+1)
		}
		return out
	case json.Number:
		for _, s := range a.subs {
			if x.String() == s.old {
				a.n++
				switch nv := s.newValue.(type) {
				case json.Number:
					return nv
				case string:
					if _, ok := numberText(nv); ok {
						return json.Number(strings.TrimSpace(nv))
					}
					return nv
				}
				return s.new
			}
		}
		return x
	case string:
		return a.text(x)
	}
	return v
}

// numberText reports whether s is a JSON number.
func numberText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || !json.Valid([]byte(s)) || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return "", false
	}
	return s, true
}

// text replaces each recorded value that stands as a whole word of s
// (not inside a longer run of letters and digits).
func (a *adapter) text(s string) string {
	var b strings.Builder
	changed := false
	last := 0
	for i := 0; i < len(s); {
		matched := false
	subs:
		for _, sub := range a.subs {
			for _, f := range sub.forms {
				if !strings.HasPrefix(s[i:], f.old) || !wordEdges(s, i, i+len(f.old), f.old) {
					continue
				}
				b.WriteString(s[last:i])
				b.WriteString(quotedFor(s, i, i+len(f.old), f))
				i += len(f.old)
				last, matched, changed = i, true, true
				a.n++
				break subs
			}
		}
		if !matched {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	if !changed {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// quotedFor is the new text for f found at s[i:j]: where the old value
// stood alone between two quotes of one kind (a Python or JSON string
// literal in a text) and was written as is, the new one is escaped for
// that literal so that it stays one.
func quotedFor(s string, i, j int, f form) string {
	if i == 0 || j >= len(s) || s[i-1] != s[j] || (s[j] != '\'' && s[j] != '"') {
		return f.new
	}
	q := s[j]
	if pyEscape(f.old, q) != f.old {
		return f.new // old was not written escaped here
	}
	return pyEscape(f.new, q)
}

// wordEdges reports whether word, found at s[i:j], stands as a whole
// word: where it begins (ends) with a letter or digit, the rune before
// (after) it is not one.
func wordEdges(s string, i, j int, word string) bool {
	first, _ := utf8.DecodeRuneInString(word)
	last, _ := utf8.DecodeLastRuneInString(word)
	return (!isWordRune(first) || atBoundary(s, i, true)) && (!isWordRune(last) || atBoundary(s, j, false))
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// atBoundary reports whether position i of s is not inside a word: the
// rune before it (start) or at it (end) is not a letter or digit.
func atBoundary(s string, i int, start bool) bool {
	var r rune
	if start {
		if i == 0 {
			return true
		}
		r, _ = utf8.DecodeLastRuneInString(s[:i])
	} else {
		if i >= len(s) {
			return true
		}
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	return !isWordRune(r)
}
