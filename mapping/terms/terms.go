package terms

import (
	"iter"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Split breaks a name or text into lower-case words: at every character
// that is not a letter or digit, at lower→upper case changes
// ("getUser"), before the last capital of a run followed by a lower-case
// letter ("HTTPServer" → http, server) and between letters and digits
// ("page2").
func Split(s string) []string { return slices.Collect(Words(s)) }

// Words yields the words of s that Split returns, one at a time, without
// a list.
func Words(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := -1 // the byte where the current word starts
		flush := func(end int) bool {
			ok := true
			if start >= 0 && end > start {
				ok = yield(lower(s[start:end]))
			}
			start = -1
			return ok
		}
		var prev rune
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			cut := false
			switch {
			case !unicode.IsLetter(r) && !unicode.IsDigit(r):
				if !flush(i) {
					return
				}
			case start < 0:
				start = i
			case unicode.IsLower(prev) && unicode.IsUpper(r), unicode.IsLetter(prev) != unicode.IsLetter(r):
				cut = true
			case unicode.IsUpper(prev) && unicode.IsUpper(r):
				next, n := utf8.DecodeRuneInString(s[i+size:])
				cut = n > 0 && unicode.IsLower(next) && !pluralOfCaps(next, s[i+size+n:])
			}
			if cut {
				if !flush(i) {
					return
				}
				start = i
			}
			prev = r
			i += size
		}
		flush(len(s))
	}
}

