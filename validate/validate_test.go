package validate

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

func schema(t *testing.T, js string) *toolenv.Schema {
	t.Helper()
	var s toolenv.Schema
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func args(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const weather = `{"type":"object","properties":{
 "city":{"type":"string","description":"City name"},
 "days":{"type":"integer","minimum":1,"maximum":14},
 "units":{"type":"string","enum":["metric","imperial"]},
 "alerts":{"type":"boolean"},
 "tags":{"type":"array","items":{"type":"string"}},
 "at":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}},"required":["lat","lon"]}
},"required":["city"]}`

func TestArgs(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		lenient   bool
		wantCodes []string // problem codes, in order
		wantArgs  string   // canonical args after coercion, if checked
		wantWarn  bool
	}{
		{"valid strict", `{"city":"Paris","days":3,"units":"metric","alerts":true,"tags":["a"],"at":{"lat":1.5,"lon":2}}`, false, nil, "", false},
		{"integer-valued float is an integer", `{"city":"Paris","days":3.0}`, false, nil, "", false},
		{"missing required", `{"days":3}`, false, []string{CodeMissingRequired}, "", false},
		{"missing required lenient too", `{"days":"3"}`, true, []string{CodeMissingRequired}, "", false},
		{"unknown param strict with suggestion", `{"city":"Paris","Days":3}`, false, []string{CodeUnknownParam}, "", false},
		{"unknown param lenient passes", `{"city":"Paris","foo":1}`, true, nil, `{"city":"Paris","foo":1}`, true},
		{"wrong types strict", `{"city":5,"days":"3","alerts":"yes"}`, false, []string{CodeWrongType, CodeWrongType, CodeWrongType}, "", false},
		{"coercion lenient", `{"city":5,"days":"3","alerts":"true","units":"METRIC"}`, true, nil, `{"alerts":true,"city":"5","days":3,"units":"metric"}`, false},
		{"uncoercible lenient passes with warning", `{"city":"x","days":"three"}`, true, nil, `{"city":"x","days":"three"}`, true},
		{"range and enum strict", `{"city":"x","days":30,"units":"kelvin"}`, false, []string{CodeOutOfRange, CodeNotInEnum}, "", false},
		{"fraction for integer strict", `{"city":"x","days":2.5}`, false, []string{CodeWrongType}, "", false},
		{"nested object", `{"city":"x","at":{"lat":"north"}}`, false, []string{CodeWrongType, CodeMissingRequired}, "", false}, // sorted by param: at.lat, at.lon
		{"array items", `{"city":"x","tags":["a",3]}`, false, []string{CodeWrongType}, "", false},
		{"null for required strict", `{"city":null}`, false, []string{CodeMissingRequired}, "", false},
		{"a number beyond float64 is still above the maximum", `{"city":"x","days":1e400}`, false, []string{CodeOutOfRange}, "", false},
		{"and one below it under the minimum", `{"city":"x","days":-1e400}`, false, []string{CodeOutOfRange}, "", false},
		{"leading zeros are not coerced: the zeros would be lost", `{"city":"x","days":"007"}`, true, nil, `{"city":"x","days":"007"}`, true},
		{"a leading plus is", `{"city":"x","days":"+7"}`, true, nil, `{"city":"x","days":7}`, false},
	}
	var v Validator
	s := schema(t, weather)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := args(t, tt.in)
			before, _ := toolenv.Canonical(in)
			out := v.Args(s, in, tt.lenient)
			var codes []string
			for _, p := range out.Problems {
				codes = append(codes, p.Code)
				if p.Message == "" || p.Param == "" {
					t.Errorf("problem without message or param: %+v", p)
				}
			}
			if strings.Join(codes, ",") != strings.Join(tt.wantCodes, ",") {
				t.Fatalf("codes = %v, want %v (%+v)", codes, tt.wantCodes, out.Problems)
			}
			if tt.wantArgs != "" {
				got, _ := toolenv.Canonical(out.Args)
				if string(got) != tt.wantArgs {
					t.Fatalf("args = %s, want %s", got, tt.wantArgs)
				}
			}
			if (len(out.Warnings) > 0) != tt.wantWarn {
				t.Fatalf("warnings = %v", out.Warnings)
			}
			if _, err := json.Marshal(out.Args); err != nil {
				t.Fatalf("coerced args are not JSON encoding/json can write: %v", err)
			}
			after, _ := toolenv.Canonical(in)
			if string(before) != string(after) {
				t.Fatalf("caller's args were modified: %s -> %s", before, after)
			}
		})
	}
}

