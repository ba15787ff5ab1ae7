package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCanonicalNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"5", "5"}, {"5.0", "5"}, {"5e0", "5"}, {"50e-1", "5"}, {"0.5e1", "5"},
		{"-0", "0"}, {"0.000", "0"}, {"-0.0e5", "0"},
		{"12.50", "12.5"}, {"-12.5", "-12.5"}, {"0.001", "0.001"}, {"1E-3", "0.001"},
		{"0.000001", "0.000001"}, {"1e-7", "1e-7"}, {"123e-10", "1.23e-8"},
		{"1e20", "100000000000000000000"}, {"1e21", "1e+21"}, {"1e22", "1e+22"},
		{"12345678901234567890", "12345678901234567890"},
		{"12345678901234567891", "12345678901234567891"},
		{"007", "7"}, {"1.5E+3", "1500"},
	}
	for _, tt := range tests {
		got, err := CanonicalNumber(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CanonicalNumber(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-", "1.", ".5", "1e", "1e+", "abc", "1e9999999999", "0x10", "1.2.3"} {
		if got, err := CanonicalNumber(bad); err == nil {
			t.Errorf("CanonicalNumber(%q) = %q, want an error", bad, got)
		}
	}
}

func TestCanonicalizeJSONIgnoresFormatting(t *testing.T) {
	groups := [][]string{
		{`{"b":1,"a":"x"}`, `{ "a" : "x", "b" : 1.0 }`, "{\n\"a\":\"x\",\"b\":1e0}"},
		{`{"q":"caf\u00e9","n":[1,2.50]}`, `{"n":[1.0,2.5],"q":"café"}`},
		{`{"s":"<&>"}`, `{"s":"\u003c\u0026\u003e"}`},
	}
	for _, g := range groups {
		first, err := CanonicalizeJSON([]byte(g[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range g[1:] {
			got, err := CanonicalizeJSON([]byte(other))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(first) {
				t.Errorf("%s -> %s, but %s -> %s", g[0], first, other, got)
			}
		}
	}
	distinct := []string{`{"a":1}`, `{"a":"1"}`, `{"a":null}`, `{}`, `{"a":[1]}`, `{"a":true}`, `{"A":1}`}
	seen := map[string]string{}
	for _, d := range distinct {
		c, err := CanonicalizeJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[string(c)]; ok {
			t.Errorf("%s and %s share a canonical form %s", prev, d, c)
		}
		seen[string(c)] = d
	}
}

func TestCacheKey(t *testing.T) {
	k1, _ := CacheKey("c/t", map[string]any{"limit": json.Number("10"), "q": "x"})
	k2, _ := CacheKey("c/t", map[string]any{"q": "x", "limit": 10.0})
	k3, _ := CacheKey("c/u", map[string]any{"q": "x", "limit": 10})
	if k1 != k2 {
		t.Errorf("same call, different keys: %q %q", k1, k2)
	}
	if k1 == k3 {
		t.Errorf("different tools share key %q", k1)
	}
	e1, _ := CacheKey("c/t", nil)
	e2, _ := CacheKey("c/t", map[string]any{})
	if e1 != e2 {
		t.Errorf("nil and empty args: %q vs %q", e1, e2)
	}
}

func FuzzCanonicalizeJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2.0,"x",null,true]`, `{"b":{"c":[1e5,-0.0]}}`, `"\u00e9\n"`, `1e400`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := CanonicalizeJSON(data)
		if err != nil {
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form is not JSON: %q", c)
		}
		c2, err := CanonicalizeJSON(c)
		if err != nil {
			t.Fatalf("canonical form does not re-parse: %q: %v", c, err)
		}
		if string(c) != string(c2) {
			t.Fatalf("not idempotent: %q -> %q", c, c2)
		}
	})
}

func FuzzCanonicalNumber(f *testing.F) {
	for _, s := range []string{"5", "5.0", "-1.25e-3", "1e22", "0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		c, err := CanonicalNumber(lit)
		if err != nil {
			return
		}
		a, errA := strconv.ParseFloat(lit, 64)
		b, errB := strconv.ParseFloat(c, 64)
		if errA == nil && errB == nil && a != b && !(math.IsInf(a, 0) && math.IsInf(b, 0)) {
			t.Fatalf("value changed: %q (%v) -> %q (%v)", lit, a, c, b)
		}
		if c2, err := CanonicalNumber(c); err != nil || c2 != c {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", lit, c, c2, err)
		}
	})
}

func TestIsJSONNumber(t *testing.T) {
	tests := []struct {
		lit  string
		want bool
	}{
		{"0", true}, {"-0", true}, {"7", true}, {"0.5", true}, {"-0.5e3", true}, {"10", true}, {"1E+2", true},
		{"007", false}, {"-01", false}, {"00", false}, {"", false}, {"+1", false}, {".5", false}, {"1.", false}, {"0x1", false},
	}
	for _, tt := range tests {
		if got := IsJSONNumber(tt.lit); got != tt.want {
			t.Errorf("IsJSONNumber(%q) = %v, want %v", tt.lit, got, tt.want)
		}
		// It agrees with encoding/json about what json.Number may hold.
		_, err := json.Marshal(json.Number(tt.lit))
		if tt.lit != "" && (err == nil) != tt.want {
			t.Errorf("IsJSONNumber(%q) = %v, but encoding/json says %v", tt.lit, tt.want, err)
		}
	}
}

// TestCanonicalOrdersManyMembers: objects of a few to thousands of
// members, whose keys share long prefixes, are prefixes of each other,
// are empty or hold multi-byte characters, come out with their keys in
// byte order, each once (many members are radix sorted by their keys'
// bytes eight at a time, runs that share them by the next eight: both
// paths, their seam, and keys that end inside a word).
func TestCanonicalOrdersManyMembers(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	parts := []string{"", "a", "ab", "abcdefgh", "abcdefghi", "é", "\u00ff", "\x7f", "z", "0", "日本", "\x00",
		"undocumented_argument_", "undocumented_argument_\x00"}
	for _, n := range []int{1, 63, 64, 65, 300, 5000, 30000} {
		m := map[string]any{}
		for len(m) < n {
			var k strings.Builder
			for range rng.IntN(4) {
				k.WriteString(parts[rng.IntN(len(parts))])
			}
			if rng.IntN(3) == 0 {
				k.WriteString(strconv.Itoa(rng.IntN(1000)))
			}
			m[k.String()] = len(m)
		}
		c, err := Canonical(m)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(c))
		dec.Token() // {
		var keys []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, tok.(string))
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		if len(keys) != n {
			t.Fatalf("%d members: %d keys out", n, len(keys))
		}
		for i := 1; i < len(keys); i++ {
			if keys[i-1] >= keys[i] {
				t.Fatalf("%d members: %q before %q", n, keys[i-1], keys[i])
			}
		}
	}
}

// canonicalNumberBefore is CanonicalNumber as it was written before
// appendNumber (with strings, allocating at each step): the oracle the
// allocation-free version is held to.
func canonicalNumberBefore(lit string) (string, error) {
	if plainInteger(lit) {
		return lit, nil // already canonical: the common case, without allocating
	}
	s := lit
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(mant, ".") && frac == "") {
		return "", fmt.Errorf("canonical json: %q is not a JSON number", lit)
	}
	exp := int64(0)
	if hasExp {
		e := expPart
		if strings.HasPrefix(e, "+") || strings.HasPrefix(e, "-") {
			e = e[1:]
		}
		if e == "" || !allDigits(e) {
			return "", fmt.Errorf("canonical json: %q is not a JSON number", lit)
		}
		e = strings.TrimLeft(e, "0")
		if len(e) > 9 {
			return "", fmt.Errorf("canonical json: exponent of %q is out of range", lit)
		}
		n, _ := strconv.ParseInt(e, 10, 64)
		if strings.HasPrefix(expPart, "-") {
			n = -n
		}
		exp = n
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	if digits == "" {
		return "0", nil
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = trimmed
	n := int64(len(digits))
	var out string
	point := n + exp // position of the decimal point from the left of digits
	switch {
	case exp >= 0 && point <= 21:
		out = digits + strings.Repeat("0", int(exp))
	case exp < 0 && point > 0:
		out = digits[:point] + "." + digits[point:]
	case exp < 0 && point > -6:
		out = "0." + strings.Repeat("0", int(-point)) + digits
	default:
		e := point - 1
		m := digits[:1]
		if n > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if e < 0 {
			sign = "-"
			e = -e
		}
		out = m + "e" + sign + strconv.FormatInt(e, 10)
	}
	if neg {
		out = "-" + out
	}
	return out, nil
}

// numberLits are number literals and near-numbers of every kind
// CanonicalNumber reads or refuses.
var numberLits = []string{"0", "-0", "-0.0", "0.0", "1", "-1", "10", "1.0", "1.50", "1.5e3", "1.5E+3", "1.5e-3", "-1.25e-3",
	"0.000001", "0.0000001", "1e21", "1e22", "123456789012345678901", "1234567890123456789012", "12345678901234567890123e-5",
	"00012", "-007.500", "1e", "1e+", "1.e3", ".5", "5.", "", "-", "+1", "1x", "1e1x", "1.2.3", "1e999999999", "1e1000000000",
	"1e0000000001", "0e5", "0.0e-5", "9.99999e-7", "1E400", "-1.0E-400", "\u0031", "１", "1eİ", "1K"}

// TestAppendNumberAsBefore: appendNumber (and CanonicalNumber through
// it) gives what canonicalNumberBefore gave, errors word for word, over
// the literals above and generated ones.
func TestAppendNumberAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 63))
	lits := slices.Clone(numberLits)
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteByte("0123456789.-+eE0000"[r.IntN(19)])
		}
		lits = append(lits, b.String())
	}
	for _, lit := range lits {
		checkNumberAsBefore(t, lit)
	}
}

func checkNumberAsBefore(t *testing.T, lit string) {
	t.Helper()
	want, werr := canonicalNumberBefore(lit)
	got, gerr := CanonicalNumber(lit)
	if got != want || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("CanonicalNumber(%q) = %q, %v; before %q, %v", lit, got, gerr, want, werr)
	}
	app, aerr := appendNumber([]byte("x"), lit)
	if aerr == nil && string(app) != "x"+want || (aerr == nil) != (werr == nil) {
		t.Fatalf("appendNumber(%q) = %q, %v; want x%q", lit, app, aerr, want)
	}
}

func FuzzAppendNumberAsBefore(f *testing.F) {
	for _, s := range numberLits {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		checkNumberAsBefore(t, lit)
	})
}

// TestSortedMembersInByteOrder: over generated keys (shared prefixes of
// every length, empty, not UTF-8, few and many), SortedMembers gives every
// member once, keys in the order slices.Sort gives them, each with its value.
func TestSortedMembersInByteOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 7))
	alphabet := []string{"", "a", "ab", "abcdefgh", "abcdefghi", "\x00", "\xff", "é", "k0000001", "k000000", "Z"}
	for _, n := range []int{0, 1, 5, 63, 64, 65, 300, 5000} {
		m := map[string]any{}
		for len(m) < n {
			var b strings.Builder
			for range r.IntN(4) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			b.WriteString(strconv.Itoa(r.IntN(3 * n)))
			m[b.String()] = len(m)
		}
		keys, values := SortedMembers(m)
		want := slices.Sorted(maps.Keys(m))
		if !slices.Equal(keys, want) {
			t.Fatalf("%d keys: not in byte order or not each once", n)
		}
		for i, k := range keys {
			if values[i] != m[k] {
				t.Fatalf("%d keys: %q has value %v, want %v", n, k, values[i], m[k])
			}
		}
	}
}

func ExampleSortedMembers() {
	keys, values := SortedMembers(map[string]any{"b": 2, "a": 1, "B": 0})
	fmt.Println(keys, values)
	// Output: [B a b] [0 1 2]
}
