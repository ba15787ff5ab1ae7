package structural

import (
	"github.com/toolenv/toolenv/mapping/terms"
)

// specialisation says a tool is another with one argument fixed.
type specialisation struct {
	param string
	value any
	rest  []string // the specialised tool's name words without the value's
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

// specialise reports whether tool b is tool a with one argument fixed: a
// has an enum or boolean argument that b lacks, and b's name carries one
// of its values (an enum value, the boolean's name for true, its antonym
// for false) that a's name does not. Among several, the longest value
// wins ("greater_than_equal_to" over "greater_than").
func specialise(a, b *Profile) *specialisation {
	var best *specialisation
	bestLen := 0
	for _, f := range a.Inputs {
		if hasField(b, f) {
			continue
		}
		try := func(words []string, value any) {
			if len(words) == 0 || len(words) <= bestLen {
				return
			}
			rest, ok := cut(b.name, words)
			if !ok {
				return
			}
			if _, inA := cut(a.name, words); inA {
				return
			}
			best = &specialisation{param: f.Path, value: value, rest: rest}
			bestLen = len(words)
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
	return best
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
