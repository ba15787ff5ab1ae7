package sqltools

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Limits on argument values.
const (
	maxValueLen  = 10000 // characters of a string value
	maxListItems = 1000  // items of an in/not_in list
	maxLabelLen  = 64
)

var labelRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// refRE matches a "$label$" reference.
var refRE = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)\$$`)

// args decodes one call's arguments and collects what is wrong with them.
type args struct {
	m        map[string]any
	used     map[string]bool
	problems []toolenv.Problem
	// notFound is set when a referenced label does not exist: the call
	// then fails with not_found rather than invalid_arguments.
	notFound error
}

func newArgs(m map[string]any) *args { return &args{m: m, used: map[string]bool{}} }

func (a *args) fail(param, code, expected, format string, v ...any) {
	a.problems = append(a.problems, toolenv.Problem{Param: param, Code: code, Expected: expected, Message: fmt.Sprintf(format, v...)})
}

func (a *args) has(name string) bool {
	v, ok := a.m[name]
	return ok && v != nil
}

func (a *args) raw(name string) (any, bool) {
	a.used[name] = true
	v, ok := a.m[name]
	return v, ok && v != nil
}

// str returns a string argument; required ones must be present and
// non-empty.
func (a *args) str(name string, required bool) string {
	v, ok := a.raw(name)
	if !ok {
		if required {
			a.fail(name, "missing_required", "string", "missing required argument `%s`", name)
		}
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		a.fail(name, "wrong_type", "string", "argument `%s` must be a string, got %s", name, describe(v))
		return ""
	}
	if required && s == "" {
		a.fail(name, "missing_required", "a non-empty string", "argument `%s` is empty", name)
	}
	return s
}

// boolean returns a boolean argument (def when absent).
func (a *args) boolean(name string, def bool) bool {
	v, ok := a.raw(name)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(strings.ToLower(x)); err == nil {
			return b
		}
	}
	a.fail(name, "wrong_type", "boolean", "argument `%s` must be true or false, got %s", name, describe(v))
	return def
}

// integer returns an integer argument (def when absent).
func (a *args) integer(name string, def int64) int64 {
	v, ok := a.raw(name)
	if !ok {
		return def
	}
	n, ok := toInt(v)
	if !ok {
		a.fail(name, "wrong_type", "integer", "argument `%s` must be an integer, got %s", name, describe(v))
		return def
	}
	return n
}

// required reports a missing argument.
func (a *args) required(name, expected string) (any, bool) {
	v, ok := a.raw(name)
	if !ok {
		a.fail(name, "missing_required", expected, "missing required argument `%s` (%s)", name, expected)
	}
	return v, ok
}

// unknown reports arguments the operation does not take.
func (a *args) unknown(allowed ...string) {
	ok := map[string]bool{}
	for _, n := range allowed {
		ok[n] = true
	}
	var names []string
	for k := range a.m {
		if !ok[k] && !a.used[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		a.fail(k, "unknown_param", strings.Join(allowed, ", "), "unknown argument `%s`; this tool takes %s", k, strings.Join(allowed, ", "))
	}
}

// err returns the collected problems as an invalid_arguments error.
func (a *args) err(tool string) error {
	if len(a.problems) == 0 {
		return nil
	}
	if a.notFound != nil && len(a.problems) == 1 {
		return a.notFound
	}
	msgs := make([]string, len(a.problems))
	for i, p := range a.problems {
		msgs[i] = p.Message
	}
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: tool + ": " + strings.Join(msgs, "; "), Problems: a.problems,
		Hint: "fix the arguments listed in problems and call again"}
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// scalar converts a JSON value to the value bound to SQLite: int64,
// float64, string or nil. Booleans become 1/0. Arrays and objects fail.
func scalar(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return x, true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return f, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		return x, true
	case int:
		return int64(x), true
	case int64:
		return x, true
	case bool:
		if x {
			return int64(1), true
		}
		return int64(0), true
	}
	return nil, false
}

// coerce converts a bound value to a column's kind where that loses
// nothing: numeric strings to numbers for numeric columns, numbers to
// their text for string columns. SQLite's column affinity does the same
// for stored columns; coercing here makes transformed columns (which have
// no affinity) behave alike.
func coerce(v any, kind string) any {
	switch kind {
	case "integer", "number":
		if s, ok := v.(string); ok {
			t := strings.TrimSpace(s)
			if n, err := strconv.ParseInt(t, 10, 64); err == nil {
				return n
			}
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		}
	case "string":
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10)
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
	}
	return v
}

// refLabel returns the label of a "$label$" reference (or of a bare label
// when bare is set).
func refLabel(v any, bare bool) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	if m := refRE.FindStringSubmatch(s); m != nil {
		return m[1], true
	}
	if bare && labelRE.MatchString(s) {
		return s, true
	}
	return "", false
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "the string " + strconv.Quote(x)
	case json.Number, float64, int, int64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case []any:
		return fmt.Sprintf("a list of %d items", len(x))
	case map[string]any:
		return "an object"
	case toolenv.RawJSON: // an argument kept as text
		if strings.HasPrefix(x.String(), "[") {
			return "a list"
		}
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
