// Package ajvcompat checks values the way Ajv does — Ajv 8 with
// ajv-formats in full mode and unicode patterns, the validator the MCP
// TypeScript SDK checks a tool's structured results with — so that a
// server can tell, before it answers, whether such a client will accept
// a result.
//
// Format checks are ported from ajv-formats (its regular expressions and
// date and time functions); a format Ajv does not know passes, as it
// does in Ajv without strict mode. Patterns are translated from
// JavaScript's syntax to Go's where the two differ in what they match
// (\s, \S, "."), and a pattern using a construct whose meaning differs or
// that one of the two refuses is refused, so that a schema either
// compiles to the same checks or not at all.
package ajvcompat

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Formats are the formats Ajv checks (ajv-formats' full set); string
// formats apply to strings, int32, int64, float and double to numbers.
var Formats = []string{
	"date", "time", "date-time", "iso-time", "iso-date-time", "duration", "uri", "uri-reference",
	"uri-template", "url", "email", "hostname", "ipv4", "ipv6", "regex", "uuid", "json-pointer",
	"json-pointer-uri-fragment", "relative-json-pointer", "byte", "int32", "int64", "float", "double",
	"password", "binary",
}

// Check reports whether v passes format as Ajv checks it. A value of a
// type the format does not apply to passes, as does any value under a
// format Ajv does not know.
func Check(format string, v any) bool {
	switch format {
	case "int32", "int64", "float", "double":
		f, ok := number(v)
		if !ok {
			return true
		}
		switch format {
		case "int32":
			return f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
		case "int64":
			return f == math.Trunc(f) && !math.IsInf(f, 0)
		}
		return true
	}
	s, ok := v.(string)
	if !ok {
		return true
	}
	switch format {
	case "date":
		return date(s)
	case "time":
		return timeOK(s, true)
	case "iso-time":
		return timeOK(s, false)
	case "date-time":
		return dateTime(s, true)
	case "iso-date-time":
		return dateTime(s, false)
	case "duration":
		return duration(s)
	case "uri":
		return strings.ContainsAny(s, "/:") && uriRE.MatchString(s)
	case "uri-reference":
		return uriRefRE.MatchString(s)
	case "uri-template":
		return uriTemplateRE.MatchString(s)
	case "url":
		return url(s)
	case "email":
		return emailRE.MatchString(s)
	case "hostname":
		n := len(s)
		if n == 0 || n > 254 || (n == 254 && !strings.HasSuffix(s, ".")) {
			return false
		}
		return hostnameRE.MatchString(s)
	case "ipv4":
		return ipv4RE.MatchString(s)
	case "ipv6":
		return ipv6RE.MatchString(s)
	case "regex":
		if zAnchorRE.MatchString(s) {
			return false
		}
		_, err := Pattern(s)
		return err == nil
	case "uuid":
		return uuidRE.MatchString(s)
	case "json-pointer":
		return jsonPointerRE.MatchString(s)
	case "json-pointer-uri-fragment":
		return jsonPointerFragRE.MatchString(s)
	case "relative-json-pointer":
		return relJSONPointerRE.MatchString(s)
	case "byte":
		// /…/gm: any line of the string that is base64 (an empty
		// line is) makes it pass.
		for _, line := range lineSplitRE.Split(s, -1) {
			if byteRE.MatchString(line) {
				return true
			}
		}
		return false
	}
	return true // password, binary, and formats Ajv does not know
}

// number reads a JSON number as JavaScript does (a float64; one beyond
// its range is no finite number).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return math.Inf(1), true
		}
		return f, true
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

var (
	dateRE      = lazy(`^(\d\d\d\d)-(\d\d)-(\d\d)$`)
	timeRE      = lazy(`(?i)^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$`)
	dtSepRE     = lazy(`(?i)t|` + jsSpace)
	daysInMonth = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
)

// jsSpace is JavaScript's \s.
const jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

func date(s string) bool {
	m := dateRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	d, _ := strconv.Atoi(m[3])
	if mo < 1 || mo > 12 || d < 1 {
		return false
	}
	max := daysInMonth[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		max = 29
	}
	return d <= max
}

