package toolenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Canonical returns the canonical JSON encoding of v: object keys sorted
// (by their UTF-8 bytes), no insignificant whitespace, strings escaped
// minimally, and every number written in one exact decimal form, so that
// 5, 5.0, 5e0 and 50e-1 encode alike while 12345678901234567890 and
// 12345678901234567891 stay apart (no float64 rounding).
//
// v may be anything encoding/json decodes into (map[string]any, []any,
// string, json.Number, float64, bool, nil) or any value it can encode.
//
// Strings that are not UTF-8 stay apart from each other and from U+FFFD,
// so that inputs that differ never share a cache key: a lone surrogate
// as ParseJSON keeps it (its three-byte generalized UTF-8 form) is
// written as its \uXXXX escape, any other byte that is not UTF-8 as it
// is. Valid UTF-8 is written as it is, so the output is UTF-8 whenever
// the input's strings are.
func Canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCanonical(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CanonicalizeJSON parses raw JSON and returns its canonical encoding.
func CanonicalizeJSON(raw []byte) ([]byte, error) {
	v, err := ParseJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return Canonical(v)
}

// CacheKey returns the cache key of a call to tool with args: the tool ID
// and the canonical JSON of the arguments (an empty object for nil).
func CacheKey(toolID string, args map[string]any) (string, error) {
	if args == nil {
		return toolID + "\x00{}", nil
	}
	c, err := Canonical(args)
	if err != nil {
		return "", fmt.Errorf("cache key for %s: %w", toolID, err)
	}
	return toolID + "\x00" + string(c), nil
}

const maxCanonicalDepth = 512

func writeCanonical(b *bytes.Buffer, v any, depth int) error {
	if depth > maxCanonicalDepth {
		return errors.New("canonical json: value nested too deeply")
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeCanonicalString(b, x, true)
	case json.Number:
		if alreadyCanonical(strings.TrimPrefix(string(x), "-")) {
			b.WriteString(string(x))
			return nil
		}
		out, err := appendNumber(b.AvailableBuffer(), string(x))
		if err != nil {
			return err
		}
		b.Write(out)
	case float64:
		return writeFloat(b, x)
	case float32:
		return writeFloat(b, float64(x))
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case map[string]any:
		// Members are sorted with their values (looking each value up
		// again after the sort would cost a map access per key).
		members := make([]jsonMember, 0, len(x))
		for k, v := range x {
			members = append(members, jsonMember{k, v})
		}
		order := sortMembers(members)
		if len(members) > 64 {
			b.Grow(len(members) * 16) // a member is rarely shorter: fewer copies as the buffer grows
		}
		b.WriteByte('{')
		for i := range members {
			m := &members[i]
			if order != nil {
				m = &members[order[i].i]
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalString(b, m.k, true)
			b.WriteByte(':')
			if err := writeCanonical(b, m.v, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case RawJSON:
		if x.text == "" {
			b.WriteString("null")
			return nil
		}
		return writeCanonicalRaw(b, x.text, depth)
	case json.RawMessage:
		y, err := ParseJSON(x)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		return writeCanonical(b, y, depth+1)
	default:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			b.WriteString("null")
			return nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		var y any
		if err := DecodeJSON(raw, &y); err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		return writeCanonical(b, y, depth+1)
	}
	return nil
}

func writeFloat(b *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("canonical json: %v is not a JSON number", f)
	}
	s, err := CanonicalNumber(strconv.FormatFloat(f, 'g', -1, 64))
	if err != nil {
		return err
	}
	b.WriteString(s)
	return nil
}

// CanonicalNumber returns the canonical form of a JSON number literal: its
// exact decimal value, written as an integer when it is one (up to 21
// digits), as a plain decimal when that is short, else as d.ddde±N.
func CanonicalNumber(lit string) (string, error) {
	if plainInteger(lit) {
		return lit, nil // already canonical: the common case, without allocating
	}
	out, err := appendNumber(nil, lit)
	return string(out), err
}

// appendNumber appends CanonicalNumber(lit) to dst, allocating nothing
// when dst has room (a megabyte of numbers not in canonical form spent a
// third of its call on the strings the steps made).
func appendNumber(dst []byte, lit string) ([]byte, error) {
	if plainInteger(lit) {
		return append(dst, lit...), nil
	}
	s := lit
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expPart, hasExp = s[:i], s[i+1:], true
	}
	intPart, frac, hasDot := mant, "", false
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac, hasDot = mant[:i], mant[i+1:], true
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || hasDot && frac == "" {
		return dst, fmt.Errorf("canonical json: %q is not a JSON number", lit)
	}
	exp := int64(0)
	if hasExp {
		e := expPart
		if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if e == "" || !allDigits(e) {
			return dst, fmt.Errorf("canonical json: %q is not a JSON number", lit)
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > 9 {
			return dst, fmt.Errorf("canonical json: exponent of %q is out of range", lit)
		}
		n, _ := strconv.ParseInt(e, 10, 64)
		if expPart[0] == '-' {
			n = -n
		}
		exp = n
	}
	// The digits of intPart and frac, leading and trailing zeros cut.
	var scratch [64]byte
	digits := append(append(scratch[:0], intPart...), frac...)
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	exp -= int64(len(frac))
	if len(digits) == 0 {
		return append(dst, '0'), nil
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	n := int64(len(digits))
	if neg {
		dst = append(dst, '-')
	}
	point := n + exp // position of the decimal point from the left of digits
	switch {
	case exp >= 0 && point <= 21:
		dst = append(dst, digits...)
		for range exp {
			dst = append(dst, '0')
		}
	case exp < 0 && point > 0:
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		dst = append(dst, digits[point:]...)
	case exp < 0 && point > -6:
		dst = append(dst, '0', '.')
		for range -point {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		e := point - 1
		dst = append(dst, digits[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if e < 0 {
			dst = append(dst, '-')
			e = -e
		} else {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, e, 10)
	}
	return dst, nil
}

// IsJSONNumber reports whether lit is a JSON number literal, the form
// json.Number must hold for encoding/json to write it. CanonicalNumber is
// more forgiving: it also reads "007", which JSON does not allow.
func IsJSONNumber(lit string) bool {
	if _, err := CanonicalNumber(lit); err != nil {
		return false
	}
	d := strings.TrimPrefix(lit, "-")
	return !(len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9')
}

// plainInteger reports whether lit is an integer in canonical form: up to
// 21 digits, no leading zero, a minus sign only before a non-zero one.
func plainInteger(lit string) bool {
	d := lit
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 21 || d[0] == '0' && (len(d) > 1 || len(lit) > 1) {
		return false
	}
	return allDigits(d)
}

// sortMembers puts an object's members in the order of their keys' bytes.
// A few are sorted in place; many (a call may send tens of thousands) are
// sorted through their order, returned: by a radix sort on each key's
// bytes eight at a time (as a number beside the member's index: no
// comparison function called per pair, no pointer followed), keys that
// share their first eight bytes by their next eight, and so on.
func sortMembers(a []jsonMember) []memberOrder {
	if len(a) < 64 {
		slices.SortFunc(a, func(x, y jsonMember) int { return strings.Compare(x.k, y.k) })
		return nil
	}
	order := make([]memberOrder, len(a))
	for i := range a {
		order[i] = memberOrder{p: keyWord(a[i].k, 0), i: int32(i)}
	}
	sortByWords(a, order, make([]memberOrder, len(a)), 0)
	return order
}

// keyWord returns the bytes of k from off on, eight of them (zeros past
// its end), as a number that orders as they do.
func keyWord(k string, off int) uint64 {
	var p uint64
	for j := off; j < off+8; j++ {
		p <<= 8
		if j < len(k) {
			p |= uint64(k[j])
		}
	}
	return p
}

// sortByWords sorts order, whose p hold the keys' words at off, by the
// keys from off on (the bytes before are the same for them all); scratch
// is as long as order.
func sortByWords(a []jsonMember, order, scratch []memberOrder, off int) {
	if len(order) < 64 {
		slices.SortFunc(order, func(x, y memberOrder) int {
			switch {
			case x.p < y.p:
				return -1
			case x.p > y.p:
				return 1
			}
			return strings.Compare(a[x.i].k, a[y.i].k)
		})
		return
	}
	radixWords(order, scratch)
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && order[j].p == order[i].p {
			j++
		}
		if j-i > 1 {
			run, longer := order[i:j], false
			for _, o := range run {
				longer = longer || len(a[o.i].k) > off+8
			}
			if longer {
				for r := range run {
					run[r].p = keyWord(a[run[r].i].k, off+8)
				}
				sortByWords(a, run, scratch[i:j], off+8)
			} else {
				// The keys end within these eight bytes and agree on
				// them but for zeros past their ends: the shorter first.
				slices.SortFunc(run, func(x, y memberOrder) int { return strings.Compare(a[x.i].k, a[y.i].k) })
			}
		}
		i = j
	}
}

// radixWords sorts order by p, a byte at a time from the least
// significant (a stable counting sort per byte), skipping the bytes all
// p share.
func radixWords(order, scratch []memberOrder) {
	var counts [8][256]int
	for _, o := range order {
		for b := 0; b < 8; b++ {
			counts[b][byte(o.p>>(8*b))]++
		}
	}
	src, dst := order, scratch
	for b := 0; b < 8; b++ {
		c := &counts[b]
		if c[byte(src[0].p>>(8*b))] == len(src) {
			continue // every p has this byte
		}
		pos := 0
		for v := range c {
			n := c[v]
			c[v] = pos
			pos += n
		}
		for _, o := range src {
			v := byte(o.p >> (8 * b))
			dst[c[v]] = o
			c[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &order[0] {
		copy(order, src)
	}
}

// memberOrder is a member's place in sortMembers: its key's first eight
// bytes as a number and its index.
type memberOrder struct {
	p uint64
	i int32
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s to dst as a JSON string literal, escaped as
// Canonical escapes it (no HTML escaping; invalid UTF-8 becomes U+FFFD).
func AppendJSONString(dst []byte, s string) []byte {
	var b bytes.Buffer
	if len(dst) > 0 {
		b.Write(dst)
	}
	writeCanonicalString(&b, s, false)
	return b.Bytes()
}

// writeCanonicalString writes s as a JSON string. With keep, bytes that
// are not UTF-8 stay distinct (see Canonical); without, each becomes
// U+FFFD, as encoding/json writes them.
func writeCanonicalString(b *bytes.Buffer, s string, keep bool) {
	b.WriteByte('"')
	if plainString(s) {
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	afterHigh := false // the last thing written was a lone high surrogate's escape
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			// A run of printable ASCII is written at once.
			j := i + 1
			for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
				j++
			}
			b.WriteString(s[i:j])
			afterHigh = false
			i = j
			continue
		}
		wasHigh := afterHigh
		afterHigh = false
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b.WriteString(`\"`)
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			switch {
			case !keep:
				b.WriteString("\ufffd")
			case isWTF8Surrogate(s[i:]):
				sur := rune(s[i]&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
				if sur >= 0xdc00 && wasHigh {
					// A low surrogate right after a high one: escaped,
					// the two would read back as one character (the pair
					// \ud800\udc00 is U+10000), so it is written as its
					// bytes, which read back as themselves.
					b.WriteString(s[i : i+3])
				} else {
					b.WriteString(`\u`)
					b.WriteString(strconv.FormatInt(int64(sur), 16))
					afterHigh = sur < 0xdc00
				}
				i += 3
				continue
			default:
				b.WriteByte(s[i])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// plainString reports whether s is written as it is inside the quotes:
// printable ASCII with no quote or backslash.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isWTF8Surrogate reports whether s starts with a surrogate code point
// (U+D800 to U+DFFF) in the three-byte form UTF-8 would give it, which
// is how ParseJSON keeps a lone surrogate escape.
func isWTF8Surrogate(s string) bool {
	return len(s) >= 3 && s[0] == 0xed && s[1] >= 0xa0 && s[1] <= 0xbf && s[2] >= 0x80 && s[2] <= 0xbf
}

// appendWTF8 appends the surrogate r (U+D800 to U+DFFF) in the
// three-byte form UTF-8 would give it (which utf8.AppendRune refuses).
func appendWTF8(b []byte, r rune) []byte {
	return append(b, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
}

// SortedMembers returns the members of m, keys and values side by side,
// in the byte order of their keys, sorted as the cache key's writer sorts
// them: many keys by a radix sort on their bytes rather than by
// comparing them.
func SortedMembers(m map[string]any) (keys []string, values []any) {
	a := make([]jsonMember, 0, len(m))
	for k, v := range m {
		a = append(a, jsonMember{k: k, v: v})
	}
	keys, values = make([]string, len(a)), make([]any, len(a))
	order := sortMembers(a)
	for i := range a {
		j := i
		if order != nil {
			j = int(order[i].i)
		}
		keys[i], values[i] = a[j].k, a[j].v
	}
	return keys, values
}