func TestExclusiveBoundsAndMultipleOf(t *testing.T) {
	s := schema(t, `{"type":"object","properties":{
	 "p":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
	 "step":{"type":"number","multipleOf":0.1},
	 "even":{"type":"integer","multipleOf":2}}}`)
	var v Validator
	tests := []struct {
		args string
		want []string
	}{
		{`{"p":0.5,"step":0.3,"even":4}`, nil},
		{`{"p":0}`, []string{CodeOutOfRange}},
		{`{"p":1}`, []string{CodeOutOfRange}},
		{`{"step":0.25}`, []string{CodeOutOfRange}},
		{`{"even":3}`, []string{CodeOutOfRange}},
		{`{"even":1e30}`, nil},
	}
	for _, tt := range tests {
		out := v.Args(s, args(t, tt.args), false)
		var codes []string
		for _, p := range out.Problems {
			codes = append(codes, p.Code)
		}
		if strings.Join(codes, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: problems %+v, want %v", tt.args, out.Problems, tt.want)
		}
	}
}

func TestSuggestAndFeedback(t *testing.T) {
	if got := Suggest("Days", []string{"city", "days"}); got != "days" {
		t.Errorf("Suggest = %q", got)
	}
	if got := Suggest("dayz", []string{"city", "days"}); got != "days" {
		t.Errorf("Suggest = %q", got)
	}
	if got := Suggest("zzzzzz", []string{"city", "days"}); got != "" {
		t.Errorf("Suggest = %q", got)
	}
	tool := &toolenv.Tool{Name: "get_weather", Input: schema(t, weather)}
	var v Validator
	out := v.Args(tool.Input, args(t, `{"town":"Paris"}`), false)
	msg, hint := Feedback(toolenv.FeedbackNone, tool, out.Problems)
	if msg != "invalid arguments" || hint != "" {
		t.Errorf("none: %q %q", msg, hint)
	}
	msg, hint = Feedback(toolenv.FeedbackTerse, tool, out.Problems)
	if !strings.Contains(msg, "missing required argument `city`") || !strings.Contains(msg, "unknown argument `town`") || hint != "" {
		t.Errorf("terse: %q %q", msg, hint)
	}
	_, hint = Feedback(toolenv.FeedbackHelpful, tool, out.Problems)
	if !strings.Contains(hint, "city (string, required): City name") || !strings.Contains(hint, "units (string in [\"metric\", \"imperial\"])") {
		t.Errorf("helpful hint: %q", hint)
	}
}

func FuzzArgs(f *testing.F) {
	f.Add(`{"city":"Paris","days":"3"}`, true)
	f.Add(`{"at":{"lat":[1]},"tags":"x"}`, false)
	var v Validator
	var s toolenv.Schema
	if err := json.Unmarshal([]byte(weather), &s); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string, lenient bool) {
		var m map[string]any
		if toolenv.DecodeJSON([]byte(in), &m) != nil {
			return
		}
		out := v.Args(&s, m, lenient)
		if _, err := toolenv.Canonical(out.Args); err != nil {
			t.Fatalf("coerced args are not JSON: %v", err)
		}
		if _, err := json.Marshal(out.Args); err != nil {
			t.Fatalf("coerced args are not JSON encoding/json can write: %v", err)
		}
		if len(out.Problems) == 0 {
			// Valid output must stay valid: checking it again finds nothing.
			if again := v.Args(&s, out.Args, lenient); len(again.Problems) > 0 {
				t.Fatalf("coerced args fail a second check: %+v", again.Problems)
			}
		}
	})
}

