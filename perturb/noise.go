package perturb

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"unicode"
)

// caseMix writes the query in upper case, lower case, or with random
// character-level casing.
func caseMix(q string, rng *rand.Rand) (string, string) {
	switch rng.IntN(3) {
	case 0:
		return strings.ToUpper(q), "upper"
	case 1:
		return strings.ToLower(q), "lower"
	}
	var b strings.Builder
	for _, r := range q {
		if rng.IntN(2) == 0 {
			b.WriteRune(unicode.ToUpper(r))
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String(), "random"
}

// punctuate adds excess punctuation, drops some, and breaks lines at
// irregular places — only between words, never inside a number, a
// quoted value or a multi-word name, so every value survives.
func punctuate(q string, rng *rand.Rand) (string, string) {
	locs := fieldRe.FindAllStringIndex(q, -1)
	if len(locs) == 0 {
		return q, "empty"
	}
	spans := protectedSpans(q)
	inside := func(a, b int) bool { // is q[a:b] within one protected span?
		for _, s := range spans {
			if s[0] <= a && b <= s[1] {
				return true
			}
		}
		return false
	}
	crosses := func(a, b int) bool { // does a protected span cover the gap q[a:b]?
		for _, s := range spans {
			if s[0] < a && b < s[1] {
				return true
			}
		}
		return false
	}
	extras := []string{"!!", "...", "??", ",", ";", " -", "!?"}
	var b strings.Builder
	breaks, added, dropped := 0, 0, 0
	for i, loc := range locs {
		w := q[loc[0]:loc[1]]
		end := loc[1]
		last := i == len(locs)-1
		if !hasDigit(w) && len(w) > 1 && !inside(loc[0], loc[1]) {
			if c := w[len(w)-1]; (c == ',' || c == ';') && rng.IntN(2) == 0 {
				w = w[:len(w)-1] // drop a comma
				dropped++
			} else if (c == '.' || c == '?' || c == '!') && last && rng.IntN(2) == 0 {
				w = w[:len(w)-1] // drop the final stop
				dropped++
			}
		}
		b.WriteString(w)
		if last {
			break
		}
		gap := !crosses(end, locs[i+1][0]) // the space after w is not inside a name or quote
		if gap && !hasDigit(w) && rng.IntN(5) == 0 {
			b.WriteString(extras[rng.IntN(len(extras))])
			added++
		}
		if gap && rng.IntN(8) == 0 {
			b.WriteString("\n")
			breaks++
		} else {
			b.WriteString(q[end:locs[i+1][0]])
		}
	}
	if rng.IntN(2) == 0 {
		b.WriteString(extras[rng.IntN(3)])
		added++
	}
	return b.String(), variantName(added, dropped, breaks)
}

var fieldRe = regexp.MustCompile(`\S+`)

// protectedSpans returns the byte ranges of q's quoted values and
// multi-word names, which noise must not split.
func protectedSpans(q string) [][2]int {
	var out [][2]int
	for _, m := range quotedRe.FindAllStringIndex(q, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	for _, e := range Extract(q).Entities {
		for from := 0; ; {
			i := strings.Index(q[from:], e)
			if i < 0 {
				break
			}
			out = append(out, [2]int{from + i, from + i + len(e)})
			from += i + len(e)
		}
	}
	return out
}

func variantName(added, dropped, breaks int) string {
	var parts []string
	if added > 0 {
		parts = append(parts, "added")
	}
	if dropped > 0 {
		parts = append(parts, "dropped")
	}
	if breaks > 0 {
		parts = append(parts, "breaks")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
