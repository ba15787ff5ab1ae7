package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// The problem codes validation reports.
const (
	CodeUnknownParam    = "unknown_param"
	CodeMissingRequired = "missing_required"
	CodeWrongType       = "wrong_type"
	CodeNotInEnum       = "not_in_enum"
	CodeOutOfRange      = "out_of_range"
	CodeBadFormat       = "bad_format"
)

// Validator checks arguments. It caches compiled patterns, so keep one and
// share it; it is safe for concurrent use. The zero value is ready.
type Validator struct {
	patterns sync.Map // string → *regexp.Regexp (nil for an invalid pattern)
}

// Outcome is the result of checking one call's arguments.
type Outcome struct {
	// Args are the arguments to pass on: coerced in lenient mode. It is
	// the caller's map when nothing changed.
	Args map[string]any
	// Problems are the rejections, sorted by parameter; the call must not
	// proceed if there are any.
	Problems []toolenv.Problem
	// Warnings are notes for the result (lenient pass-throughs).
	Warnings []string
	// Changed names the outermost keys whose values Args gives otherwise
	// than the caller's map (coerced, or removed as an explicit null),
	// when Args is not the caller's map: every other key has the same
	// value in both (see toolenv.Call.ArgsDerived).
	Changed []string
}

// Args checks args against the object schema s. lenient selects the
// lenient policy (see the package documentation).
func (v *Validator) Args(s *toolenv.Schema, args map[string]any, lenient bool) Outcome {
	return v.args(s, args, lenient, false, nil)
}

// ArgsSorted is Args given, as well, the keys of args in byte order, each
// once (as toolenv.Call.SortedKeys gives them): an object of many members
// the schema does not declare then costs a look at its first few
// undeclared keys instead of a pass over all of them. The outcome is
// Args's.
func (v *Validator) ArgsSorted(s *toolenv.Schema, args map[string]any, keys iter.Seq[string], lenient bool) Outcome {
	return v.args(s, args, lenient, false, keys)
}

// args is Args; walkAll visits every member one by one however many
// there are (what the shortcut for objects of many undeclared members
// must agree with); sorted, when not nil, holds args's keys in byte
// order.
func (v *Validator) args(s *toolenv.Schema, args map[string]any, lenient, walkAll bool, sorted iter.Seq[string]) Outcome {
	out := Outcome{Args: args}
	if s == nil {
		return out
	}
	c := checker{v: v, lenient: lenient, walkAll: walkAll, sorted: sorted}
	coerced := c.object(s, args, "", true)
	if coerced != nil {
		out.Args, out.Changed = coerced, c.changed
	}
	out.Problems, out.Warnings = c.problems, c.warnings
	return out
}

type checker struct {
	v        *Validator
	lenient  bool
	walkAll  bool             // no shortcut for objects of many members (see args)
	sorted   iter.Seq[string] // the outermost object's keys in byte order, or nil
	problems []toolenv.Problem
	warnings []string
	changed  []string // the outermost object's keys set or dropped
}

func (c *checker) fail(path, code, expected, format string, args ...any) {
	c.problems = append(c.problems, toolenv.Problem{Param: path, Code: code, Expected: expected, Message: fmt.Sprintf(format, args...)})
}

