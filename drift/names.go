package drift

import (
	"regexp"
	"strings"
	"unicode"
)

// The naming styles of identifiers.
const (
	styleSnake = "snake" // page_size
	styleKebab = "kebab" // page-size
	styleCamel = "camel" // pageSize
	stylePasc  = "pascal"
	styleUpper = "upper" // PAGE_SIZE
	styleLower = "lower" // pagesize (one word, or words run together)
	styleTitle = "title" // Page Size (documented titles)
)

// words splits an identifier or title into lower-case words and reports
// its style.
func words(name string) ([]string, string) {
	if strings.TrimSpace(name) == "" {
		return nil, styleLower
	}
	switch {
	case strings.Contains(name, " "):
		return splitOn(name, " "), styleTitle
	case strings.Contains(name, "_"):
		if name == strings.ToUpper(name) && name != strings.ToLower(name) {
			return splitOn(name, "_"), styleUpper
		}
		return splitCamelParts(splitOn(name, "_")), styleSnake
	case strings.Contains(name, "-"):
		return splitOn(name, "-"), styleKebab
	}
	parts := splitCamel(name)
	switch {
	case len(parts) <= 1:
		return parts, styleLower
	case unicode.IsUpper(rune(name[0])):
		return parts, stylePasc
	}
	return parts, styleCamel
}

func splitOn(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p != "" {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}

func splitCamelParts(parts []string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, splitCamel(p)...)
	}
	return out
}

// splitCamel splits "pageSize" and "HTTPStatus" into lower-case words.
func splitCamel(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			out = append(out, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	if start < len(rs) {
		out = append(out, strings.ToLower(string(rs[start:])))
	}
	return out
}

// joinWords writes words in a style.
func joinWords(ws []string, style string) string {
	switch style {
	case styleSnake:
		return strings.Join(ws, "_")
	case styleUpper:
		return strings.ToUpper(strings.Join(ws, "_"))
	case styleKebab:
		return strings.Join(ws, "-")
	case styleLower:
		if len(ws) == 1 {
			return ws[0]
		}
		return strings.Join(ws, "_") // several words: snake is the readable form
	case styleTitle:
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = capitalize(w)
		}
		return strings.Join(out, " ")
	case styleCamel, stylePasc:
		var b strings.Builder
		for i, w := range ws {
			if i == 0 && style == styleCamel {
				b.WriteString(w)
			} else {
				b.WriteString(capitalize(w))
			}
		}
		return b.String()
	}
	return strings.Join(ws, "_")
}

func capitalize(w string) string {
	if w == "" {
		return w
	}
	r := []rune(w)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// phraseWords splits a rule table entry ("page_size") into words.
func phraseWords(p string) []string { return strings.Split(p, "_") }

// candidate is a new name and the rule that made it.
type candidate struct {
	name, rule string
}

// renameCandidates lists new names for name by the synonym, abbreviation
// and case-style rules, each group in table order: the whole name first,
// then one word at a time.
func (r *Rules) renameCandidates(name string) map[string][]candidate {
	ws, style := words(name)
	out := map[string][]candidate{}
	if len(ws) == 0 {
		return out
	}
	add := func(rule string, nw []string) {
		for i := 1; i < len(nw); i++ {
			if nw[i] == nw[i-1] {
				return // "date_date"
			}
		}
		st := style
		if st == styleLower && len(nw) > 1 {
			st = styleSnake
		}
		out[rule] = append(out[rule], candidate{name: joinWords(nw, st), rule: rule})
	}
	table := func(rule string, m map[string][]string) {
		whole := strings.Join(ws, "_")
		for _, s := range m[whole] {
			add(rule, phraseWords(s))
		}
		// Two-word phrases inside longer names ("page_size" in
		// "max_page_size"), then single words.
		for i := 0; i+1 < len(ws) && len(ws) > 2; i++ {
			for _, s := range m[ws[i]+"_"+ws[i+1]] {
				add(rule, splice(ws, i, 2, phraseWords(s)))
			}
		}
		// One word of a compound name is replaced by a one-word synonym
		// only: "user_name" → "user_login", not "user_display_name".
		if len(ws) > 1 {
			for i, w := range ws {
				for _, s := range m[w] {
					if !strings.Contains(s, "_") {
						add(rule, splice(ws, i, 1, phraseWords(s)))
					}
				}
			}
		}
	}
	table("synonym", r.Synonyms)
	table("abbreviation", r.Abbreviations)
	if len(ws) > 1 {
		switch style {
		case styleSnake, styleUpper, styleKebab:
			out["case"] = append(out["case"], candidate{name: joinWords(ws, styleCamel), rule: "case"})
		case styleCamel, stylePasc:
			out["case"] = append(out["case"], candidate{name: joinWords(ws, styleSnake), rule: "case"})
		}
	}
	return out
}

func splice(ws []string, i, n int, repl []string) []string {
	out := make([]string, 0, len(ws)-n+len(repl))
	out = append(out, ws[:i]...)
	out = append(out, repl...)
	return append(out, ws[i+n:]...)
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_\-]{0,63}$`)

// validIdent reports whether s can name a parameter, field or tool.
func validIdent(s string) bool { return identRe.MatchString(s) }

// normName is a name with case and separators removed, to compare names
// that only differ in style ("pageSize", "page_size").
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
