package structural

import (
	"strings"

	"github.com/toolenv/toolenv/mapping/terms"
)

// specialisation says a tool is another with some arguments fixed.
type specialisation struct {
	values map[string]any // argument path → fixed value
	rest   []string       // the specialised tool's name words without the values'
}

// antonyms pair the canonical words of boolean arguments with their
// opposites, for names like sort_data_descending (ascending = false).
var antonyms = func() map[string]string {
	pairs := [][2]string{{"ascending", "descending"}, {"include", "exclude"}, {"enabled", "disabled"}, {"visible", "hidden"}}
	m := map[string]string{}
	for _, p := range pairs {
		a, b := terms.Canonical(p[0]), terms.Canonical(p[1])
		m[a], m[b] = b, a
	}
	return m
}()

// specialise reports whether tool b is tool a with arguments fixed: a has
// enum or boolean arguments that b lacks, and b's name carries their
// values where a's name does not — an enum value (the longest one that
// fits: "greater_than_equal_to" over "greater_than"), a boolean's name
// for true or its antonym for false. aggregate_data_count_distinct is
// aggregate_data with aggregation_type "count" and distinct true.
func specialise(a, b *Profile) *specialisation {
	if a.opaque || b.opaque {
		return nil // a generated name carries no values
	}
	sp := &specialisation{values: map[string]any{}, rest: b.name}
	for {
		param, value, rest := specialiseOnce(a, b, sp)
		if param == "" {
			break
		}
		sp.values[param], sp.rest = value, rest
	}
	if len(sp.values) == 0 {
		return nil
	}
	return sp
}

// specialiseOnce finds the next argument of a fixed in b's remaining name
// words.
func specialiseOnce(a, b *Profile, sp *specialisation) (param string, value any, rest []string) {
	bestLen := 0
	for _, f := range a.Inputs {
		if _, done := sp.values[f.Path]; done || hasField(b, f) {
			continue
		}
		try := func(words []string, v any) {
			if len(words) == 0 || len(words) < bestLen {
				return
			}
			// Between values of one length (synonyms: "date" and "day"),
			// the one written in b's name as it is wins.
			if len(words) == bestLen && (!literal(b, v) || literal(b, value)) {
				return
			}
			r, ok := cut(sp.rest, words)
			if !ok {
				return
			}
			if _, inA := cut(a.name, words); inA {
				return
			}
			param, value, rest, bestLen = f.Path, v, r, len(words)
		}
		switch {
		case len(f.Enum) > 0:
			for _, v := range f.Enum {
				try(terms.Name(v), v)
			}
		case f.Type == "boolean" && len(f.last) == 1:
			try(f.last, true)
			if anti, ok := antonyms[f.last[0]]; ok {
				try([]string{anti}, false)
			}
		}
	}
	return param, value, rest
}

// hasField reports whether p has an input with f's name.
func hasField(p *Profile, f *Field) bool {
	for _, g := range p.Inputs {
		if g.Path == f.Path || (len(g.last) > 0 && terms.Jaccard(g.last, f.last) == 1) {
			return true
		}
	}
	return false
}

// cut removes the first contiguous run of words from name and reports
// whether it was there.
func cut(name, words []string) ([]string, bool) {
	for i := 0; i+len(words) <= len(name); i++ {
		match := true
		for k, w := range words {
			if name[i+k] != w {
				match = false
				break
			}
		}
		if match {
			rest := append(append([]string(nil), name[:i]...), name[i+len(words):]...)
			return rest, true
		}
	}
	return nil, false
}

// literal reports whether v, a string, appears as it is in p's tool name.
func literal(p *Profile, v any) bool {
	s, ok := v.(string)
	return ok && s != "" && strings.Contains(strings.ToLower(p.Tool.Name), strings.ToLower(s))
}