// softFail is a rejection in strict mode and a warning in lenient mode.
func (c *checker) softFail(path, code, expected, format string, args ...any) {
	if c.lenient {
		c.warnings = append(c.warnings, fmt.Sprintf(format, args...)+" (passed on as given)")
		return
	}
	c.fail(path, code, expected, format, args...)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object checks an object's properties. It returns a new map when a value
// was coerced, else nil.
func (c *checker) object(s *toolenv.Schema, m map[string]any, path string, top bool) map[string]any {
	var out map[string]any
	// The first change copies m (maps.Clone copies the table as it is,
	// without hashing each key again: a call may send tens of thousands
	// of keys and have one of them coerced).
	own := func(k string) {
		if out == nil {
			out = maps.Clone(m)
			if out == nil {
				out = map[string]any{}
			}
		}
		if top {
			c.changed = append(c.changed, k)
		}
	}
	set := func(k string, val any) {
		own(k)
		out[k] = val
	}
	drop := func(k string) {
		own(k)
		delete(out, k)
	}
	for _, name := range s.Required {
		if val, ok := m[name]; !ok || (val == nil && !c.lenient) {
			ps := s.Prop(name)
			c.fail(join(path, name), CodeMissingRequired, describeType(ps), "missing required argument `%s`%s", join(path, name), typeSuffix(ps))
		}
	}
	closed := !c.lenient && !allowsAdditional(s)
	before := len(c.problems)
	warnBefore := len(c.warnings)
	defer func() {
		// Map order is random: sort what this object added, for stable
		// messages.
		added := c.problems[before:]
		sort.SliceStable(added, func(i, j int) bool { return added[i].Param < added[j].Param })
		sort.Strings(c.warnings[warnBefore:])
	}()
	// The unknown keys are counted, and the first few (in byte order)
	// kept, as they are met: a call may send tens of thousands.
	var unknown keyTally
	reportUnknown := closed || c.lenient && len(s.Properties) > 0 && !allowsAdditional(s)
	check := func(k string, ps *toolenv.Schema, val any) {
		if val == nil && !c.lenient && s.IsRequired(k) {
			return // already reported as missing
		}
		if val == nil && !s.IsRequired(k) && !admitsNull(ps) {
			// An explicit null for an optional argument that takes no
			// null is the argument left out: how OpenAI's strict mode,
			// where every argument is required and optional ones
			// nullable, says "not given".
			drop(k)
			return
		}
		if nv, changed := c.value(ps, val, join(path, k)); changed {
			set(k, nv)
		}
	}
	if !c.walkAll && len(m) > 4*len(s.Properties)+64 {
		// Many more members than the schema declares (a call may send
		// tens of thousands): the declared ones are looked up, and the
		// others only counted, a key looked up among the declared ones
		// only when it would enter the tally's first few.
		known := 0
		for k, ps := range s.Properties {
			if val, ok := m[k]; ok {
				known++
				check(k, ps, val)
			}
		}
		if reportUnknown && len(m) > known && top && c.sorted != nil {
			// The keys in order: the first undeclared ones are the tally's.
			for k := range c.sorted {
				if _, ok := s.Properties[k]; !ok {
					unknown.keep(k)
					if unknown.full() {
						break
					}
				}
			}
			unknown.n = len(m) - known
		} else if reportUnknown && len(m) > known {
			for k := range m {
				if unknown.full() && k >= unknown.last() {
					continue
				}
				if _, ok := s.Properties[k]; !ok {
					unknown.keep(k)
				}
			}
			unknown.n = len(m) - known
		}
	} else {
		for k, val := range m {
			ps, known := s.Properties[k]
			if !known {
				if reportUnknown {
					unknown.add(k)
				}
				continue
			}
			check(k, ps, val)
		}
	}
	if unknown.n > 0 {
		c.unknown(s, path, unknown, closed)
	}
	return out
}

// keyTally counts keys and keeps the MaxListed+1 smallest, in order.
type keyTally struct {
	n     int
	first []string
}

const tallyKeep = MaxListed + 1

func (t *keyTally) add(k string) {
	t.n++
	t.keep(k)
}

// full reports whether the tally holds as many keys as it keeps.
func (t *keyTally) full() bool { return len(t.first) == tallyKeep }

// last is the greatest key kept (when full, a key not below it is not
// kept).
func (t *keyTally) last() string { return t.first[len(t.first)-1] }

// keep keeps k among the smallest keys, without counting it.
func (t *keyTally) keep(k string) {
	const keep = tallyKeep
	if len(t.first) == keep && k >= t.first[keep-1] {
		return
	}
	i := sort.SearchStrings(t.first, k)
	t.first = append(t.first, "")
	copy(t.first[i+1:], t.first[i:])
	t.first[i] = k
	if len(t.first) > keep {
		t.first = t.first[:keep]
	}
}

// MaxListed is the most arguments of one object that validation names
// one by one as unknown (strict) or not documented (lenient); the rest
// are counted in one problem or warning, so that an answer stays small
// whatever the number of keys a call sends.
const MaxListed = 5

// unknown reports the keys of an object its schema does not declare: in
// strict mode (closed) a problem for each of the first MaxListed (in
// byte order), with a suggestion, and one for the rest; in lenient mode
// one warning naming the first MaxListed and counting the rest.
func (c *checker) unknown(s *toolenv.Schema, path string, keys keyTally, closed bool) {
	listed := keys.first // and the first one not listed
	first := ""
	if len(listed) > MaxListed {
		listed, first = listed[:MaxListed], listed[MaxListed]
	}
	rest := keys.n - len(listed)
	if !closed {
		if keys.n == 1 {
			c.warnings = append(c.warnings, fmt.Sprintf("argument `%s` is not documented (passed on as given)", join(path, listed[0])))
			return
		}
		names := make([]string, len(listed))
		for i, k := range listed {
			names[i] = "`" + join(path, k) + "`"
		}
		msg := fmt.Sprintf("%d arguments are not documented (passed on as given): %s", keys.n, strings.Join(names, ", "))
		if rest > 0 {
			msg += fmt.Sprintf(" and %d more", rest)
		}
		c.warnings = append(c.warnings, msg)
		return
	}
	names := s.Names()
	all := strings.Join(names, ", ")
	for _, k := range listed {
		msg := fmt.Sprintf("unknown argument `%s`", join(path, k))
		expected := all
		if sug := Suggest(k, names); sug != "" {
			msg += fmt.Sprintf("; did you mean `%s`?", sug)
			expected = sug
		}
		c.fail(join(path, k), CodeUnknownParam, expected, "%s", msg)
	}
	if rest > 0 {
		takes := "the tool's arguments are: " + all
		switch {
		case path != "" && len(names) == 0:
			takes = "`" + path + "` takes no members"
		case path != "":
			takes = "`" + path + "`'s members are: " + all
		case len(names) == 0:
			takes = "the tool takes no arguments"
		}
		c.fail(join(path, first), CodeUnknownParam, all,
			"%d more unknown arguments, not listed one by one (from `%s` on); %s", rest, join(path, first), takes)
	}
}

// admitsNull reports whether null is a value s takes: a nullable or
// untyped schema, type null, or null among its enum values or its
// alternatives.
func admitsNull(s *toolenv.Schema) bool {
	if s == nil || s.Nullable || s.Type == "" && len(s.Enum) == 0 && len(s.AnyOf)+len(s.OneOf) == 0 || s.Type == "null" {
		return true
	}
	for _, v := range s.Enum {
		if v == nil {
			return true
		}
	}
	for _, alt := range append(append([]*toolenv.Schema(nil), s.AnyOf...), s.OneOf...) {
		if admitsNull(alt) {
			return true
		}
	}
	return false
}

func allowsAdditional(s *toolenv.Schema) bool {
	ap := strings.TrimSpace(string(s.AdditionalProperties))
	if ap == "" {
		// A schema with no properties at all says nothing about its
		// arguments; one with properties is closed unless it says so.
		return len(s.Properties) == 0
	}
	return ap != "false"
}

// value checks one value; it returns the coerced value and whether it
// changed.
func (c *checker) value(s *toolenv.Schema, val any, path string) (any, bool) {
	if s == nil {
		return val, false
	}
	if val == nil {
		if s.Nullable || s.Type == "" || s.Type == "null" || c.lenient {
			return nil, false
		}
		c.fail(path, CodeWrongType, describeType(s), "argument `%s` is null; expected %s", path, describeType(s))
		return val, false
	}
	var changed bool
	switch s.Type {
	case "string":
		switch x := val.(type) {
		case string:
		case json.Number, float64, int, int64, bool:
			if c.lenient {
				val, changed = scalarString(x), true
			} else {
				c.fail(path, CodeWrongType, "string", "argument `%s` must be a string, got %s %s", path, kind(val), short(val))
				return val, false
			}
		default:
			c.softFail(path, CodeWrongType, "string", "argument `%s` must be a string, got %s", path, kind(val))
			return val, false
		}
	case "integer", "number":
		n, ok := toNumber(val)
		if !ok {
			if str, isStr := val.(string); isStr && c.lenient {
				if nn, err := parseNumber(strings.TrimSpace(str)); err == nil {
					n, ok, val, changed = nn, true, nn, true
				}
			}
		}
		if !ok {
			c.softFail(path, CodeWrongType, s.Type, "argument `%s` must be %s, got %s %s", path, article(s.Type), kind(val), short(val))
			return val, false
		}
		if s.Type == "integer" && !isInteger(n) {
			c.softFail(path, CodeWrongType, "integer", "argument `%s` must be an integer, got %s", path, n)
			return val, changed
		}
		// A number beyond float64 reads as ±Inf with ErrRange, which still
		// compares right with the bounds.
		if f, err := n.Float64(); err == nil || errors.Is(err, strconv.ErrRange) {
			if s.Minimum != nil && f < *s.Minimum {
				c.softFail(path, CodeOutOfRange, fmt.Sprintf(">= %v", *s.Minimum), "argument `%s` is %s, below the minimum %v", path, n, *s.Minimum)
			}
			if s.Maximum != nil && f > *s.Maximum {
				c.softFail(path, CodeOutOfRange, fmt.Sprintf("<= %v", *s.Maximum), "argument `%s` is %s, above the maximum %v", path, n, *s.Maximum)
			}
			// Keywords the Schema type keeps in Extra (2020-12 forms).
			if lo, ok := extraNumber(s, "exclusiveMinimum"); ok && f <= lo {
				c.softFail(path, CodeOutOfRange, fmt.Sprintf("> %v", lo), "argument `%s` is %s; it must be greater than %v", path, n, lo)
			}
			if hi, ok := extraNumber(s, "exclusiveMaximum"); ok && f >= hi {
				c.softFail(path, CodeOutOfRange, fmt.Sprintf("< %v", hi), "argument `%s` is %s; it must be less than %v", path, n, hi)
			}
			if m, ok := extraNumber(s, "multipleOf"); ok && m > 0 && !multipleOf(n, m) {
				c.softFail(path, CodeOutOfRange, fmt.Sprintf("a multiple of %v", m), "argument `%s` is %s, not a multiple of %v", path, n, m)
			}
		}
	case "boolean":
		switch x := val.(type) {
		case bool:
		case string:
			b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(x)))
			if err != nil || !c.lenient {
				c.softFail(path, CodeWrongType, "boolean", "argument `%s` must be true or false, got %s", path, short(val))
				return val, false
			}
			val, changed = b, true
		default:
			c.softFail(path, CodeWrongType, "boolean", "argument `%s` must be true or false, got %s %s", path, kind(val), short(val))
			return val, false
		}
	case "object":
		m, ok := val.(map[string]any)
		if !ok {
			if str, isStr := val.(string); isStr && c.lenient {
				var mm map[string]any
				if toolenv.DecodeJSON([]byte(str), &mm) == nil {
					m, ok, val, changed = mm, true, mm, true
				}
			}
		}
		if !ok {
			c.softFail(path, CodeWrongType, "object", "argument `%s` must be an object, got %s", path, kind(val))
			return val, false
		}
		if nm := c.object(s, m, path, false); nm != nil {
			val, changed = nm, true
		}
	case "array":
		a, ok := val.([]any)
		if !ok {
			if c.lenient {
				// A single value or a comma-separated string for an array
				// is how loose docs are often called; pass on unchanged.
				c.warnings = append(c.warnings, fmt.Sprintf("argument `%s` should be an array, got %s (passed on as given)", path, kind(val)))
				return val, false
			}
			c.fail(path, CodeWrongType, "array", "argument `%s` must be an array, got %s", path, kind(val))
			return val, false
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			c.softFail(path, CodeOutOfRange, fmt.Sprintf("at least %d items", *s.MinItems), "argument `%s` has %d items, fewer than %d", path, len(a), *s.MinItems)
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			c.softFail(path, CodeOutOfRange, fmt.Sprintf("at most %d items", *s.MaxItems), "argument `%s` has %d items, more than %d", path, len(a), *s.MaxItems)
		}
		var na []any
		for i, e := range a {
			if ne, ch := c.value(s.Items, e, fmt.Sprintf("%s[%d]", path, i)); ch {
				if na == nil {
					na = append([]any(nil), a...)
				}
				na[i] = ne
			}
		}
		if na != nil {
			val, changed = na, true
		}
	}
	if len(s.Enum) > 0 && !inEnum(val, s.Enum) {
		if alt, ok := enumFold(val, s.Enum); ok && c.lenient {
			val, changed = alt, true
		} else {
			c.softFail(path, CodeNotInEnum, enumList(s.Enum), "argument `%s` is %s; expected one of %s", path, short(val), enumList(s.Enum))
		}
	}
	if str, ok := val.(string); ok {
		if s.MinLength != nil && len([]rune(str)) < *s.MinLength {
			c.softFail(path, CodeOutOfRange, fmt.Sprintf("at least %d characters", *s.MinLength), "argument `%s` is shorter than %d characters", path, *s.MinLength)
		}
		if s.MaxLength != nil && len([]rune(str)) > *s.MaxLength {
			c.softFail(path, CodeOutOfRange, fmt.Sprintf("at most %d characters", *s.MaxLength), "argument `%s` is longer than %d characters", path, *s.MaxLength)
		}
		if want, ok := formatOK(s.Format, str); !ok {
			c.softFail(path, CodeBadFormat, want, "argument `%s` is %s; expected %s", path, short(str), want)
		}
		if s.Pattern != "" {
			if re := c.v.pattern(s.Pattern); re != nil && !re.MatchString(str) {
				c.softFail(path, CodeBadFormat, "pattern "+s.Pattern, "argument `%s` does not match the pattern %s", path, s.Pattern)
			}
		}
	}
	return val, changed
}

