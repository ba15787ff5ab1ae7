package bird

import (
	"strings"
	"unicode/utf8"
)

// Encoding names a text encoding Decode recognised.
type Encoding string

// The encodings BIRD's description files come in.
const (
	UTF8        Encoding = "utf-8"
	UTF8BOM     Encoding = "utf-8-bom"
	Windows1252 Encoding = "windows-1252"
)

// UTF8C1 is UTF-8 text that holds C1 control characters (U+0080 to
// U+009F) where Windows-1252 punctuation was meant: a Windows-1252 file
// once read as Latin-1 and saved as UTF-8 (BIRD's superhero
// alignment.csv has U+0095 for its bullets).
const UTF8C1 Encoding = "utf-8 (windows-1252 read as latin-1)"

// Decode returns data as a UTF-8 string and the encoding it was in. A
// UTF-8 byte-order mark is removed. Valid UTF-8 stays as it is, except
// that C1 control characters, which no text means, become the
// Windows-1252 characters of their code (U+0093 → “, U+0095 → •). A file
// that is not valid UTF-8 is read as Windows-1252 (a superset of Latin-1
// for printable text: 0x95 for bullets, 0x92 for apostrophes), byte by
// byte where it is not UTF-8, so that a UTF-8 file with a few
// Windows-1252 bytes keeps its UTF-8 characters.
func Decode(data []byte) (string, Encoding) {
	enc := UTF8
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		data, enc = data[3:], UTF8BOM
	}
	var b strings.Builder
	b.Grow(len(data) + len(data)/8)
	c1 := false
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size <= 1:
			enc = Windows1252
			c := data[0]
			if c < 0xA0 {
				b.WriteRune(cp1252[c-0x80])
			} else {
				b.WriteRune(rune(c))
			}
			size = 1
		case r >= 0x80 && r < 0xA0:
			c1 = true
			b.WriteRune(cp1252[r-0x80])
		default:
			b.Write(data[:size])
		}
		data = data[size:]
	}
	if c1 && enc != Windows1252 {
		enc = UTF8C1
	}
	return b.String(), enc
}

// cp1252 maps bytes 0x80–0x9F of Windows-1252 to Unicode; the five
// undefined ones map to themselves, as Windows does.
var cp1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}
