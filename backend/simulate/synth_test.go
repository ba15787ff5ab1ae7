package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// sharedAPIs loads the distinct APIs of the StableToolBench query files in
// the shared data folder with the ToolBench loader.
func sharedAPIs(tb testing.TB) []*toolenv.Tool {
	tb.Helper()
	dir := shareddata.Require(tb, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{Name: "stb"}).Tools
}

// defaultArgs builds a call from the documented defaults.
func defaultArgs(t *toolenv.Tool) map[string]any {
	args := map[string]any{}
	for _, n := range t.Params() {
		if raw, ok := t.Input.Prop(n).Extra["example_value"]; ok && t.Input.IsRequired(n) {
			var v any
			if toolenv.DecodeJSON(raw, &v) == nil {
				args[n] = v
			}
		}
	}
	return args
}

// TestSynthesizeEverySharedAPI answers every API of the StableToolBench
// query files twice: the answers are identical, valid JSON, and have
// exactly the shape of the API's template_response.
func TestSynthesizeEverySharedAPI(t *testing.T) {
	tools := sharedAPIs(t)
	if len(tools) != 1920 {
		t.Errorf("the query files hold %d distinct APIs, want 1,920", len(tools))
	}
	s := NewSynthesizer(SynthOptions{})
	rules := map[string]int{}
	withTemplate := 0
	for _, tool := range tools {
		call := &toolenv.Call{Tool: tool, Args: defaultArgs(tool)}
		r1 := s.Invoke(context.Background(), call)
		r2 := s.Invoke(context.Background(), call)
		if !r1.OK() || r1.Source != toolenv.SourceSynthesizer || r1.Meta[MetaCacheable] != "false" || len(r1.Warnings) != 1 {
			t.Fatalf("%s: result %+v", tool.ID, r1)
		}
		if !bytes.Equal(r1.Body, r2.Body) {
			t.Fatalf("%s: two answers differ:\n%s\n%s", tool.ID, r1.Body, r2.Body)
		}
		v, err := pyfmt.DecodeOrdered(r1.Body)
		if err != nil {
			t.Fatalf("%s: body is not JSON: %v\n%s", tool.ID, err, r1.Body)
		}
		rules[r1.Meta[MetaSynthRule]]++
		sh := parseTemplate(tool.OutputExample)
		if !informative(sh) {
			// No template, or an empty one ("{}", which ToolBench writes
			// where it knows nothing): never answered with an empty body.
			if r1.Meta[MetaSynthRule] != "generic" || string(r1.Body) == "{}" {
				t.Errorf("%s: template %q: rule %s, body %s; want the generic placeholder", tool.ID, tool.OutputExample, r1.Meta[MetaSynthRule], clipText(string(r1.Body), 200))
			}
			continue
		}
		withTemplate++
		if err := conforms(sh, v, 20, "response"); err != nil {
			t.Errorf("%s: %v\ntemplate %s\nbody %s", tool.ID, err, clipText(string(tool.OutputExample), 300), clipText(string(r1.Body), 300))
		}
	}
	t.Logf("%d APIs, %d with a template; rules %v", len(tools), withTemplate, rules)
	if rules["template"] != withTemplate || rules["generic"] != len(tools)-withTemplate {
		t.Errorf("rules %v, want %d template and %d generic", rules, withTemplate, len(tools)-withTemplate)
	}
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TestSynthesizeTemplate checks the interpreter on a real template
// (StableToolBench G1, TheClique "Songkick artist").
func TestSynthesizeTemplate(t *testing.T) {
	tmpl := `{"appears_most_with": [{"count": "int", "link": "str", "name": "str", "_list_length": 5}], "bio": "str",
	"fans_num": "int", "image_url": "str", "on_tour": "str", "posters": ["list of str with length 8"], "none": "NoneType",
	"tags": "empty list", "location": {"lat": "float", "lng": "float"}, "verified": "bool", "artist_id": "str"}`
	in := toolenv.ObjectSchema()
	in.SetProp("artist_id", &toolenv.Schema{Type: "string"})
	tool := &toolenv.Tool{ID: "stb/songkick_artist_for_theclique", Name: "songkick_artist_for_theclique", Title: "Songkick artist", Input: in, OutputExample: json.RawMessage(tmpl)}
	s := NewSynthesizer(SynthOptions{})
	r := s.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"artist_id": "520117-arctic-monkeys"}})
	v, err := pyfmt.DecodeOrdered(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := conforms(parseTemplate(json.RawMessage(tmpl)), v, 20, "response"); err != nil {
		t.Fatalf("%v\n%s", err, r.Body)
	}
	o := v.(pyfmt.Dict)
	if id, _ := o.Get("artist_id"); id != "520117-arctic-monkeys" {
		t.Errorf("artist_id should echo the argument, got %v", id)
	}
	if posters, _ := o.Get("posters"); len(posters.([]any)) != 8 || !strings.HasPrefix(posters.([]any)[0].(string), "https://example.com/images/") {
		t.Errorf("posters = %v, want 8 image URLs", posters)
	}
	if tags, _ := o.Get("tags"); len(tags.([]any)) != 0 {
		t.Errorf("an empty list template must give []: %v", tags)
	}
	lat, _ := o.Get("location")
	if l, _ := lat.(pyfmt.Dict).Get("lat"); kindOfValue(l) != kindFloat {
		t.Errorf("lat = %v, want a float", l)
	}
	// Another call gives other values in the same shape.
	r2 := s.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"artist_id": "1-other"}})
	if bytes.Equal(r.Body, r2.Body) {
		t.Error("different arguments should give different values")
	}
}