// formatOK checks a string against the formats that bound what a value
// means (JSON Schema's date, date-time and time): a date bound like
// min_date compares as text in SQL, so "'" or "2019" would silently
// match every row or none. It says what the format wants when str is
// not one. Other formats (email, uri, ...) are descriptions only.
func formatOK(format, str string) (want string, ok bool) {
	switch format {
	case "date":
		_, err := time.Parse(time.DateOnly, str)
		return "a date YYYY-MM-DD (format date)", err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, str)
		return "a date and time like 2006-01-02T15:04:05Z (format date-time, RFC 3339)", err == nil
	case "time":
		_, err := time.Parse("15:04:05Z07:00", str)
		if err != nil {
			_, err = time.Parse("15:04:05.999999999Z07:00", str)
		}
		return "a time like 15:04:05Z (format time, RFC 3339)", err == nil
	}
	return "", true
}

func (v *Validator) pattern(p string) *regexp.Regexp {
	if re, ok := v.patterns.Load(p); ok {
		r, _ := re.(*regexp.Regexp)
		return r
	}
	re, err := regexp.Compile(p)
	if err != nil {
		v.patterns.Store(p, (*regexp.Regexp)(nil))
		return nil
	}
	v.patterns.Store(p, re)
	return re
}

// extraNumber reads a numeric keyword the Schema keeps in Extra. OpenAPI
// 3.0's boolean exclusiveMinimum/exclusiveMaximum are not numbers and are
// ignored here (its importer turns them into the 2020-12 form).
func extraNumber(s *toolenv.Schema, key string) (float64, bool) {
	raw, ok := s.Extra[key]
	if !ok {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false
	}
	return f, true
}