// JoinWords is strings.Join(Split(s), " ") without the list.
func JoinWords(s string) string {
	var b strings.Builder
	for w := range Words(s) {
		if b.Len() == 0 {
			b.Grow(len(s))
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// lower is strings.ToLower(w), without a copy when w is lower-case ASCII
// already (most words).
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 0x80 || c >= 'A' && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

// pluralOfCaps reports whether r, followed by rest, is the "s" of a
// plural written after capitals ("IDs", "URLs").
func pluralOfCaps(r rune, rest string) bool {
	if r != 's' {
		return false
	}
	next, n := utf8.DecodeRuneInString(rest)
	return n == 0 || !unicode.IsLower(next)
}

// Name returns the normalised words of an identifier (a tool, parameter
// or field name): split, with abbreviations expanded, compounds of known
// words split ("startdate"), stopwords dropped, stemmed and replaced by
// their synonym group's canonical word. ToolBench's "is_" prefix on
// reserved names ("is_id") is removed.
func Name(s string) []string {
	words := Split(s)
	if len(words) == 2 && words[0] == "is" && reservedToolBench[words[1]] {
		words = words[1:]
	}
	var out []string
	for _, w := range words {
		if e, ok := abbreviations[w]; ok {
			w = e
		}
		for _, part := range splitCompound(w) {
			if nameStopwords[part] {
				continue
			}
			out = append(out, Canonical(part))
		}
	}
	return out
}

// Text returns the normalised words of prose (a description): split,
// stopwords dropped, abbreviations of three letters or more expanded,
// stemmed and canonicalised. Unlike Name it keeps no compound splitting.
func Text(s string) []string { return slices.Collect(textWords(s)) }

// JoinText is strings.Join(Text(strings.Join(parts, " ")), " ") without
// the lists or the joined text: the words of each part in turn (no word
// spans two parts, as a space ends a word).
func JoinText(parts ...string) string {
	var b strings.Builder
	for _, s := range parts {
		for w := range textWords(s) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// textWords yields the words Text returns.
func textWords(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for w := range Words(s) {
			if stopwords[w] || utf8.RuneCountInString(w) < 2 {
				continue
			}
			if e, ok := abbreviations[w]; ok && (len(w) >= 3 || w == "id") {
				w = e
			}
			if !yield(Canonical(w)) {
				return
			}
		}
	}
}

// Canonical returns the stem of a lower-case word, replaced by its
// synonym group's canonical stem.
func Canonical(w string) string {
	st := Stem(w)
	if c, ok := canon[st]; ok {
		return c
	}
	return st
}

// nameStopwords are the words dropped from names: only articles and the
// prepositions that join words. Unlike prose, names keep "not", "and",
// "or" and "to": select_data_not_like is not select_data_like, and
// username_to_uuid is not uuid_to_username.
var nameStopwords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "for": true, "by": true}

// reservedToolBench are the names ToolBench prefixes with "is_".
var reservedToolBench = map[string]bool{"from": true, "class": true, "return": true, "false": true, "true": true, "id": true, "and": true}

// canon maps the stem of every synonym to its group's canonical stem;
// known holds every word the vocabulary knows, for compound splitting.
var canon, known = buildVocab()

func buildVocab() (map[string]string, map[string]bool) {
	c := map[string]string{}
	k := map[string]bool{}
	for _, g := range synonyms {
		first := Stem(g[0])
		for _, w := range g {
			k[w] = true
			st := Stem(w)
			if _, dup := c[st]; !dup {
				c[st] = first
			}
		}
	}
	for a, e := range abbreviations {
		k[e] = true
		if len(a) >= 3 {
			k[a] = true
		}
	}
	for _, w := range baseWords {
		k[w] = true
	}
	return c, k
}

// baseWords are common API words that are in no synonym group but help
// split compounds ("startdate", "pagetoken").
var baseWords = []string{
	"start", "end", "date", "time", "page", "token", "size", "name", "first", "last", "user", "type",
	"id", "code", "count", "number", "list", "item", "order", "sort", "field", "value", "key", "zone",
	"zip", "post", "phone", "mail", "email", "max", "min", "from", "to", "per", "sub", "home", "work",
	"city", "country", "state", "street", "address", "price", "rate", "amount", "total", "search", "query",
	"term", "word", "text", "title", "image", "video", "file", "path", "url", "link", "host", "port",
	"lang", "locale", "currency", "symbol", "market", "stock", "team", "player", "league", "season",
	"match", "game", "score", "level", "status", "result", "limit", "offset", "cursor", "since", "until",
	"birth", "day", "month", "year", "week", "hour", "minute", "second", "data", "source", "target",
}

// splitCompound splits a word glued from two known words ("pagesize",
// "startdate") when the word itself is unknown; otherwise it returns the
// word alone.
func splitCompound(w string) []string {
	if known[w] || len(w) < 6 || !isASCIILetters(w) {
		return []string{w}
	}
	best := -1
	for i := 3; i <= len(w)-3; i++ {
		if known[w[:i]] && known[w[i:]] {
			// Prefer the split with the longest first part ("username" →
			// user+name rather than a shorter known prefix).
			best = i
		}
	}
	if best < 0 {
		return []string{w}
	}
	return []string{w[:best], w[best:]}
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// irregular plurals and forms the suffix rules get wrong.
var irregular = map[string]string{
	"children": "child", "people": "person", "men": "man", "women": "woman", "mice": "mouse",
	"indices": "index", "indexes": "index", "matrices": "matrix", "vertices": "vertex", "analyses": "analysis",
	"criteria": "criterion", "media": "media", "data": "data", "feet": "foot", "teeth": "tooth",
}

// keepS are words ending in s that are not plurals.
var keepS = map[string]bool{
	"news": true, "series": true, "species": true, "alias": true, "canvas": true, "lens": true, "atlas": true,
	"chaos": true, "ios": true, "macos": true, "dns": true, "gps": true, "sms": true, "https": true, "aws": true,
	"css": true, "os": true, "yes": true, "always": true, "perhaps": true, "whereas": true, "bonus": true,
	"plus": true, "minus": true, "status": true, "campus": true, "virus": true, "radius": true, "focus": true,
	"bias": true, "gas": true, "bus": true, "its": true, "has": true, "was": true, "does": true, "this": true,
	"thus": true, "stats": true, "sports": true, "lyrics": true, "analytics": true, "metrics": true,
	"statistics": true, "physics": true, "economics": true, "politics": true, "mathematics": true,
}

// Stem reduces an English word to a stem shared by its inflections:
// plurals, -ing and -ed forms, and a final e or y, so that "categories",
// "category", "created", "creates" and "creating" meet.
func Stem(w string) string {
	if v, ok := irregular[w]; ok {
		w = v
	}
	if !isASCIILetters(w) || len(w) <= 3 {
		return w
	}
	if !keepS[w] {
		switch {
		case strings.HasSuffix(w, "ies") && len(w) > 4:
			w = w[:len(w)-3] + "y"
		case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
			strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
			w = w[:len(w)-2]
		case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		case strings.HasSuffix(w, "s"):
			w = w[:len(w)-1]
		}
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5 && hasVowel(w[:len(w)-3]):
		w = w[:len(w)-3]
		w = undouble(w)
	case strings.HasSuffix(w, "ed") && len(w) > 4 && !strings.HasSuffix(w, "eed") && hasVowel(w[:len(w)-2]):
		w = w[:len(w)-2]
		w = undouble(w)
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	if len(w) > 2 && strings.HasSuffix(w, "y") {
		w = w[:len(w)-1] + "i"
	}
	return w
}

// undouble removes a doubled final consonant left by -ing / -ed
// ("mapped" → map).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func hasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

// Jaccard is |a ∩ b| / |a ∪ b| of two word lists taken as sets; 0 when
// both are empty.
func Jaccard(a, b []string) float64 {
	sa, sb := toSet(a), toSet(b)
	if len(sa)+len(sb) == 0 {
		return 0
	}
	inter := common(sa, sb)
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// Dice is 2|a ∩ b| / (|a| + |b|) of two word lists taken as sets.
func Dice(a, b []string) float64 { return dice(toSet(a), toSet(b)) }

// dice is the Dice coefficient of two sets; 0 when both are empty.
func dice(sa, sb map[string]bool) float64 {
	if len(sa)+len(sb) == 0 {
		return 0
	}
	return 2 * float64(common(sa, sb)) / float64(len(sa)+len(sb))
}

// common counts the members of sa that sb holds.
func common(sa, sb map[string]bool) int {
	n := 0
	for w := range sa {
		if sb[w] {
			n++
		}
	}
	return n
}

func toSet(ws []string) map[string]bool {
	s := make(map[string]bool, len(ws))
	for _, w := range ws {
		s[w] = true
	}
	return s
}

// Trigram is the Dice coefficient of the character trigrams of a and b
// (lower-cased, letters and digits only, padded), a measure that
// tolerates spelling changes ("colour"/"color", "nbr"/"number" less so).
func Trigram(a, b string) float64 { return NewTrigrams(a).Dice(NewTrigrams(b)) }

// Trigrams are a string's distinct trigrams as Trigram takes them
// (letters and digits, lower-cased, padded), sorted: made once for a name
// compared with many others, they compare without building sets again.
type Trigrams []string

// NewTrigrams returns s's trigrams.
func NewTrigrams(s string) Trigrams {
	set := trigrams(s)
	out := make(Trigrams, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Dice is the Dice coefficient of two strings' trigrams: Trigram of the
// strings they were made from.
func (a Trigrams) Dice(b Trigrams) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(n) / float64(len(a)+len(b))
}

// TrigramCodes are a string's distinct trigrams as Trigram takes them,
// each packed into one number (three runes of 21 bits), sorted: Dice
// counts the trigrams two names share with integer comparisons, and gives
// the value Trigrams.Dice gives (the packing is one-to-one).
type TrigramCodes []uint64

// NewTrigramCodes returns s's trigrams, packed.
func NewTrigramCodes(s string) TrigramCodes {
	rs := paddedRunes(s)
	if len(rs) <= 3 {
		return TrigramCodes{}
	}
	out := make(TrigramCodes, 0, len(rs)-2)
	for i := 0; i+3 <= len(rs); i++ {
		out = append(out, uint64(rs[i])<<42|uint64(rs[i+1])<<21|uint64(rs[i+2]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Dice is the Dice coefficient of two strings' trigrams: Trigram of the
// strings they were made from.
func (a TrigramCodes) Dice(b TrigramCodes) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(n) / float64(len(a)+len(b))
}

// paddedRunes are s's letters and digits, lower-cased, with two spaces
// before and one after: the runes trigrams are taken from.
func paddedRunes(s string) []rune {
	var b strings.Builder
	b.WriteString("  ")
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	b.WriteString(" ")
	return []rune(b.String())
}

func trigrams(s string) map[string]bool {
	rs := paddedRunes(s)
	out := map[string]bool{}
	for i := 0; i+3 <= len(rs); i++ {
		out[string(rs[i:i+3])] = true
	}
	if len(rs) <= 3 {
		return map[string]bool{}
	}
	return out
}

// Synonyms returns the groups of the vocabulary, for documentation and
// tests: each group sorted, groups in table order.
func Synonyms() [][]string {
	out := make([][]string, len(synonyms))
	for i, g := range synonyms {
		out[i] = append([]string(nil), g...)
		sort.Strings(out[i])
	}
	return out
}
