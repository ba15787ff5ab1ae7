package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

func weatherTool(template string) *toolenv.Tool {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	in.SetProp("days", &toolenv.Schema{Type: "integer"})
	t := &toolenv.Tool{ID: "tb/forecast", Name: "forecast", Title: "Forecast", Input: in}
	if template != "" {
		t.OutputExample = json.RawMessage(template)
	}
	return t
}

func recordedStore(t *testing.T, tool string, entries map[string]string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for args, body := range entries {
		if _, err := st.Put(context.Background(), &store.Entry{Tool: tool, Args: args, Status: toolenv.StatusOK, Body: json.RawMessage(body), Origin: "import"}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestSynthesizeNearestIsNotAnotherCallsAnswer: with no template, the
// synthesizer answered the most similar recorded call's response
// verbatim, so a call for London got Paris's weather. The recorded
// call's argument values are now replaced by this call's wherever they
// appear: whole values, object keys, words of a text, inside a string
// holding a Python literal.
func TestSynthesizeNearestIsNotAnotherCallsAnswer(t *testing.T) {
	st := recordedStore(t, "tb/forecast", map[string]string{
		`{"city":"Paris","days":3}`: `{"city": "Paris", "days": 3, "summary": "Sunny in Paris for 3 days", "Paris": {"max": 21}, "Parisian": true, "raw": "{'city': 'Paris', 'days': 3}"}`,
	})
	s := NewSynthesizer(SynthOptions{Examples: st})
	r := s.Invoke(context.Background(), &toolenv.Call{Tool: weatherTool(""), Args: map[string]any{"city": "London", "days": json.Number("5")}})
	want := `{"city":"London","days":5,"summary":"Sunny in London for 5 days","London":{"max":21},"Parisian":true,"raw":"{'city': 'London', 'days': 5}"}`
	if string(r.Body) != want {
		t.Errorf("body %s\nwant %s", r.Body, want)
	}
	if r.Meta[MetaSynthRule] != "nearest" || r.Meta[MetaSynthFrom] != `{"city":"Paris","days":3}` || r.Source != toolenv.SourceSynthesizer || len(r.Warnings) != 1 {
		t.Errorf("result %+v; want it marked synthesized from the Paris call", r)
	}
}

// TestSynthesizeEmptyTemplate: ToolBench's "{}" template (it knows
// nothing of the response) was answered with {}; it is now treated as no
// template.
func TestSynthesizeEmptyTemplate(t *testing.T) {
	for _, tmpl := range []string{`{}`, `[]`, `"{}"`, `" "`} {
		s := NewSynthesizer(SynthOptions{})
		r := s.Invoke(context.Background(), &toolenv.Call{Tool: weatherTool(tmpl), Args: map[string]any{"city": "Oslo"}})
		if r.Meta[MetaSynthRule] != "generic" || !strings.Contains(string(r.Body), `"input":{"city":"Oslo"}`) {
			t.Errorf("template %s: rule %s, body %s; want the generic placeholder echoing the input", tmpl, r.Meta[MetaSynthRule], r.Body)
		}
		st := recordedStore(t, "tb/forecast", map[string]string{`{"city":"Rome"}`: `"Rome: 30 degrees"`})
		s = NewSynthesizer(SynthOptions{Examples: st})
		r = s.Invoke(context.Background(), &toolenv.Call{Tool: weatherTool(tmpl), Args: map[string]any{"city": "Oslo"}})
		if r.Meta[MetaSynthRule] != "nearest" || string(r.Body) != `"Oslo: 30 degrees"` {
			t.Errorf("template %s with a record: rule %s, body %s; want the record adapted to Oslo", tmpl, r.Meta[MetaSynthRule], r.Body)
		}
	}
}

// TestSynthesizeNearestProperty generates APIs with recorded calls whose
// answers quote their arguments in every way an API does (whole values,
// keys, words of a text, a Python-literal string), with Unicode, numbers
// and regexp metacharacters, and calls them with other arguments: the
// answer never equals a recorded answer that quotes its arguments, holds
// every new value where the adapted record held the old one, and no
// longer holds the old one.
func TestSynthesizeNearestProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 9))
	for i := 0; i < 300; i++ {
		tool, recorded, args := genEchoAPI(rng, i)
		entries := map[string]string{}
		for _, rc := range recorded {
			entries[rc.canon] = rc.body
		}
		st := recordedStore(t, tool.ID, entries)
		s := NewSynthesizer(SynthOptions{Examples: st})
		r := s.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: args})
		if !json.Valid(r.Body) || r.Meta[MetaSynthRule] != "nearest" {
			t.Fatalf("case %d: rule %s, body %s", i, r.Meta[MetaSynthRule], r.Body)
		}
		for _, rc := range recorded {
			if string(r.Body) == rc.body {
				t.Fatalf("case %d: call %v answered with the recorded answer of %s verbatim: %s", i, args, rc.canon, r.Body)
			}
		}
		var from *recordedCall
		for j := range recorded {
			if recorded[j].canon == r.Meta[MetaSynthFrom] {
				from = &recorded[j]
			}
		}
		if from == nil {
			t.Fatalf("case %d: synth_from %q is not a recorded call", i, r.Meta[MetaSynthFrom])
		}
		text := unescaped(r.Body)
		// A value may stand escaped, as inside a Python string literal.
		holds := func(v string) bool {
			return strings.Contains(text, v) || strings.Contains(text, pyEscape(v, '\'')) || strings.Contains(text, pyEscape(v, '"'))
		}
		for k, old := range from.values {
			cur, _ := scalarText(args[k])
			if !holds(cur) {
				t.Errorf("case %d: %s=%q: the answer lacks the new value\nrecorded %s\nanswer   %s", i, k, cur, from.body, r.Body)
			}
			if holds(old) {
				t.Errorf("case %d: %s: the answer still holds the recorded value %q\nrecorded %s\nanswer   %s", i, k, old, from.body, r.Body)
			}
		}
	}
}