// TestLongTextIsCutOnCharacterBoundaries checks that shortened
// descriptions and values in messages stay valid UTF-8 (ToolBench docs
// are full of accents and CJK), so no U+FFFD reaches the client.
func TestLongTextIsCutOnCharacterBoundaries(t *testing.T) {
	for _, text := range []string{strings.Repeat("é", 100), "x" + strings.Repeat("日本", 50), strings.Repeat("a", 200)} {
		t.Run(text[:4], func(t *testing.T) {
			in := toolenv.ObjectSchema()
			in.SetProp("q", &toolenv.Schema{Type: "string", Description: text, Enum: []any{"a"}})
			tool := &toolenv.Tool{Name: "f", Input: in}
			var v Validator
			out := v.Args(in, map[string]any{"q": text}, false)
			msg, hint := Feedback(toolenv.FeedbackHelpful, tool, out.Problems)
			for what, s := range map[string]string{"message": msg, "hint": hint} {
				if !utf8.ValidString(s) {
					t.Errorf("%s is not valid UTF-8: %q", what, s)
				}
				if !strings.Contains(s, "…") {
					t.Errorf("%s was not shortened: %q", what, s)
				}
			}
		})
	}
}

// TestDateFormats: a strict collection refuses a date bound that is not a
// date (min_date="'" would compare as text and match every row); a
// lenient one passes it on with a warning; other formats are not checked.
func TestDateFormats(t *testing.T) {
	s := toolenv.ObjectSchema()
	s.SetProp("min_date", &toolenv.Schema{Type: "string", Format: "date"})
	s.SetProp("at", &toolenv.Schema{Type: "string", Format: "date-time"})
	s.SetProp("clock", &toolenv.Schema{Type: "string", Format: "time"})
	s.SetProp("mail", &toolenv.Schema{Type: "string", Format: "email"})
	var v Validator
	for _, c := range []struct {
		param, value string
		ok           bool
	}{
		{"min_date", "2019-10-08", true},
		{"min_date", "'", false},
		{"min_date", "", false},
		{"min_date", "2019", false},
		{"min_date", "2019-02-30", false},
		{"min_date", "2019-10-08' OR '1'='1", false},
		{"min_date", "2019-10-08T00:00:00Z", false},
		{"at", "2019-10-08T10:20:30Z", true},
		{"at", "2019-10-08T10:20:30.5+02:00", true},
		{"at", "2019-10-08 10:20:30", false},
		{"clock", "10:20:30Z", true},
		{"clock", "25:00:00Z", false},
		{"mail", "not an address", true},
	} {
		in := map[string]any{c.param: c.value}
		strict := v.Args(s, in, false)
		if got := len(strict.Problems) == 0; got != c.ok {
			t.Errorf("strict %s=%q: problems %+v, want ok=%v", c.param, c.value, strict.Problems, c.ok)
		}
		if !c.ok && (strict.Problems[0].Code != CodeBadFormat || !strings.Contains(strict.Problems[0].Message, c.param)) {
			t.Errorf("strict %s=%q: %+v", c.param, c.value, strict.Problems[0])
		}
		lenient := v.Args(s, in, true)
		if len(lenient.Problems) != 0 || (len(lenient.Warnings) == 0) == !c.ok {
			t.Errorf("lenient %s=%q: problems %+v warnings %v", c.param, c.value, lenient.Problems, lenient.Warnings)
		}
	}
}

