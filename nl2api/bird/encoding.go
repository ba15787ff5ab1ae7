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

// Decode returns data as a UTF-8 string and the encoding it was in: UTF-8
// with its byte-order mark removed, valid UTF-8 as is, and anything else
// read as Windows-1252 (a superset of Latin-1 for printable text), which
// is what BIRD's descriptions that are not UTF-8 use (0x95 for bullets,
// 0x92 for apostrophes).
func Decode(data []byte) (string, Encoding) {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return string(data[3:]), UTF8BOM
	}
	if utf8.Valid(data) {
		return string(data), UTF8
	}
	var b strings.Builder
	b.Grow(len(data) + len(data)/8)
	for _, c := range data {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(cp1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String(), Windows1252
}

// cp1252 maps bytes 0x80–0x9F of Windows-1252 to Unicode; the five
// undefined ones map to themselves, as Windows does.
var cp1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}
