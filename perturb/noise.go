package perturb

import (
	"math/rand/v2"
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
// irregular places — only between words, never inside a number, an
// identifier or a quoted value, so every value survives.
func punctuate(q string, rng *rand.Rand) (string, string) {
	words := strings.Fields(q)
	if len(words) == 0 {
		return q, "empty"
	}
	extras := []string{"!!", "...", "??", ",", ";", " -", "!?"}
	var b strings.Builder
	quoted := false
	breaks, added, dropped := 0, 0, 0
	for i, w := range words {
		if strings.Count(w, `"`)%2 == 1 {
			quoted = !quoted
		}
		inQuote := quoted || strings.Count(w, `"`) > 0
		if !inQuote && !hasDigit(w) && len(w) > 1 {
			if last := w[len(w)-1]; (last == ',' || last == ';') && rng.IntN(2) == 0 {
				w = w[:len(w)-1] // drop a comma
				dropped++
			} else if (last == '.' || last == '?' || last == '!') && i == len(words)-1 && rng.IntN(2) == 0 {
				w = w[:len(w)-1] // drop the final stop
				dropped++
			}
		}
		b.WriteString(w)
		if i == len(words)-1 {
			break
		}
		if !inQuote && !hasDigit(w) && rng.IntN(5) == 0 {
			b.WriteString(extras[rng.IntN(len(extras))])
			added++
		}
		if !inQuote && rng.IntN(8) == 0 {
			b.WriteString("\n")
			breaks++
		} else {
			b.WriteString(" ")
		}
	}
	if rng.IntN(2) == 0 {
		b.WriteString(extras[rng.IntN(3)])
		added++
	}
	return b.String(), variantName(added, dropped, breaks)
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
