package mapping

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func mustArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := toolenv.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// weatherV2 is a drifted weather tool: city nested under location, days
// renamed and typed as a string, a required unit with a default.
func weatherV2() *toolenv.Tool {
	loc := toolenv.ObjectSchema()
	loc.SetProp("city_name", &toolenv.Schema{Type: "string"})
	loc.SetProp("country", &toolenv.Schema{Type: "string"})
	in := toolenv.ObjectSchema()
	in.SetProp("location", loc)
	in.SetProp("num_days", &toolenv.Schema{Type: "string"})
	in.SetProp("unit", &toolenv.Schema{Type: "string", Default: "metric"})
	in.SetProp("verbose", &toolenv.Schema{Type: "boolean"})
	in.Required = []string{"location", "unit"}
	return &toolenv.Tool{ID: "w2/forecast", Name: "forecast", Input: in}
}

func TestTranslate(t *testing.T) {
	m := &Mapping{From: "w1/get_forecast", To: "w2/forecast", Provenance: Structural, Score: 0.9,
		Inputs: []FieldPair{{From: "city", To: "location.city_name"}, {From: "country", To: "location.country"}, {From: "days", To: "num_days"}}}
	tests := []struct {
		name, args, want string
		notes            []string
		err              bool
	}{
		{name: "flat to nested, int to string, default filled",
			args: `{"city":"Oslo","days":3}`, want: `{"location":{"city_name":"Oslo"},"num_days":"3","unit":"metric"}`,
			notes: []string{"city → location.city_name", "days → num_days", "num_days: 3 → \"3\"", "unit: the default metric"}},
		{name: "both nested fields", args: `{"city":"Oslo","country":"NO"}`, want: `{"location":{"city_name":"Oslo","country":"NO"},"unit":"metric"}`},
		{name: "unknown argument dropped", args: `{"city":"Oslo","lang":"en"}`, want: `{"location":{"city_name":"Oslo"},"unit":"metric"}`,
			notes: []string{"city → location.city_name", "dropped lang: w2/forecast has no counterpart", "unit: the default metric"}},
		{name: "same name kept and coerced", args: `{"city":"Oslo","verbose":"true"}`, want: `{"location":{"city_name":"Oslo"},"unit":"metric","verbose":true}`},
		{name: "required without counterpart", args: `{"days":2}`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Translate(m, mustArgs(t, tt.args), weatherV2())
			if tt.err {
				if !errors.Is(err, ErrUntranslatable) || !strings.Contains(err.Error(), "location") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := canon(t, tr.Args); got != tt.want {
				t.Fatalf("args = %s, want %s", got, tt.want)
			}
			if tt.notes != nil && strings.Join(tr.Notes, "|") != strings.Join(tt.notes, "|") {
				t.Fatalf("notes = %q", tr.Notes)
			}
		})
	}
}

