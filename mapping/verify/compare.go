package verify

import (
	"bytes"
	"encoding/json"
	"sort"

	toolenv "github.com/toolenv/toolenv"
)

// sameAnswer reports whether two answers hold the same thing: equal
// JSON once lists of records (objects or lists) are put in a canonical
// order — a list of records is a set of rows whose order an API rarely
// promises — while lists of scalars (result column names, a row's
// values) keep theirs. Answers that are not JSON are compared as text.
func sameAnswer(a, b json.RawMessage) bool {
	ka, okA := answerKey(a)
	kb, okB := answerKey(b)
	if !okA || !okB {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return ka == kb
}

// answerKey is the canonical form sameAnswer compares.
func answerKey(body json.RawMessage) (string, bool) {
	var v any
	if toolenv.DecodeJSON(bytes.TrimSpace(body), &v) != nil {
		return "", false
	}
	b, err := toolenv.Canonical(normalise(v, 0))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// normalise sorts every list of records by the records' canonical form.
func normalise(v any, depth int) any {
	if depth > 64 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalise(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		records := len(x) > 0
		for i, e := range x {
			out[i] = normalise(e, depth+1)
			switch e.(type) {
			case map[string]any, []any:
			default:
				records = false
			}
		}
		if records {
			keys := make([]string, len(out))
			for i, e := range out {
				b, _ := toolenv.Canonical(e)
				keys[i] = string(b)
			}
			idx := make([]int, len(out))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
			sorted := make([]any, len(out))
			for i, k := range idx {
				sorted[i] = out[k]
			}
			return sorted
		}
		return out
	}
	return v
}