// memExamples is an ExampleSource over a real SQLite store.
func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func putEntry(t *testing.T, st store.Store, tool string, args map[string]any, body string) {
	t.Helper()
	c, err := toolenv.Canonical(args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), &store.Entry{Tool: tool, Args: string(c), Status: toolenv.StatusOK, Body: json.RawMessage(body), Origin: "upstream"}); err != nil {
		t.Fatal(err)
	}
}

// TestSynthesizeFromRecords: an exact recorded call is answered verbatim;
// other calls take recorded values at the same paths; with no template the
// most similar record is answered.
func TestSynthesizeFromRecords(t *testing.T) {
	st := openStore(t)
	tmpl := `{"city": "str", "temp": "float", "conditions": "str"}`
	tool := &toolenv.Tool{ID: "demo/weather", Name: "weather", Title: "Weather", Input: toolenv.ObjectSchema(), OutputExample: json.RawMessage(tmpl)}
	putEntry(t, st, tool.ID, map[string]any{"q": "Paris"}, `{"city": "Paris", "temp": 21.5, "conditions": "sunny"}`)
	putEntry(t, st, tool.ID, map[string]any{"q": "Oslo"}, `"{'city': 'Oslo', 'temp': 3.25, 'conditions': 'snow'}"`)
	s := NewSynthesizer(SynthOptions{Examples: st})

	r := s.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"q": "Paris"}})
	if r.Meta[MetaSynthRule] != "example" || string(r.Body) != `{"city": "Paris", "temp": 21.5, "conditions": "sunny"}` {
		t.Fatalf("exact record: rule %s body %s", r.Meta[MetaSynthRule], r.Body)
	}
	r = s.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"q": "Rome"}})
	v, _ := pyfmt.DecodeOrdered(r.Body)
	cond, _ := v.(pyfmt.Dict).Get("conditions")
	if r.Meta[MetaSynthRule] != "template" || (cond != "sunny" && cond != "snow") {
		t.Fatalf("neighbour values: rule %s body %s", r.Meta[MetaSynthRule], r.Body)
	}

	bare := &toolenv.Tool{ID: "demo/quote", Name: "quote", Input: toolenv.ObjectSchema()}
	putEntry(t, st, bare.ID, map[string]any{"topic": "love", "lang": "en"}, `"All you need is love."`)
	putEntry(t, st, bare.ID, map[string]any{"topic": "war"}, `"War is peace."`)
	r = s.Invoke(context.Background(), &toolenv.Call{Tool: bare, Args: map[string]any{"topic": "love", "lang": "fr"}})
	if r.Meta[MetaSynthRule] != "nearest" || string(r.Body) != `"All you need is love."` {
		t.Fatalf("nearest record: rule %s body %s", r.Meta[MetaSynthRule], r.Body)
	}
}

// TestSynthesizeSchema fills an output JSON Schema (non-ToolBench tools).
func TestSynthesizeSchema(t *testing.T) {
	out := toolenv.ObjectSchema()
	out.SetProp("id", &toolenv.Schema{Type: "integer"})
	out.SetProp("email", &toolenv.Schema{Type: "string", Format: "email"})
	out.SetProp("plan", &toolenv.Schema{Type: "string", Enum: []any{"free", "pro"}})
	out.SetProp("tags", &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "string"}})
	tool := &toolenv.Tool{ID: "demo/user", Name: "user", Input: toolenv.ObjectSchema(), Output: out}
	r := NewSynthesizer(SynthOptions{}).Invoke(context.Background(), &toolenv.Call{Tool: tool})
	v, err := pyfmt.DecodeOrdered(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := conforms(schemaShape(out, 0), v, 20, "response"); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	o := v.(pyfmt.Dict)
	if plan, _ := o.Get("plan"); plan != "free" && plan != "pro" {
		t.Errorf("plan = %v, want an enum value", plan)
	}
	if email, _ := o.Get("email"); !strings.HasSuffix(email.(string), "@example.com") {
		t.Errorf("email = %v", email)
	}
}

func BenchmarkSynthesize(b *testing.B) {
	tools := sharedAPIs(b)
	var withTemplate []*toolenv.Tool
	for _, t := range tools {
		if t.OutputExample != nil {
			withTemplate = append(withTemplate, t)
		}
	}
	s := NewSynthesizer(SynthOptions{})
	calls := make([]*toolenv.Call, len(withTemplate))
	for i, t := range withTemplate {
		calls[i] = &toolenv.Call{Tool: t, Args: defaultArgs(t)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.Invoke(ctx, calls[i%len(calls)])
	}
}
