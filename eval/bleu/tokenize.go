package bleu

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenizer splits a text into the tokens BLEU counts.
type Tokenizer func(string) []string

// Chars returns the code points of s, one token each, as Python's
// list(s) does (an invalid UTF-8 byte is a token of its own).
func Chars(s string) []string {
	out := make([]string, 0, len(s))
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// Words splits s at runs of whitespace, as Python's str.split() does:
// Unicode whitespace and the separators U+001C–U+001F.
func Words(s string) []string {
	return strings.FieldsFunc(s, isPySpace)
}

func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// ParseTokenizer returns the tokenizer named "chars" or "words".
func ParseTokenizer(name string) (Tokenizer, error) {
	switch name {
	case "chars":
		return Chars, nil
	case "words":
		return Words, nil
	}
	return nil, fmt.Errorf("unknown BLEU tokenisation %q: want chars (Python's list(text), the MirrorAPI pipeline's) or words (str.split())", name)
}
