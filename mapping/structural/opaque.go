package structural

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolenv/toolenv/mapping/terms"
)

// Opaque names. An API whose names were generated (FUNC_12, ARG_7,
// param3, op_41) says nothing by its names: the only thing telling its
// names apart is a serial number. Comparing such a name with a real one
// would score 0 and count as evidence against every pair; it is no
// evidence at all, so the name signal is left out of the comparison
// (tool names and field names alike) and the descriptions, fields and
// values decide.
//
// A name is opaque when it follows a template shared by many names of
// its collection — the name with every run of digits replaced by "#",
// holding at most one word besides the number ("FUNC_#", "ARG_#",
// "param#") — used by at least minOpaque distinct names and by at least
// half of the collection's names of its kind (tool names, or field
// names). "address_line1"/"address_line2" or "v1_users"/"v2_users" are
// not opaque: their template is rare or carries more than one word.

// minOpaque is the least number of distinct names sharing a template
// before the template is taken for a generator's.
const minOpaque = 3

// template returns a name with every run of digits replaced by "#", and
// whether it had any digits and at most one word besides them.
func template(name string) (string, bool) {
	var b strings.Builder
	digits, inDigits := false, false
	for _, r := range name {
		if r >= '0' && r <= '9' {
			if !inDigits {
				b.WriteByte('#')
			}
			digits, inDigits = true, true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	if !digits {
		return "", false
	}
	t := b.String()
	words := 0
	for w := range terms.Words(t) {
		if w != "" {
			words++
		}
	}
	return t, words <= 1
}

// opaqueTemplates returns the templates of names that are opaque: shared
// by at least minOpaque distinct names and by at least half of them.
func opaqueTemplates(names map[string]bool) map[string]bool {
	count := map[string]int{}
	for n := range names {
		if t, ok := template(n); ok {
			count[t]++
		}
	}
	out := map[string]bool{}
	for t, c := range count {
		if c >= minOpaque && 2*c >= len(names) {
			out[t] = true
		}
	}
	return out
}

// isOpaque reports whether name follows one of the templates.
func isOpaque(name string, templates map[string]bool) bool {
	if len(templates) == 0 {
		return false
	}
	t, ok := template(name)
	return ok && templates[t]
}

// markOpaque finds, per collection, the opaque tool names and field
// names of the profiles and marks them.
func markOpaque(profiles []*Profile) {
	byColl := map[string][]*Profile{}
	for _, p := range profiles {
		byColl[p.Tool.Collection] = append(byColl[p.Tool.Collection], p)
	}
	for _, ps := range byColl {
		toolNames, fieldNames := map[string]bool{}, map[string]bool{}
		for _, p := range ps {
			toolNames[p.Tool.Name] = true
			for _, f := range p.fields() {
				fieldNames[lastSegment(f.Path)] = true
			}
		}
		tt, ft := opaqueTemplates(toolNames), opaqueTemplates(fieldNames)
		for _, p := range ps {
			p.opaque = isOpaque(p.Tool.Name, tt) && p.Tool.Title == ""
			for _, f := range p.fields() {
				f.opaque = isOpaque(lastSegment(f.Path), ft)
			}
			p.descText = withoutMentions(prose(p.Tool), p.mentionable(), func(tok string) bool {
				return isOpaque(tok, tt) || isOpaque(tok, ft)
			})
		}
	}
}

// fields returns the profile's arguments and response fields.
func (p *Profile) fields() []*Field {
	return append(append(make([]*Field, 0, len(p.Inputs)+len(p.Outputs)), p.Inputs...), p.Outputs...)
}

// mentionable returns the identifiers a tool's description may mention
// by name rather than by meaning: the tool's own name and the names of
// its arguments (every segment of their paths, and the paths and their
// prefixes: operation_args.value).
func (p *Profile) mentionable() map[string]bool {
	out := map[string]bool{p.Tool.Name: true}
	for _, f := range p.Inputs {
		path := strings.ReplaceAll(f.Path, "[]", "")
		segs := strings.Split(path, ".")
		for i, seg := range segs {
			out[seg] = true
			out[strings.Join(segs[:i+1], ".")] = true
		}
	}
	return out
}

// withoutMentions returns a description with the mentions of the given
// identifiers (and of tokens opaque says are generated names) removed. A
// description that says "the rows where superhero.superhero_name equals
// `superhero_name`" refers to the argument by its name; after a rename
// ("equals `ARG_34`") the reference is the same, only its spelling
// changed, so neither spelling should count as content. A mention is an
// identifier standing alone (not a segment of a dotted path such as
// superhero.superhero_name, which names a column) that is either marked
// as code (after a backtick, quote, brace, angle bracket, colon or
// dollar) or spelled as no prose word is (with an underscore, a digit or
// an inner capital). A plain word ("gender") in prose stays: it is
// content too.
func withoutMentions(desc string, idents map[string]bool, opaque func(string) bool) string {
	if desc == "" {
		return desc
	}
	var b strings.Builder
	b.Grow(len(desc))
	i := 0
	for i < len(desc) {
		r, size := utf8.DecodeRuneInString(desc[i:])
		if !isIdent(r) {
			b.WriteString(desc[i : i+size])
			i += size
			continue
		}
		j := identEnd(desc, i)
		// A dotted chain (table.column, or an argument's path such as
		// operation_args.value) is one token: a mention when it is one of
		// the tool's own argument paths or made of generated names only.
		k := j
		for k+1 < len(desc) && desc[k] == '.' {
			r2, _ := utf8.DecodeRuneInString(desc[k+1:])
			if !isIdent(r2) {
				break
			}
			k = identEnd(desc, k+1)
		}
		if k > j {
			chain := desc[i:k]
			if idents[chain] || allOpaque(chain, opaque) {
				b.WriteByte(' ')
			} else {
				b.WriteString(chain)
			}
			i = k
			continue
		}
		tok := desc[i:j]
		if (idents[tok] || opaque(tok)) && standsAlone(desc, i, j) && (codeMarked(desc, i) || !proseWord(tok) || opaque(tok)) {
			b.WriteByte(' ')
		} else {
			b.WriteString(tok)
		}
		i = j
	}
	return b.String()
}

// identEnd returns the end of the identifier starting at i.
func identEnd(desc string, i int) int {
	for i < len(desc) {
		r, size := utf8.DecodeRuneInString(desc[i:])
		if !isIdent(r) {
			break
		}
		i += size
	}
	return i
}

// allOpaque reports whether every segment of a dotted chain is a
// generated name.
func allOpaque(chain string, opaque func(string) bool) bool {
	for _, seg := range strings.Split(chain, ".") {
		if !opaque(seg) {
			return false
		}
	}
	return true
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// standsAlone reports whether desc[i:j] is not a segment of a dotted path.
func standsAlone(desc string, i, j int) bool {
	if i >= 2 && desc[i-1] == '.' {
		if r, _ := utf8.DecodeLastRuneInString(desc[:i-1]); isIdent(r) {
			return false
		}
	}
	if j+1 < len(desc) && desc[j] == '.' {
		if r, _ := utf8.DecodeRuneInString(desc[j+1:]); isIdent(r) {
			return false
		}
	}
	return true
}

// codeMarked reports whether the token at i follows a character that
// marks code or a placeholder.
func codeMarked(desc string, i int) bool {
	if i == 0 {
		return false
	}
	return strings.IndexByte("`'\"{<:$[", desc[i-1]) >= 0
}

// proseWord reports whether tok is spelled as a word of prose: letters
// only, no inner capital.
func proseWord(tok string) bool {
	for k, r := range tok {
		if !unicode.IsLetter(r) || (k > 0 && unicode.IsUpper(r)) {
			return false
		}
	}
	return true
}