// multipleOf reports whether n is an integer multiple of m, exactly for
// decimal literals (0.3 is a multiple of 0.1).
func multipleOf(n json.Number, m float64) bool {
	x, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
	if err != nil {
		return true // not a finite number: other checks report it
	}
	d, _, err := big.ParseFloat(strconv.FormatFloat(m, 'g', -1, 64), 10, 512, big.ToNearestEven)
	if err != nil || d.Sign() == 0 {
		return true
	}
	q := new(big.Float).SetPrec(512).Quo(x, d)
	r, acc := q.Int(nil)
	if acc == big.Exact {
		return true
	}
	// Decimal fractions are not exact in binary: accept a quotient within
	// a hair of an integer.
	diff := new(big.Float).Sub(q, new(big.Float).SetInt(r))
	diff.Abs(diff)
	if diff.Cmp(big.NewFloat(0.5)) > 0 {
		diff.Sub(big.NewFloat(1), diff)
	}
	return diff.Cmp(big.NewFloat(1e-9)) < 0
}

func toNumber(v any) (json.Number, bool) {
	switch x := v.(type) {
	case json.Number:
		return x, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), true
	case float32:
		return json.Number(strconv.FormatFloat(float64(x), 'g', -1, 32)), true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	}
	return "", false
}

// parseNumber accepts a JSON number literal (and a leading '+'). A
// string with leading zeros ("007", a zip code, an id) is not one: as a
// number it would lose its zeros.
func parseNumber(s string) (json.Number, error) {
	s = strings.TrimPrefix(s, "+")
	if !toolenv.IsJSONNumber(s) {
		return "", fmt.Errorf("%q is not a JSON number", s)
	}
	return json.Number(s), nil
}

