package nl2apitest

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// writeDescriptions writes a table's BIRD description CSV in the table's
// encoding. Descriptions hold Windows-1252 punctuation (curly quotes,
// bullets, dashes) and the column's own (possibly non-ASCII) name.
func writeDescriptions(path string, t *table) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"original_column_name", "column_name", "column_description", "data_format", "value_description"})
	for _, c := range t.cols {
		desc := fmt.Sprintf("The “%s” of the %s – %s", c.name, t.name, roleText[c.role])
		values := ""
		if c.role == "cat" || c.role == "bcat" {
			values = "• one of a few codes\n• may be empty"
		}
		_ = w.Write([]string{c.name, strings.ReplaceAll(c.name, "_", " "), desc, formatOf(c.typ), values})
	}
	w.Flush()
	text := buf.String()
	var data []byte
	switch t.encoding {
	case "windows-1252":
		b, ok := encode1252(text)
		if !ok {
			return fmt.Errorf("nl2apitest: %s: text not encodable in windows-1252", path)
		}
		data = b
	case "latin1-mojibake":
		// Windows-1252 bytes read back as Latin-1 and saved as UTF-8:
		// valid UTF-8 holding C1 control characters (U+0093 for “).
		b, ok := encode1252(text)
		if !ok {
			return fmt.Errorf("nl2apitest: %s: text not encodable in windows-1252", path)
		}
		var s strings.Builder
		for _, c := range b {
			s.WriteRune(rune(c))
		}
		data = []byte(s.String())
	case "utf-8-bom":
		data = append([]byte{0xEF, 0xBB, 0xBF}, text...)
	default:
		data = []byte(text)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("nl2apitest: %w", err)
	}
	return nil
}

var roleText = map[string]string{
	"pk": "identifier", "cat": "category code", "txt": "display text", "n": "small count", "x": "measured amount in €",
	"d": "day it happened (YYYY-MM-DD)", "u": "unique position", "pair_a": "contact", "pair_b": "alternative contact",
	"long_a": "census figure", "long_b": "other census figure", "item_id": "item number", "fk": "parent reference",
	"ctext": "kind", "cint": "quantity", "rowid": "record code", "wk": "key", "wn": "sequence number", "wv": "value",
	"bcat": "class", "bnum": "measurement", "proto0": "tag", "proto1": "sitting", "proto2": "implement", "proto3": "title",
	"proto4": "remark", "proto5": "choice", "proto6": "sequence", "proto7": "count of arguments",
}

func formatOf(typ string) string {
	switch {
	case strings.HasPrefix(typ, "INTEGER"):
		return "integer"
	case typ == "REAL":
		return "real"
	}
	return "text"
}

// encode1252 encodes UTF-8 text in Windows-1252; ok is false when a
// character has no Windows-1252 byte.
func encode1252(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80 || (r >= 0xA0 && r <= 0xFF):
			out = append(out, byte(r))
		default:
			b, ok := cp1252Byte[r]
			if !ok {
				return nil, false
			}
			out = append(out, b)
		}
	}
	return out, true
}

var cp1252Byte = map[rune]byte{}

func init() {
	high := []rune("€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ")
	for i, r := range high {
		if r >= 0x80 && r < 0xA0 {
			continue // undefined in Windows-1252
		}
		cp1252Byte[r] = byte(0x80 + i)
	}
	if utf8.RuneCountInString(string(high)) != 32 {
		panic("nl2apitest: cp1252 table")
	}
}