func timeOK(s string, strictZone bool) bool {
	m := timeRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	hr, _ := strconv.Atoi(m[1])
	min, _ := strconv.Atoi(m[2])
	sec, _ := strconv.ParseFloat(m[3], 64)
	tz := m[4]
	sign := 1
	if m[5] == "-" {
		sign = -1
	}
	tzH, _ := strconv.Atoi(m[6])
	tzM, _ := strconv.Atoi(m[7])
	if tzH > 23 || tzM > 59 || (strictZone && tz == "") {
		return false
	}
	if hr <= 23 && min <= 59 && sec < 60 {
		return true
	}
	utcMin := min - tzM*sign
	utcHr := hr - tzH*sign
	if utcMin < 0 {
		utcHr--
	}
	return (utcHr == 23 || utcHr == -1) && (utcMin == 59 || utcMin == -1) && sec < 61
}

func dateTime(s string, strictZone bool) bool {
	parts := dtSepRE.Split(s, -1)
	return len(parts) == 2 && date(parts[0]) && timeOK(parts[1], strictZone)
}

var durationRE = lazy(`^P((\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$`)

// duration is ajv-formats' /^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)…)?|(\d+W)?)$/
// without its lookaheads: not "P" alone, a digit after a T.
func duration(s string) bool {
	if s == "P" || !durationRE.MatchString(s) {
		return false
	}
	if i := strings.IndexByte(s, 'T'); i >= 0 && (i+1 >= len(s) || s[i+1] < '0' || s[i+1] > '9') {
		return false
	}
	return true
}

const (
	ipv6Part = `(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)`
	ipv4Part = `(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)`
)

