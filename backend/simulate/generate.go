package simulate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// generator fills a shape with deterministic values: every value is a
// function of the call (seed), the member's path and its list index.
type generator struct {
	seed    string
	args    map[string]any   // normalised argument names → values
	title   string           // the API's name, for text values
	maxList int              // longest list made
	pools   map[string][]any // recorded values by member path
	// relations hold between members of recorded objects, by pool path
	// (schema path only).
	relations map[string][]relation
	// lists are the recorded lists by pool path (schema path only).
	lists map[string][][]any
}

// value makes a value of shape s for the member at path (key is its
// name, for choosing plausible values).
func (g *generator) value(s *shape, path, key string) any {
	switch s.kind {
	case kindObject:
		o := make(pyfmt.Dict, 0, len(s.fields))
		for _, f := range s.fields {
			o = append(o, pyfmt.Item{Key: f.name, Value: g.value(f.shape, joinPath(path, f.name), f.name)})
		}
		return o
	case kindArray:
		n := s.length
		if n < 0 {
			n = 3
		}
		n = min(n, g.maxList)
		a := make([]any, n)
		for i := range a {
			a[i] = g.value(s.elem, path+"["+strconv.Itoa(i)+"]", key)
		}
		return a
	case kindNull:
		return nil
	case kindLiteral:
		return s.literal
	}
	h := hash64(g.seed, path)
	if len(s.choices) > 0 {
		return s.choices[h%uint64(len(s.choices))]
	}
	if v, ok := g.fromArgs(s.kind, key); ok {
		return v
	}
	if v, ok := g.fromPool(s.kind, poolPath(path), h); ok {
		return v
	}
	switch s.kind {
	case kindInt:
		return intValue(key, h)
	case kindFloat:
		return floatValue(key, h)
	case kindBool:
		return h>>17&1 == 1
	}
	return g.stringValue(key, s.format, h)
}

// poolPath turns "data.movies[3].title" into the pool key
// "data.movies[].title".
func poolPath(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
			b.WriteString("[]")
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fromArgs echoes the argument named like the member, when its type fits.
func (g *generator) fromArgs(k kind, key string) (any, bool) {
	if key == "" {
		return nil, false
	}
	v, ok := g.args[normName(key)]
	if !ok {
		return nil, false
	}
	switch k {
	case kindString, kindAny:
		switch x := v.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		}
	case kindInt:
		if n, ok := v.(json.Number); ok && kindOfValue(n) == kindInt {
			return n, true
		}
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				return json.Number(s), true
			}
		}
	case kindFloat:
		if n, ok := v.(json.Number); ok {
			return n, true
		}
	case kindBool:
		if b, ok := v.(bool); ok {
			return b, true
		}
	}
	return nil, false
}

// fromPool picks a recorded value of the right kind for the path.
func (g *generator) fromPool(k kind, path string, h uint64) (any, bool) {
	var fit []any
	for _, v := range g.pools[path] {
		vk := kindOfValue(v)
		if vk == k || k == kindFloat && vk == kindInt || k == kindAny && vk == kindString {
			fit = append(fit, v)
		}
	}
	if len(fit) == 0 {
		return nil, false
	}
	return fit[h%uint64(len(fit))], true
}