func TestTranslateFixedAndWhen(t *testing.T) {
	slot := &Mapping{From: "sel/select_data_equal_to", To: "slot/filter_data", Provenance: Structural, Score: 1,
		Inputs: []FieldPair{{From: "data_source", To: "data_source"}, {From: "key_name", To: "key_name"}, {From: "value", To: "value"}},
		Fixed:  map[string]any{"condition": "equal_to"}}
	tr, err := Translate(slot, mustArgs(t, `{"data_source":"$t$","key_name":"a","value":1}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := canon(t, tr.Args); got != `{"condition":"equal_to","data_source":"$t$","key_name":"a","value":1}` {
		t.Fatalf("args = %s", got)
	}
	back := slot.Reverse()
	tr, err = Translate(back, mustArgs(t, `{"data_source":"$t$","key_name":"a","value":1,"condition":"equal_to"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := canon(t, tr.Args); got != `{"data_source":"$t$","key_name":"a","value":1}` {
		t.Fatalf("reverse args = %s", got)
	}
	if _, err := Translate(back, mustArgs(t, `{"data_source":"$t$","key_name":"a","condition":"less_than"}`), nil); !errors.Is(err, ErrUntranslatable) {
		t.Fatalf("a call outside When translated: %v", err)
	}
}

func TestTranslateResponse(t *testing.T) {
	m := &Mapping{From: "a/books", To: "b/search", Provenance: Structural, Score: 1,
		Outputs: []FieldPair{{From: "results[].isbn", To: "items[].isbn_13"}, {From: "results[].title", To: "items[].name"}, {From: "total", To: "meta.count"}}}
	body := json.RawMessage(`{"items":[{"isbn_13":"1","name":"A","year":2001},{"isbn_13":"2","name":"B"}],"meta":{"count":2}}`)
	got, changed, err := TranslateResponse(m, body)
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	want := `{"items":[{"year":2001}],"results":[{"isbn":"1","title":"A"},{"isbn":"2","title":"B"}],"total":2}`
	if c := canon(t, mustAny(t, got)); c != want {
		t.Fatalf("got %s\nwant %s", c, want)
	}
	text := json.RawMessage(`"plain text answer"`)
	if got, changed, _ := TranslateResponse(m, text); changed || string(got) != string(text) {
		t.Fatal("text body rewritten")
	}
}

func mustAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := toolenv.DecodeJSON(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCoerce(t *testing.T) {
	tests := []struct {
		in      any
		typ     string
		want    string
		changed bool
	}{
		{"3", "integer", `3`, true},
		{"3.5", "integer", `"3.5"`, false},
		{"3.5", "number", `3.5`, true},
		{json.Number("7"), "string", `"7"`, true},
		{true, "string", `"true"`, true},
		{"FALSE", "boolean", `false`, true},
		{"yes", "boolean", `"yes"`, false},
		{"x", "array", `["x"]`, true},
		{float64(4), "integer", `4`, true},
		{"abc", "integer", `"abc"`, false},
	}
	for _, tt := range tests {
		got, changed := Coerce(tt.in, tt.typ)
		if c := canon(t, got); c != tt.want || changed != tt.changed {
			t.Errorf("Coerce(%#v, %s) = %s, %v; want %s, %v", tt.in, tt.typ, c, changed, tt.want, tt.changed)
		}
	}
}

func TestPaths(t *testing.T) {
	v := mustArgs(t, `{"a":{"b":1,"c":{"d":[1,{"e":2}]}},"f":[],"g":{}}`)
	if got := strings.Join(LeafPaths(v), " "); got != "a.b a.c.d[] a.c.d[].e f g" {
		t.Fatalf("leaf paths = %s", got)
	}
	if x, ok := GetPath(v, "a.b"); !ok || canon(t, x) != "1" {
		t.Fatal("GetPath a.b")
	}
	SetPath(v, "a.c.z", "new")
	DeletePath(v, "a.b")
	DeletePath(v, "g")
	if got := canon(t, v); got != `{"a":{"c":{"d":[1,{"e":2}],"z":"new"}},"f":[]}` {
		t.Fatalf("after set/delete: %s", got)
	}
	if got := canon(t, rebuild(leaves(v, nil))); got != canon(t, v) {
		t.Fatalf("rebuild changed the value: %s", got)
	}
}

func TestSetRoundTripAndAlternatives(t *testing.T) {
	s := &Set{}
	s.Add(
		&Mapping{From: "a/x", To: "b/y", Score: 0.7, Provenance: Structural, Inputs: []FieldPair{{From: "q", To: "query"}}},
		&Mapping{From: "b/y", To: "a/x", Score: 0.6, Provenance: Human, Inputs: []FieldPair{{From: "query", To: "q"}}},
		&Mapping{From: "c/z", To: "a/x", Score: 0.9, Provenance: LLM},
	)
	s.Sort()
	path := filepath.Join(t.TempDir(), "m.json")
	if err := WriteSet(path, s); err != nil {
		t.Fatal(err)
	}
	r, err := ReadSet(path)
	if err != nil {
		t.Fatal(err)
	}
	alts := r.Alternatives("a/x")
	if len(alts) != 2 || alts[0].To != "c/z" || alts[1].To != "b/y" {
		t.Fatalf("alternatives = %+v", alts)
	}
	// The human mapping wins over the structural one of the same pair,
	// oriented from a/x.
	if alts[1].Provenance != Human || alts[1].Inputs[0].From != "q" || alts[1].Inputs[0].To != "query" {
		t.Fatalf("b/y alternative = %+v", alts[1])
	}
	if m := r.Between("b/y", "a/x"); m == nil || m.Provenance != Human {
		t.Fatalf("between = %+v", m)
	}
}

func TestCollectionsOf(t *testing.T) {
	tools := func(colls ...string) []*toolenv.Tool {
		var out []*toolenv.Tool
		for i, c := range colls {
			out = append(out, &toolenv.Tool{ID: fmt.Sprintf("%s/t%d", c, i), Collection: c})
		}
		return out
	}
	tests := []struct {
		name  string
		tools []*toolenv.Tool
		want  []string
	}{
		{"none", nil, nil},
		{"one", tools("bird-sel"), []string{"bird-sel"}},
		{"each once, sorted", tools("sel", "rest", "sel", "", "rest"), []string{"", "rest", "sel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CollectionsOf(tt.tools); fmt.Sprint(got) != fmt.Sprint(tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("CollectionsOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSetValidate(t *testing.T) {
	bad := []*Mapping{
		{From: "a/x", To: "a/x", Provenance: Structural},
		{From: "a/x", To: "b/y", Score: 2, Provenance: Structural},
		{From: "a/x", To: "b/y", Provenance: "guess"},
		{From: "a/x", To: "b/y", Provenance: LLM, Inputs: []FieldPair{{From: "q", To: "a"}, {From: "q", To: "b"}}},
	}
	for i, m := range bad {
		if err := m.Validate(); err == nil {
			t.Errorf("mapping %d accepted: %+v", i, m)
		}
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := toolenv.WriteFileAtomic(path, []byte(`{"version":9,"mappings":[]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSet(path); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkTranslate(b *testing.B) {
	m := &Mapping{From: "w1/get_forecast", To: "w2/forecast", Provenance: Structural, Score: 0.9,
		Inputs: []FieldPair{{From: "city", To: "location.city_name"}, {From: "country", To: "location.country"}, {From: "days", To: "num_days"}}}
	to := weatherV2()
	args := map[string]any{"city": "Oslo", "country": "NO", "days": json.Number("3"), "verbose": "true"}
	for b.Loop() {
		if _, err := Translate(m, args, to); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleTranslate() {
	in := toolenv.ObjectSchema()
	loc := toolenv.ObjectSchema()
	loc.SetProp("city_name", &toolenv.Schema{Type: "string"})
	in.SetProp("location", loc)
	in.SetProp("num_days", &toolenv.Schema{Type: "string"})
	to := &toolenv.Tool{ID: "weather@v2/forecast", Name: "forecast", Input: in}
	m := &Mapping{From: "weather@v1/get_forecast", To: to.ID, Score: 0.9, Provenance: Structural,
		Inputs: []FieldPair{{From: "city", To: "location.city_name"}, {From: "days", To: "num_days"}}}
	tr, _ := Translate(m, map[string]any{"city": "Oslo", "days": json.Number("3")}, to)
	out, _ := toolenv.Canonical(tr.Args)
	fmt.Println(string(out))
	fmt.Println(strings.Join(tr.Notes, "; "))
	// Output:
	// {"location":{"city_name":"Oslo"},"num_days":"3"}
	// city → location.city_name; days → num_days; num_days: 3 → "3"
}

// FuzzTranslate feeds arbitrary arguments and response bodies through a
// mapping with nested, array and renamed fields: never a panic, and a
// response that is JSON stays JSON.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`{"city":"Oslo","days":3}`, `{"city":{"a":1}}`, `{"results":[{"isbn":1}],"total":"x"}`, `[1,2]`, `{"":{"":[]}}`, `{"a.b":{"c[]":1}}`, `"text"`, `null`} {
		f.Add(s)
	}
	m := &Mapping{From: "a/x", To: "b/y", Provenance: Structural, Score: 1,
		Inputs:  []FieldPair{{From: "city", To: "location.city_name"}, {From: "days", To: "num_days"}},
		Outputs: []FieldPair{{From: "results[].isbn", To: "items[].isbn_13"}, {From: "total", To: "meta.count"}, {From: "a", To: "b.c"}}}
	to := weatherV2()
	f.Fuzz(func(t *testing.T, s string) {
		var args map[string]any
		if toolenv.DecodeJSON([]byte(s), &args) == nil {
			_, _ = Translate(m, args, to)
		}
		body, _, err := TranslateResponse(m.Reverse(), json.RawMessage(s))
		if err == nil && json.Valid([]byte(s)) && !json.Valid(body) {
			t.Fatalf("%s became %s", s, body)
		}
	})
}