var (
	uriRE             = lazy(`(?i)^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:` + ipv6Part + `|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|` + ipv4Part + `|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$`)
	uriRefRE          = lazy(`(?i)^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:` + ipv6Part + `|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|` + ipv4Part + `|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$`)
	uriTemplateRE     = lazy("(?i)^(?:(?:[^\\x00-\\x20\"'<>%\\\\^`{|}]|%[0-9a-f]{2})|\\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\\*)?)*\\})*$")
	emailRE           = lazy("(?i)^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
	hostnameRE        = lazy(`(?i)^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$`)
	ipv4RE            = lazy(`^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$`)
	ipv6RE            = lazy(`(?i)^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$`)
	uuidRE            = lazy(`(?i)^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$`)
	jsonPointerRE     = lazy(`^(?:\/(?:[^~/]|~0|~1)*)*$`)
	jsonPointerFragRE = lazy(`(?i)^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$`)
	relJSONPointerRE  = lazy(`^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$`)
	byteRE            = lazy(`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`)
	lineSplitRE       = lazy("\r\n|[\n\r\u2028\u2029]")
	zAnchorRE         = lazy(`[^\\]\\Z`)
	quantRE           = lazy(`^\{\d+(?:,\d*)?\}`)

	// url is ajv-formats' url without its lookaheads; the address
	// alternative is a group, so that the private ranges the lookaheads
	// exclude are excluded after the match.
	urlRE     = lazy(`(?i)^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:((?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4])))|(?:(?:[a-z0-9\x{00a1}-\x{ffff}]+-)*[a-z0-9\x{00a1}-\x{ffff}]+)(?:\.(?:[a-z0-9\x{00a1}-\x{ffff}]+-)*[a-z0-9\x{00a1}-\x{ffff}]+)*(?:\.(?:[a-z\x{00a1}-\x{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$`)
	privateRE = lazy(`^(?:(?:10|127)(?:\.\d{1,3}){3}|(?:169\.254|192\.168)(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})`)
)

// url checks ajv-formats' url format. Where the first parse of the
// string takes the host for one of the private addresses Ajv's
// lookaheads exclude, it fails (Ajv might find another parse: this is as
// strict or stricter, never more lenient).
func url(s string) bool {
	m := urlRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	return m[1] == "" || !privateRE.MatchString(m[1])
}

// Pattern compiles a JSON Schema pattern as Ajv runs it (a JavaScript
// RegExp with the u flag, matched anywhere in the string). Constructs
// that mean something else in Go, or that one of the two refuses, are an
// error.
func Pattern(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return nil, fmt.Errorf("pattern %q ends with a backslash", p)
			}
			i++
			e := p[i]
			switch e {
			case 's':
				if inClass {
					b.WriteString(jsSpace[1 : len(jsSpace)-1])
				} else {
					b.WriteString(jsSpace)
				}
			case 'S':
				if inClass {
					return nil, fmt.Errorf(`pattern %q: \S inside a class is not checked as JavaScript checks it`, p)
				}
				b.WriteString("[^" + jsSpace[1:])
			case 'd', 'D', 'w', 'W', 'b', 'B', 'n', 'r', 't', 'f', 'v', '0',
				'.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '^', '$', '\\', '/', '-':
				if e == '-' && !inClass {
					return nil, fmt.Errorf(`pattern %q: \- outside a class, which JavaScript refuses`, p)
				}
				if (e == 'b' || e == 'B') && inClass {
					return nil, fmt.Errorf(`pattern %q: \%c inside a class`, p, e)
				}
				if e == '0' && i+1 < len(p) && p[i+1] >= '0' && p[i+1] <= '9' {
					return nil, fmt.Errorf(`pattern %q: an octal escape`, p)
				}
				if e == '0' {
					b.WriteString(`\x00`)
				} else if e == '/' {
					b.WriteByte('/')
				} else if e == 'v' {
					b.WriteString(`\x0b`)
				} else {
					b.WriteByte('\\')
					b.WriteByte(e)
				}
			case 'u':
				// \uXXXX or \u{X…}
				if i+1 < len(p) && p[i+1] == '{' {
					j := strings.IndexByte(p[i:], '}')
					if j < 0 {
						return nil, fmt.Errorf(`pattern %q: an unterminated \u{…}`, p)
					}
					b.WriteString(`\x{` + p[i+2:i+j] + `}`)
					i += j
				} else {
					if i+4 >= len(p) {
						return nil, fmt.Errorf(`pattern %q: a short \u escape`, p)
					}
					b.WriteString(`\x{` + p[i+1:i+5] + `}`)
					i += 4
				}
			case 'x':
				if i+2 >= len(p) {
					return nil, fmt.Errorf(`pattern %q: a short \x escape`, p)
				}
				b.WriteString(`\x` + p[i+1:i+3])
				i += 2
			case 'p', 'P':
				// Unicode properties: \p{L}, \p{Lu}; scripts need
				// JavaScript's Script= form, which Go does not take.
				j := strings.IndexByte(p[i:], '}')
				if i+1 >= len(p) || p[i+1] != '{' || j < 0 || strings.ContainsAny(p[i:i+j], "=") {
					return nil, fmt.Errorf(`pattern %q: a \p escape Go does not read as JavaScript does`, p)
				}
				b.WriteString(p[i-1 : i+j+1])
				i += j
			default:
				return nil, fmt.Errorf(`pattern %q: the escape \%c is not checked as JavaScript checks it`, p, e)
			}
		case inClass:
			if c == ']' {
				inClass = false
			} else if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				return nil, fmt.Errorf("pattern %q: a POSIX class", p)
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == ']' {
				return nil, fmt.Errorf("pattern %q: an empty class", p)
			}
		case c == '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case c == '{':
			m := quantRE.FindString(p[i:])
			if m == "" {
				return nil, fmt.Errorf("pattern %q: a { that is no quantifier, which JavaScript refuses", p)
			}
			b.WriteString(m)
			i += len(m) - 1
		case c == '}' || c == ']':
			return nil, fmt.Errorf("pattern %q: a lone %c, which JavaScript refuses", p, c)
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			if i+2 < len(p) && p[i+2] == ':' {
				b.WriteString("(?:")
				i += 2
				continue
			}
			return nil, fmt.Errorf("pattern %q: a group construct (lookaround, flags or names) Go does not run as JavaScript does", p)
		default:
			b.WriteByte(c)
		}
	}
	return regexp.Compile(b.String())
}

// lazyRE is a regular expression compiled on its first use: most
// processes never check a format, and compiling every expression of
// this package when it was initialized was an eighth of the CPU each
// toolenv process spends before it does anything (docs/benchmarks.md).
type lazyRE struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// expressions are every lazyRE of the package, for the test that
// compiles them all (set while the package is initialized, read only
// after).
var expressions []*lazyRE

// lazy returns expr, to be compiled on first use (a bad expression
// panics then, as regexp.MustCompile would have at start-up:
// TestEveryExpressionCompiles compiles each).
func lazy(expr string) *lazyRE {
	l := &lazyRE{expr: expr}
	expressions = append(expressions, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRE) FindString(s string) string           { return l.get().FindString(s) }
func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }
func (l *lazyRE) Split(s string, n int) []string       { return l.get().Split(s, n) }
