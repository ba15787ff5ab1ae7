package mirror

import (
	"unicode"
	"unicode/utf8"
)

// ApproxTokens estimates how many tokens a BPE tokenizer of the GPT-4 /
// Qwen family makes of s, without a vocabulary (none can be downloaded
// here, and the length filter must not depend on one model's).
//
// It splits s the way those tokenizers pre-tokenize — runs of letters
// (with the space or symbol before them), runs of digits, runs of other
// symbols, runs of white space — and counts each piece:
//
//   - a run of ASCII letters: 1 token up to 5 letters, then one more per
//     3 letters (common words are one token, rare and long ones split);
//   - a word of ASCII letters and digits mixed, or whose case changes
//     more than once inside (an identifier, a random key): one token per
//     1.7 characters;
//   - a run of other letters: 1 per 2 letters for Latin, Greek and
//     Cyrillic scripts with accents, 1 per letter for the rest (CJK);
//   - a run of digits: 1 per 3 digits (numbers are split in threes);
//   - a run of symbols: 1 per 2 symbols (JSON's `":`, `",` and `{"` are
//     single tokens);
//   - white space: 1 per line break run and 1 per run of two or more
//     spaces or tabs; a single space belongs to the word after it.
//
// Measured against OpenAI's cl100k_base and o200k_base tokenizers on
// toolenv's own data (docs/mirror.md gives the figures), it errs on the
// side of counting more, so the 2,560-token filter drops a little more
// than an exact count would rather than less.
func ApproxTokens(s string) int {
	n := 0
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if j, ok := randomWord(s, i); ok {
			// Letters mixed with digits, or with case changing inside:
			// an identifier or a random key, split into short pieces.
			n += ((j-i)*10 + 16) / 17
			i = j
			continue
		}
		switch {
		case unicode.IsLetter(r) || r == '\'' && i+w < len(s) && isLetterAt(s, i+w):
			j, ascii, other, latin, humps := i, 0, 0, true, 0
			prevLower := false
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r2) && !(r2 == '\'' && j == i) && !unicode.Is(unicode.Mn, r2) {
					break
				}
				if r2 < utf8.RuneSelf {
					ascii++
					upper := r2 >= 'A' && r2 <= 'Z'
					if upper && prevLower {
						humps++
					}
					prevLower = r2 >= 'a' && r2 <= 'z'
				} else {
					other++
					if !unicode.In(r2, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Mn) {
						latin = false
					}
				}
				j += w2
			}
			switch {
			case ascii == 0:
			default:
				n++
				if ascii > 5 {
					n += (ascii - 5 + 2) / 3
				}
			}
			if other > 0 {
				if latin {
					n += (other + 1) / 2
				} else {
					n += other
				}
			}
			i = j
		case unicode.IsDigit(r):
			j := i
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsDigit(r2) {
					break
				}
				j += w2
			}
			n += (utf8.RuneCountInString(s[i:j]) + 2) / 3
			i = j
		case r == '\n' || r == '\r':
			for i < len(s) && (s[i] == '\n' || s[i] == '\r' || s[i] == ' ' || s[i] == '\t') {
				i++
			}
			n++
		case r == ' ' || r == '\t':
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j-i > 1 {
				n++
			}
			i = j
		case unicode.IsSpace(r):
			n++
			i += w
		default:
			j, k := i, 0
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) || unicode.IsSpace(r2) {
					break
				}
				k++
				j += w2
			}
			n += (k + 1) / 2
			i = j
		}
	}
	return n
}

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

// randomWord reports whether the ASCII letters and digits from s[i] make
// a random-looking word (letters and digits mixed, or the case changing
// from lower to upper twice), and where it ends.
func randomWord(s string, i int) (int, bool) {
	j, letters, digits, humps := i, 0, 0, 0
	prevLower := false
	for j < len(s) {
		c := s[j]
		switch {
		case c >= 'a' && c <= 'z':
			letters++
			prevLower = true
		case c >= 'A' && c <= 'Z':
			letters++
			if prevLower {
				humps++
			}
			prevLower = false
		case c >= '0' && c <= '9':
			digits++
			prevLower = false
		default:
			goto end
		}
		j++
	}
end:
	if j == i || j < len(s) && s[j] >= utf8.RuneSelf {
		return i, false // a word that goes on in another script
	}
	return j, (letters > 0 && digits > 0 && j-i > 3) || humps > 1
}
