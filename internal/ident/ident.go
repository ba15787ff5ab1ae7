// Package ident turns names written in any script into ASCII
// identifiers: letters, digits and single underscores. Tool names,
// argument names and column names an agent passes must survive every
// client (OpenAI function names are [A-Za-z0-9_-]{1,64}), while titles
// and descriptions keep the original Unicode.
package ident

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// special are letters whose transliteration is not their base letter:
// German umlauts and ß as German writes them without the marks (ä→ae,
// ß→ss), and letters that do not decompose.
var special = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss", 'ẞ': "SS",
	'æ': "ae", 'Æ': "Ae", 'œ': "oe", 'Œ': "Oe", 'ø': "o", 'Ø': "O", 'å': "a", 'Å': "A",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ð': "d", 'Ð': "D", 'þ': "th", 'Þ': "Th", 'ı': "i",
	'€': "euro", '£': "pound", '$': "dollar", '%': "percent", '°': "deg", '№': "no",
}

// Transliterate returns s with every letter written in ASCII where it
// has a customary Latin form (ä→ae, ö→oe, ü→ue, ß→ss, é→e, ł→l, …) and
// the rest unchanged.
func Transliterate(s string) string {
	var b strings.Builder
	rs := []rune(norm.NFC.String(s))
	for i, r := range rs {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		if t, ok := special[r]; ok {
			// An upper-case letter inside upper-case text is written
			// upper-case throughout (GRÖSSE → GROESSE, Ärger → Aerger).
			if unicode.IsUpper(r) && len(t) > 1 && allUpperAround(rs, i) {
				t = strings.ToUpper(t)
			}
			b.WriteString(t)
			continue
		}
		for _, d := range norm.NFD.String(string(r)) {
			if !unicode.Is(unicode.Mn, d) {
				b.WriteRune(d)
			}
		}
	}
	return b.String()
}

// allUpperAround reports whether the letters next to rs[i] are upper
// case (and there is at least one).
func allUpperAround(rs []rune, i int) bool {
	n := 0
	for _, j := range []int{i - 1, i + 1} {
		if j < 0 || j >= len(rs) || !unicode.IsLetter(rs[j]) {
			continue
		}
		if !unicode.IsUpper(rs[j]) {
			return false
		}
		n++
	}
	return n > 0
}

// Valid reports whether s already is an identifier: an ASCII letter or
// underscore followed by ASCII letters, digits and underscores.
func Valid(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// ASCII returns s as an identifier part: transliterated, every run of
// other characters one underscore, no underscore at either end. A name
// with nothing left (written only in a script without Latin form)
// becomes "x" and a short hash of the name, so that it stays distinct.
func ASCII(s string) string {
	t := Transliterate(s)
	var b strings.Builder
	under := true // drop leading underscores
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteByte(c)
		under = false
	}
	out := strings.TrimRight(b.String(), "_")
	if out == "" && s != "" {
		sum := sha256.Sum256([]byte(s))
		out = "x" + hex.EncodeToString(sum[:4])
	}
	return out
}

// Column returns the identifier of a name: the name itself when it is
// one already, else ASCII(name).
func Column(name string) string {
	if Valid(name) {
		return name
	}
	return ASCII(name)
}

// Limit cuts name to at most n bytes (n >= 16), ending a cut name with
// "_" and seven hex digits of a hash of the whole name, so that names
// that differ only past the cut stay different.
func Limit(name string, n int) string {
	if len(name) <= n {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:n-8], "_") + "_" + hex.EncodeToString(sum[:])[:7]
}