// TestManyUnknownArgumentsAreCounted: whatever the number of keys a
// schema does not declare, lenient validation gives one warning per
// object (the count and the first MaxListed names in byte order) and
// strict validation MaxListed problems plus one counting the rest.
func TestManyUnknownArgumentsAreCounted(t *testing.T) {
	s := schema(t, weather)
	var v Validator
	for _, n := range []int{1, 2, MaxListed, MaxListed + 1, 1000} {
		m := map[string]any{"city": "Paris", "at": map[string]any{"lat": 1, "lon": 2}}
		nested := m["at"].(map[string]any)
		for i := n - 1; i >= 0; i-- {
			k := "x" + strings.Repeat("0", 4-len(strconv.Itoa(i))) + strconv.Itoa(i)
			m[k] = i
			nested[k] = i
		}
		out := v.Args(s, m, true)
		if len(out.Problems) != 0 || len(out.Warnings) != 2 {
			t.Fatalf("lenient, %d keys: %d problems, warnings %q", n, len(out.Problems), out.Warnings)
		}
		for i, prefix := range []string{"at.", ""} {
			w := out.Warnings[i]
			switch {
			case n == 1:
				if w != "argument `"+prefix+"x0000` is not documented (passed on as given)" {
					t.Fatalf("one key: %q", w)
				}
			default:
				want := strconv.Itoa(n) + " arguments are not documented (passed on as given): `" + prefix + "x0000`, `" + prefix + "x0001`"
				if !strings.HasPrefix(w, want) || strings.Count(w, "`") != 2*min(n, MaxListed) {
					t.Fatalf("%d keys: %q", n, w)
				}
				if n > MaxListed && !strings.HasSuffix(w, " and "+strconv.Itoa(n-MaxListed)+" more") {
					t.Fatalf("%d keys: %q does not count the rest", n, w)
				}
			}
		}
		out = v.Args(s, m, false)
		wantProblems := 2 * min(n, MaxListed)
		if n > MaxListed {
			wantProblems += 2
		}
		if len(out.Problems) != wantProblems {
			t.Fatalf("strict, %d keys: %d problems, want %d: %+v", n, len(out.Problems), wantProblems, out.Problems)
		}
		if n > MaxListed {
			last := out.Problems[len(out.Problems)-1]
			if last.Code != CodeUnknownParam || !strings.Contains(last.Message, strconv.Itoa(n-MaxListed)+" more unknown arguments") {
				t.Fatalf("strict, %d keys: last problem %+v", n, last)
			}
		}
	}
}

// TestManyUnknownNamesWhatIsTaken: the problem that counts the unknown
// keys past MaxListed ends by naming what the object takes, its members
// or that it takes none, at the top and nested, never an empty list.
func TestManyUnknownNamesWhatIsTaken(t *testing.T) {
	some := toolenv.ObjectSchema()
	some.SetProp("q", &toolenv.Schema{Type: "string"})
	some.SetProp("limit", &toolenv.Schema{Type: "integer"})
	none := toolenv.ObjectSchema()
	none.AdditionalProperties = json.RawMessage("false")
	many := map[string]any{}
	for i := range MaxListed + 3 {
		many["x"+strconv.Itoa(i)] = 1
	}
	nest := func(inner *toolenv.Schema) *toolenv.Schema {
		s := toolenv.ObjectSchema()
		s.SetProp("at", inner)
		return s
	}
	var v Validator
	for _, tc := range []struct {
		name   string
		s      *toolenv.Schema
		args   map[string]any
		suffix string
	}{
		{"top, some", some, many, "; the tool's arguments are: q, limit"},
		{"top, none", none, many, "; the tool takes no arguments"},
		{"nested, some", nest(some), map[string]any{"at": many}, "; `at`'s members are: q, limit"},
		{"nested, none", nest(none), map[string]any{"at": many}, "; `at` takes no members"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := v.Args(tc.s, tc.args, false)
			if len(out.Problems) == 0 {
				t.Fatal("no problems")
			}
			last := out.Problems[len(out.Problems)-1].Message
			if !strings.Contains(last, "3 more unknown arguments") || !strings.HasSuffix(last, tc.suffix) {
				t.Fatalf("last problem %q, want it to count 3 more and end with %q", last, tc.suffix)
			}
		})
	}
}