// nameWords splits a member name into lower-case words: "imageUri",
// "image_uri" and "image-uri" all give [image uri].
func nameWords(key string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range key {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}

// hasWord reports whether any of the name's words is one of ws, or
// starts or ends with one of at least 4 letters ("imageurl" has "image",
// "imdbrating" has "rating").
func hasWord(words []string, ws ...string) bool {
	for _, w := range words {
		for _, x := range ws {
			if w == x || len(x) >= 4 && len(w) > len(x) && (strings.HasPrefix(w, x) || strings.HasSuffix(w, x)) {
				return true
			}
		}
	}
	return false
}

// stringRule makes a plausible string for members whose names contain
// one of its words. The rules are tried in order.
type stringRule struct {
	name  string
	words []string
	make  func(g *generator, key string, h uint64) string
}

var stringRules = []stringRule{
	{"image", []string{"image", "images", "img", "thumbnail", "thumb", "avatar", "logo", "photo", "picture", "poster", "posters", "icon", "cover", "banner"},
		func(_ *generator, _ string, h uint64) string {
			return fmt.Sprintf("https://example.com/images/%08x.jpg", uint32(h))
		}},
	{"url", []string{"url", "uri", "link", "href", "website", "homepage", "permalink", "site", "web"},
		func(_ *generator, key string, h uint64) string {
			return fmt.Sprintf("https://example.com/%s/%08x", strings.Join(nameWords(key), "-"), uint32(h))
		}},
	{"email", []string{"email", "mail"},
		func(_ *generator, _ string, h uint64) string { return fmt.Sprintf("user%d@example.com", h%10000) }},
	{"datetime", []string{"timestamp", "datetime", "time", "at", "created", "updated", "modified", "published"},
		func(_ *generator, _ string, h uint64) string { return dateFor(h).Format(time.RFC3339) }},
	{"date", []string{"date", "day", "birthday", "dob", "start", "end", "since", "until", "expiry", "expires"},
		func(_ *generator, _ string, h uint64) string { return dateFor(h).Format(time.DateOnly) }},
	{"uuid", []string{"uuid", "guid"},
		func(_ *generator, _ string, h uint64) string {
			h2 := hash64(strconv.FormatUint(h, 16))
			return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", uint32(h), uint16(h>>32), uint16(h>>48)&0xfff, uint16(h2)&0xfff, h2>>16&0xffffffffffff)
		}},
	{"id", []string{"id", "key", "token", "hash", "code", "sku", "isbn", "ref"},
		func(_ *generator, _ string, h uint64) string { return fmt.Sprintf("%012x", h&0xffffffffffff) }},
	{"slug", []string{"slug", "handle"},
		func(_ *generator, key string, h uint64) string {
			return fmt.Sprintf("%s-%d", strings.Join(nameWords(key), "-"), h%1000)
		}},
	{"phone", []string{"phone", "tel", "telephone", "mobile", "fax"},
		func(_ *generator, _ string, h uint64) string { return fmt.Sprintf("+1-555-01%02d", h%100) }},
	{"currency", []string{"currency"}, pick("USD", "EUR", "GBP", "JPY", "CAD")},
	{"country", []string{"country", "nation", "nationality"}, pick("United States", "France", "Germany", "Japan", "Brazil", "India", "Canada", "Australia")},
	{"city", []string{"city", "town"}, pick("New York", "Paris", "Berlin", "Tokyo", "São Paulo", "Mumbai", "Toronto", "Sydney")},
	{"language", []string{"lang", "language", "locale"}, pick("en", "fr", "de", "es", "ja", "pt")},
	{"status", []string{"status", "state"}, pick("ok", "active", "completed")},
	{"text", []string{"description", "desc", "text", "content", "summary", "bio", "message", "msg", "comment", "body", "review", "snippet", "details", "note", "about", "overview"},
		func(g *generator, key string, h uint64) string {
			return fmt.Sprintf("Synthesized %s %d for %s.", strings.Join(nameWords(key), " "), h%1000, g.title)
		}},
	{"name", []string{"name", "title", "label", "username", "author", "artist", "user", "nickname", "headline"},
		func(_ *generator, key string, h uint64) string {
			return fmt.Sprintf("%s %d", titleCase(nameWords(key)), h%1000)
		}},
}

// pick returns a rule that chooses one of the values.
func pick(values ...string) func(*generator, string, uint64) string {
	return func(_ *generator, _ string, h uint64) string { return values[h%uint64(len(values))] }
}

// stringValue makes a string for the member key.
func (g *generator) stringValue(key, format string, h uint64) string {
	switch format {
	case "date-time":
		return dateFor(h).Format(time.RFC3339)
	case "date":
		return dateFor(h).Format(time.DateOnly)
	case "uri", "url":
		return fmt.Sprintf("https://example.com/%08x", uint32(h))
	case "email":
		return fmt.Sprintf("user%d@example.com", h%10000)
	}
	words := nameWords(key)
	for _, r := range stringRules {
		if hasWord(words, r.words...) {
			return r.make(g, key, h)
		}
	}
	if len(words) == 0 {
		return fmt.Sprintf("value %06x", h&0xffffff)
	}
	return fmt.Sprintf("%s %06x", strings.Join(words, " "), h&0xffffff)
}

func titleCase(words []string) string {
	if len(words) == 0 {
		return "Item"
	}
	w := words[len(words)-1]
	return strings.ToUpper(w[:1]) + w[1:]
}

// dateFor is a day between 2020-01-01 and 2024-12-31 with a time of day.
func dateFor(h uint64) time.Time {
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(h%(5*365*24*3600)) * time.Second)
}

// intRule makes a plausible integer for members whose names contain one
// of its words: a value in [lo, hi].
type intRule struct {
	words  []string
	lo, hi int64
}

var intRules = []intRule{
	{[]string{"year", "released", "release"}, 2000, 2024},
	{[]string{"timestamp", "time", "at", "created", "updated", "date", "epoch"}, 1577836800, 1735689599},
	{[]string{"age"}, 18, 80},
	{[]string{"percent", "percentage", "score", "rating", "pct"}, 0, 100},
	{[]string{"price", "amount", "cost", "salary", "revenue", "balance"}, 1, 1000},
	{[]string{"count", "total", "num", "number", "size", "page", "pages", "limit", "rank", "position", "quantity", "qty",
		"views", "likes", "followers", "following", "length", "duration", "offset", "index"}, 0, 500},
	{[]string{"id", "code"}, 1, 99999},
}

func intValue(key string, h uint64) json.Number {
	lo, hi := int64(0), int64(1000)
	words := nameWords(key)
	for _, r := range intRules {
		if hasWord(words, r.words...) {
			lo, hi = r.lo, r.hi
			break
		}
	}
	return json.Number(strconv.FormatInt(lo+int64(h%uint64(hi-lo+1)), 10))
}

// floatRule makes a plausible number with decimals places in [lo, hi].
type floatRule struct {
	words    []string
	lo, hi   float64
	decimals int
}

var floatRules = []floatRule{
	{[]string{"lat", "latitude"}, -90, 90, 4},
	{[]string{"lon", "lng", "long", "longitude"}, -180, 180, 4},
	{[]string{"rating", "stars"}, 0, 5, 1},
	{[]string{"price", "amount", "cost", "value", "balance", "total", "open", "close", "high", "low", "volume"}, 0, 1000, 2},
	{[]string{"percent", "percentage", "change", "ratio", "rate", "pct"}, -10, 10, 2},
	{[]string{"score", "probability", "confidence", "proportion"}, 0, 1, 3},
}

func floatValue(key string, h uint64) json.Number {
	lo, hi, dec := 0.0, 100.0, 2
	words := nameWords(key)
	for _, r := range floatRules {
		if hasWord(words, r.words...) {
			lo, hi, dec = r.lo, r.hi, r.decimals
			break
		}
	}
	f := lo + (hi-lo)*float64(h%1000003)/1000003
	s := strconv.FormatFloat(f, 'f', dec, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return json.Number(s)
}