type recordedCall struct {
	canon, body string
	values      map[string]string // parameter → its value as text in the body
}

// genEchoAPI makes an API with two to four parameters, one to four
// recorded calls whose answers quote every argument, and a call with
// other values for each. Values are drawn so that none is a word of
// another.
func genEchoAPI(rng *rand.Rand, n int) (*toolenv.Tool, []recordedCall, map[string]any) {
	in := toolenv.ObjectSchema()
	names := []string{"city", "query", "is_id", "limit", "Symbol", "lang", "q.x", "名前"}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	names = names[:2+rng.IntN(3)]
	for _, name := range names {
		in.SetProp(name, &toolenv.Schema{Type: "string"})
	}
	tool := &toolenv.Tool{ID: fmt.Sprintf("tb/api_%d", n), Name: fmt.Sprintf("api_%d", n), Input: in}
	used := map[string]bool{}
	value := func(numeric bool) string {
		for {
			var v string
			switch {
			case numeric:
				v = fmt.Sprint(100000 + rng.IntN(900000))
			default:
				words := []string{"Zürich", "naïve", "東京", "a+b", "(x|y)*", "O'Brien", `say "hi"`, "back\\slash", "50%", "#tag", "Ñandú"}
				v = fmt.Sprintf("%s-%d", words[rng.IntN(len(words))], rng.IntN(1e6))
			}
			if !used[v] {
				used[v] = true
				return v
			}
		}
	}
	numeric := map[string]bool{}
	for _, name := range names {
		numeric[name] = rng.IntN(3) == 0
	}
	argVal := func(name, v string) any {
		if numeric[name] {
			return json.Number(v)
		}
		return v
	}
	var recorded []recordedCall
	for c := 0; c < 1+rng.IntN(4); c++ {
		args := map[string]any{}
		values := map[string]string{}
		for _, name := range names {
			v := value(numeric[name])
			args[name], values[name] = argVal(name, v), v
		}
		canon, _ := toolenv.Canonical(args)
		// The answer quotes each argument in one of the ways APIs do.
		var parts []string
		var text []string
		for _, name := range names {
			v := values[name]
			kj, _ := json.Marshal(name)
			vj, _ := json.Marshal(args[name])
			switch rng.IntN(4) {
			case 0:
				parts = append(parts, fmt.Sprintf("%s: %s", kj, vj))
			case 1:
				key, _ := json.Marshal(v)
				parts = append(parts, fmt.Sprintf("%s: {\"n\": 1}", key))
			case 2:
				text = append(text, "result for "+v+".")
			default:
				text = append(text, fmt.Sprintf("{'%s': %s}", name, pyQuote(v, numeric[name])))
			}
		}
		tj, _ := json.Marshal(strings.Join(text, " "))
		parts = append(parts, fmt.Sprintf("\"text\": %s", tj))
		recorded = append(recorded, recordedCall{canon: string(canon), body: "{" + strings.Join(parts, ", ") + "}", values: values})
	}
	args := map[string]any{}
	for _, name := range names {
		args[name] = argVal(name, value(numeric[name]))
	}
	return tool, recorded, args
}

func pyQuote(v string, numeric bool) string {
	if numeric {
		return v
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
}

// unescaped is a JSON body's text with its strings decoded, so that a
// value can be looked for whatever escaping it got.
func unescaped(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return string(body)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\x00")
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		default:
			fmt.Fprint(&b, x, "\x00")
		}
	}
	walk(v)
	return b.String()
}

// TestAdaptBodyKeepsLiteralsValid: a value written into a Python or JSON
// string literal inside a text is escaped for it, so the literal still
// reads back as the new value.
func TestAdaptBodyKeepsLiteralsValid(t *testing.T) {
	tests := []struct {
		body, old, new, want string
	}{
		{`"{'name': 'Ann', 'n': 2}"`, "Ann", "O'Brien", `"{'name': 'O\\'Brien', 'n': 2}"`},
		{`"{\"name\": \"Ann\"}"`, "Ann", `say "hi"`, `"{\"name\": \"say \\\"hi\\\"\"}"`},
		{`"{'name': 'O\\'Brien'}"`, "O'Brien", "Ann", `"{'name': 'Ann'}"`},
		{`"{'path': 'a\\\\b'}"`, `a\b`, `c\d`, `"{'path': 'c\\\\d'}"`},
		{`"Annabel and Ann"`, "Ann", "Bo", `"Annabel and Bo"`},
		{`{"n": 7, "m": 17, "s": "7 of 17"}`, "7", "8", `{"n":8,"m":17,"s":"8 of 17"}`},
	}
	for _, tt := range tests {
		got, _ := adaptBody(json.RawMessage(tt.body), substitutions(map[string]any{"x": tt.old}, map[string]any{"x": tt.new}))
		if string(got) != tt.want {
			t.Errorf("%s with %q → %q: got %s, want %s", tt.body, tt.old, tt.new, got, tt.want)
		}
	}
}
