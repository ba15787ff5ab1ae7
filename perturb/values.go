package perturb

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Values are the concrete values of a query a paraphrase must keep.
type Values struct {
	Quoted   []string `json:"quoted,omitempty"`
	Numbers  []string `json:"numbers,omitempty"`
	Entities []string `json:"entities,omitempty"`
}

var (
	quotedRe  = regexp.MustCompile("\"([^\"]+)\"|“([^”]+)”|'([^']{2,})'|`([^`]+)`")
	numberRe  = regexp.MustCompile(`\d+(?:[.,:/\-]\d+)*`)
	tokenRe   = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}&'.@_\-]*`)
	specialRe = regexp.MustCompile(`\S+@\S+\.\w+|https?://\S+|[@#]\w+`)
)

// sentenceStarters are capitalised words that are not names.
var sentenceStarters = map[string]bool{"I": true, "I'm": true, "I'd": true, "I've": true, "I'll": true, "Please": true, "Can": true, "Could": true,
	"Would": true, "What": true, "Which": true, "Who": true, "When": true, "Where": true, "How": true, "Why": true, "Also": true, "Then": true,
	"And": true, "Additionally": true, "Furthermore": true, "Moreover": true, "My": true, "We": true, "Our": true, "The": true, "A": true,
	"An": true, "Is": true, "Are": true, "Do": true, "Does": true, "Tell": true, "Give": true, "Find": true, "Show": true, "List": true,
	"Get": true, "Help": true, "Let": true, "It": true, "In": true, "On": true, "For": true, "To": true, "Hi": true, "Hello": true, "Hey": true}

func properNoun(w string) bool {
	w = strings.TrimRight(w, ".,;:!?")
	if sentenceStarters[w] || w == "" {
		return false
	}
	r := []rune(w)
	return unicode.IsUpper(r[0])
}

// Extract finds a query's quoted values, numbers and entities
// (capitalised words not opening a sentence, words in capitals or mixing
// letters and digits, e-mail addresses, URLs, handles).
func Extract(q string) Values {
	var v Values
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, m := range quotedRe.FindAllStringSubmatch(q, -1) {
		for _, g := range m[1:] {
			add(&v.Quoted, g)
		}
	}
	for _, s := range specialRe.FindAllString(q, -1) {
		add(&v.Entities, strings.TrimRight(s, ".,;:!?)"))
	}
	for _, s := range numberRe.FindAllString(q, -1) {
		add(&v.Numbers, s)
	}
	locs := tokenRe.FindAllStringIndex(q, -1)
	for i := 0; i < len(locs); i++ {
		w := strings.TrimRight(q[locs[i][0]:locs[i][1]], ".-'")
		start := locs[i][0] == 0 || sentenceEnd(q[:locs[i][0]])
		switch {
		case isCode(w):
			add(&v.Entities, w)
		case properNoun(w) && !(start && sentenceStarters[w]):
			// Join a run of capitalised words: "Frank Herbert".
			j, phrase := i, trimPossessive(w)
			end := locs[i][0] + len(phrase)
			for phrase == w && j+1 < len(locs) && strings.TrimSpace(q[locs[j][1]:locs[j+1][0]]) == "" {
				nw := strings.TrimRight(q[locs[j+1][0]:locs[j+1][1]], ".-'")
				if !properNoun(nw) || isCode(nw) {
					break
				}
				j++
				p := trimPossessive(nw)
				end = locs[j][0] + len(p)
				if p != nw {
					break // "Frank Herbert's Dune": the name ends at the possessive
				}
			}
			phrase = q[locs[i][0]:end] // as written, spacing included
			if start && j == i {
				break // one capitalised word opening a sentence may be any word
			}
			add(&v.Entities, phrase)
			i = j
		}
	}
	sort.Strings(v.Numbers)
	return v
}

// trimPossessive drops a trailing "'s" or "’s".
func trimPossessive(w string) string {
	for _, suf := range []string{"'s", "’s"} {
		if strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

func sentenceEnd(before string) bool {
	t := strings.TrimRight(before, " \t\n\"'(“")
	return t == "" || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "?") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, ":") || strings.HasSuffix(t, "\n")
}

// isCode reports words in capitals ("USD", "NASA") or mixing letters and
// digits ("B07XYZ", "iPhone15").
func isCode(w string) bool {
	letters, upper, digits := 0, 0, 0
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		case unicode.IsDigit(r):
			digits++
		}
	}
	return (letters >= 2 && upper == letters && w != "I") || (letters > 0 && digits > 0)
}

// Missing returns the values of orig that text lost: quoted values and
// numbers must appear exactly, entities in any case.
func Missing(orig Values, text string) []string {
	var out []string
	lower := squash(strings.ToLower(text))
	for _, s := range orig.Quoted {
		if !strings.Contains(text, s) {
			out = append(out, `"`+s+`"`)
		}
	}
	nums := map[string]bool{}
	for _, n := range numberRe.FindAllString(text, -1) {
		nums[n] = true
	}
	for _, n := range orig.Numbers {
		if !nums[n] {
			out = append(out, n)
		}
	}
	for _, e := range orig.Entities {
		if !strings.Contains(lower, squash(strings.ToLower(e))) {
			out = append(out, e)
		}
	}
	return out
}

// squash collapses runs of white space to one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }
