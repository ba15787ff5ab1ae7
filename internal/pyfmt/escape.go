package pyfmt

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeRules says whose rules an escape sequence follows.
type escapeRules int

const (
	// pythonEscapes are those of Python's string literals: \a and \v,
	// octal, a backslash-newline that continues the line; an unknown
	// escape keeps its backslash; a bad \x, \u or \U is an error.
	pythonEscapes escapeRules = iota
	// modelEscapes are what models write, JSON's and Python's mixed: an
	// unknown escape (\/ among them) stands for its character, a
	// \uD83D\uDE00 surrogate pair is one character, a bad hexadecimal
	// escape is kept as written.
	modelEscapes
)

// hexDigits is the length of the \x, \u and \U escapes.
var hexDigits = map[byte]int{'x': 2, 'u': 4, 'U': 8}

// unescape decodes the escape sequence that starts with the backslash at
// s[i] (followed by at least one byte), writes it to b and returns the
// index after it. ok is false for a bad \x, \u or \U under Python's rules.
func unescape(b *strings.Builder, s string, i int, rules escapeRules) (next int, ok bool) {
	e := s[i+1]
	if e >= utf8.RuneSelf {
		// A backslash before a non-ASCII character: Python keeps the
		// backslash, models meant the character; the caller reads it.
		if rules == pythonEscapes {
			b.WriteByte('\\')
		}
		return i + 1, true
	}
	i += 2
	switch e {
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'x', 'u', 'U':
		n := hexDigits[e]
		var code uint64
		var err error = strconv.ErrSyntax
		if i+n <= len(s) {
			code, err = strconv.ParseUint(s[i:i+n], 16, 32)
		}
		if err != nil || rules == pythonEscapes && code > unicode.MaxRune {
			if rules == pythonEscapes {
				return i, false
			}
			b.WriteByte('\\')
			b.WriteByte(e)
			return i, true
		}
		r := rune(code)
		i += n
		if rules == modelEscapes && e == 'u' && r >= 0xd800 && r < 0xdc00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
			if lo, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil && lo >= 0xdc00 && lo < 0xe000 {
				r = 0x10000 + (r-0xd800)<<10 + (rune(lo) - 0xdc00)
				i += 6
			}
		}
		if !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default:
		if rules == modelEscapes {
			b.WriteByte(e)
			break
		}
		switch e {
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'v':
			b.WriteByte('\v')
		case '\n':
		case '0', '1', '2', '3', '4', '5', '6', '7':
			code := int(e - '0')
			for k := 0; k < 2 && i < len(s) && s[i] >= '0' && s[i] <= '7'; k++ {
				code = code*8 + int(s[i]-'0')
				i++
			}
			b.WriteRune(rune(code))
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return i, true
}

// jsonNumber rewrites a Python or JavaScript number literal as a JSON
// one: "+1_000" is "1000", "5." "5.0", "-.5e3" "-0.5e3", "007" "7",
// "00.5" "0.5". ok is
// false when lit is no number; a float out of float64's range is kept.
func jsonNumber(lit string) (string, bool) {
	s := strings.TrimPrefix(strings.ReplaceAll(lit, "_", ""), "+")
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return "", false
		}
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if strings.HasPrefix(s, ".") {
		s = "0" + s
	}
	s = strings.Replace(s, ".e", ".0e", 1)
	s = strings.Replace(s, ".E", ".0E", 1)
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	// Python allows leading zeros ("007", "00.5"); JSON does not.
	cut := strings.IndexAny(s, ".eE")
	if cut < 0 {
		cut = len(s)
	}
	if digits := strings.TrimLeft(s[:cut], "0"); digits != s[:cut] {
		if digits == "" {
			digits = "0"
		}
		s = digits + s[cut:]
	}
	if neg {
		s = "-" + s
	}
	if !json.Valid([]byte(s)) {
		return "", false
	}
	return s, true
}
