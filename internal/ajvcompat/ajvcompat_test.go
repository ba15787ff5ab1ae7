package ajvcompat

import (
	"encoding/json"
	"testing"
)

// The cases below are Ajv's own verdicts (ajv-formats 3, full mode),
// checked in Node; server's TestMCPOutputCheckAgreesWithAjv compares the
// two on thousands of generated values.
func TestCheck(t *testing.T) {
	cases := []struct {
		format string
		v      any
		want   bool
	}{
		{"email", "a@b.org", true},
		{"email", "a@b", false}, // Ajv wants a dot in the domain
		{"email", "a b@c.de", false},
		{"date-time", "2024-01-02T03:04:05Z", true},
		{"date-time", "2024-01-02 03:04:05Z", true}, // a space separates too
		{"date-time", "2024-01-02T03:04:05", false}, // no zone
		{"date-time", "2016-12-31T23:59:60Z", true}, // a leap second
		{"date-time", "2016-12-31T23:59:60+01:00", false},
		{"iso-date-time", "2024-01-02T03:04:05", true},
		{"date", "2024-02-29", true},
		{"date", "2023-02-29", false},
		{"uri", "http://x", true},
		{"uri", "x", false},
		{"uri", "urn:isbn:123", true},
		{"url", "https://example.org", true},
		{"url", "https://10.0.0.1/x", false}, // a private address
		{"url", "http://localhost", false},   // no top-level domain
		{"hostname", "-a.org", false},
		{"ipv4", "01.2.3.4", false},
		{"ipv6", "2001:db8::1", true},
		{"uuid", "urn:uuid:123e4567-e89b-12d3-a456-426614174000", true},
		{"duration", "P", false},
		{"duration", "PT", false},
		{"duration", "P1DT", false},
		{"duration", "PT1H", true},
		{"byte", "YWJj", true},
		{"byte", "!!!", false},
		{"byte", "!!!\nYWJj", true}, // /gm: one line is enough
		{"int32", json.Number("2147483648"), false},
		{"int32", json.Number("3.0"), true},
		{"int64", json.Number("1e300"), true}, // any integral number
		{"int64", json.Number("1.5"), false},
		{"int32", "not a number", true}, // a format applies to its type only
		{"made-up", "anything", true},   // unknown formats pass
	}
	for _, c := range cases {
		if got := Check(c.format, c.v); got != c.want {
			t.Errorf("Check(%q, %v) = %v, want %v", c.format, c.v, got, c.want)
		}
	}
}

func TestPattern(t *testing.T) {
	cases := []struct {
		pattern string
		ok      bool   // compiles
		s       string // matched against
		match   bool
	}{
		{`^\S+$`, true, "a\u00a0b", false}, // \s is JavaScript's: no-break space included
		{`^.$`, true, "\r", false},         // "." stops at \r as in JavaScript
		{`^\u00e9$`, true, "é", true},
		{`^\u{1F600}$`, true, "😀", true},
		{`^\p{L}+$`, true, "日本", true},
		{`a{`, false, "", false},      // JavaScript's u mode refuses a lone {
		{`(?i)abc`, false, "", false}, // inline flags: JavaScript refuses
		{`^(?=a)`, false, "", false},  // lookahead: Go refuses
		{`x\-y`, false, "", false},    // \- outside a class: u mode refuses
		{`^[a\-z]$`, true, "-", true}, // inside a class it is a dash
		{`^[\S]+$`, false, "", false}, // not translated
		{`}`, false, "", false},
	}
	for _, c := range cases {
		re, err := Pattern(c.pattern)
		if (err == nil) != c.ok {
			t.Errorf("Pattern(%q): %v, want compiled %v", c.pattern, err, c.ok)
			continue
		}
		if err == nil && re.MatchString(c.s) != c.match {
			t.Errorf("Pattern(%q) on %q: %v, want %v", c.pattern, c.s, !c.match, c.match)
		}
	}
}

// TestEveryExpressionCompiles: the format expressions, compiled on first
// use rather than at start-up, all compile (a bad one panics), each to
// itself, concurrent first uses included (go test -race checks them).
func TestEveryExpressionCompiles(t *testing.T) {
	if len(expressions) < 20 {
		t.Fatalf("%d expressions registered, want every one of the package's", len(expressions))
	}
	for _, l := range expressions {
		t.Run(l.expr[:min(len(l.expr), 24)], func(t *testing.T) {
			t.Parallel()
			if got := l.get().String(); got != l.expr {
				t.Fatalf("compiled %q, want %q", got, l.expr)
			}
		})
	}
}