// TestNullForOptionalIsAbsent: an explicit null for an optional argument
// that takes no null is the argument left out (OpenAI strict mode sends
// optional arguments as null), at every level; a nullable argument keeps
// its null, and a required one is still missing.
func TestNullForOptionalIsAbsent(t *testing.T) {
	inner := toolenv.ObjectSchema()
	inner.SetProp("a", &toolenv.Schema{Type: "string"})
	inner.SetProp("b", &toolenv.Schema{Type: "integer"})
	inner.Required = []string{"a"}
	s := toolenv.ObjectSchema()
	s.SetProp("q", &toolenv.Schema{Type: "string"})
	s.SetProp("unit", &toolenv.Schema{Type: "string", Enum: []any{"c", "f"}})
	s.SetProp("note", &toolenv.Schema{Type: "string", Nullable: true})
	s.SetProp("r", &toolenv.Schema{Type: "integer"})
	s.SetProp("o", inner)
	s.Required = []string{"r"}
	var v Validator
	for _, lenient := range []bool{false, true} {
		out := v.Args(s, map[string]any{"q": nil, "unit": nil, "note": nil, "r": json.Number("1"), "o": map[string]any{"a": "x", "b": nil}}, lenient)
		if len(out.Problems) > 0 {
			t.Fatalf("lenient=%v: %v", lenient, out.Problems)
		}
		got, _ := json.Marshal(out.Args)
		if string(got) != `{"note":null,"o":{"a":"x"},"r":1}` {
			t.Errorf("lenient=%v: args %s", lenient, got)
		}
	}
	out := v.Args(s, map[string]any{"r": nil}, false)
	if len(out.Problems) != 1 || out.Problems[0].Code != CodeMissingRequired {
		t.Errorf("a required null: %v", out.Problems)
	}
	orig := map[string]any{"q": nil, "r": json.Number("1")}
	v.Args(s, orig, false)
	if _, ok := orig["q"]; !ok {
		t.Error("the caller's map was changed")
	}
}

// TestManyMembersShortcutAgrees: over generated schemas and calls of
// many members (declared ones valid, wrong, null or missing; undeclared
// ones named below, between and above the declared names), validation
// that looks up only the declared members and counts the others gives
// exactly what visiting every member one by one gives: the same
// problems, warnings and arguments, lenient and strict.
func TestManyMembersShortcutAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	var v Validator
	names := []string{"a", "city", "k5", "limit", "q", "zz", "x0001", ""}
	types := []string{"string", "integer", "number", "boolean", "object", "array", ""}
	for i := range 300 {
		s := toolenv.ObjectSchema()
		for _, n := range names {
			if r.IntN(2) == 0 {
				continue
			}
			s.SetProp(n, &toolenv.Schema{Type: types[r.IntN(len(types))], Nullable: r.IntN(4) == 0})
			if r.IntN(3) == 0 {
				s.Required = append(s.Required, n)
			}
		}
		switch r.IntN(4) {
		case 0:
			s.AdditionalProperties = json.RawMessage(`false`)
		case 1:
			s.AdditionalProperties = json.RawMessage(`true`)
		}
		m := map[string]any{}
		for _, n := range names {
			switch r.IntN(5) {
			case 0:
				m[n] = nil
			case 1:
				m[n] = "text"
			case 2:
				m[n] = json.Number(strconv.Itoa(r.IntN(100)))
			case 3:
				m[n] = map[string]any{"b": true}
			}
		}
		extra := []int{0, 1, MaxListed, 40, 200, 1000}[r.IntN(6)]
		for j := range extra {
			k := []string{"k", "A", "x", "", "~"}[r.IntN(5)] + strconv.Itoa(r.IntN(10*extra+1)) + strconv.Itoa(j%3)
			m[k] = json.Number(strconv.Itoa(j))
		}
		for _, lenient := range []bool{true, false} {
			want := v.args(s, m, lenient, true, nil)
			got := v.args(s, m, lenient, false, nil)
			if !reflect.DeepEqual(got.Problems, want.Problems) || !reflect.DeepEqual(got.Warnings, want.Warnings) || !reflect.DeepEqual(got.Args, want.Args) {
				t.Fatalf("case %d, lenient %v, %d members:\n got %+v %q\nwant %+v %q", i, lenient, len(m), got.Problems, got.Warnings, want.Problems, want.Warnings)
			}
			// Given the keys in order (as toolenv.Call.SortedKeys gives
			// them), the first undeclared ones are read off them: the
			// same outcome again.
			got = v.ArgsSorted(s, m, slices.Values(slices.Sorted(maps.Keys(m))), lenient)
			if !reflect.DeepEqual(got.Problems, want.Problems) || !reflect.DeepEqual(got.Warnings, want.Warnings) || !reflect.DeepEqual(got.Args, want.Args) {
				t.Fatalf("case %d, lenient %v, %d members, keys sorted:\n got %+v %q\nwant %+v %q", i, lenient, len(m), got.Problems, got.Warnings, want.Problems, want.Warnings)
			}
		}
	}
}