func isInteger(n json.Number) bool {
	c, err := toolenv.CanonicalNumber(string(n))
	if err != nil {
		return false
	}
	if !strings.ContainsAny(c, ".e") {
		return true
	}
	// 1e+22 is an integer too.
	f, _, err := big.ParseFloat(c, 10, 256, big.ToNearestEven)
	return err == nil && f.IsInt()
}

func scalarString(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func inEnum(v any, enum []any) bool {
	cv, err := toolenv.Canonical(v)
	if err != nil {
		return false
	}
	for _, e := range enum {
		ce, err := toolenv.Canonical(e)
		if err == nil && string(ce) == string(cv) {
			return true
		}
	}
	return false
}

// enumFold finds an enum value equal to v ignoring case.
func enumFold(v any, enum []any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	for _, e := range enum {
		if es, ok := e.(string); ok && strings.EqualFold(es, s) {
			return es, true
		}
	}
	return nil, false
}

func enumList(enum []any) string {
	parts := make([]string, 0, len(enum))
	for i, e := range enum {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("… (%d in all)", len(enum)))
			break
		}
		parts = append(parts, short(e))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

func short(v any) string {
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shorten(string(b), 60)
}

func article(t string) string {
	if t == "integer" {
		return "an integer"
	}
	return "a " + t
}

func describeType(s *toolenv.Schema) string {
	if s == nil || s.Type == "" {
		return "any value"
	}
	if len(s.Enum) > 0 {
		return s.Type + " in " + enumList(s.Enum)
	}
	return s.Type
}

func typeSuffix(s *toolenv.Schema) string {
	if s == nil || s.Type == "" {
		return ""
	}
	return " (" + describeType(s) + ")"
}
