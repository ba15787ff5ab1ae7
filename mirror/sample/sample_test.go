package sample_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror/sample"
	"github.com/toolenv/toolenv/validate"
)

// randomTool makes a tool with a random schema: every type, enums,
// bounds, formats, lengths, nested objects and arrays, required and
// optional parameters.
func randomTool(rng *rand.Rand, id int) *toolenv.Tool {
	in := toolenv.ObjectSchema()
	in.AdditionalProperties = json.RawMessage("false")
	n := rng.IntN(6)
	for i := range n {
		name := fmt.Sprintf("p%d_%s", i, []string{"city", "id", "limit", "tags", "when", "opts", "flag", "score"}[rng.IntN(8)])
		p := randomSchema(rng, 0)
		in.SetProp(name, p)
		if rng.IntN(2) == 0 {
			in.Required = append(in.Required, name)
		}
	}
	return &toolenv.Tool{ID: fmt.Sprintf("c/t%d", id), Collection: "c", Name: fmt.Sprintf("t%d", id), Description: "Looks up cities, scores and tags of the weather service.", Input: in}
}

func f(x float64) *float64 { return &x }
func n(x int) *int         { return &x }

func randomSchema(rng *rand.Rand, depth int) *toolenv.Schema {
	switch k := rng.IntN(8); {
	case k == 0:
		return &toolenv.Schema{Type: "integer", Minimum: f(float64(rng.IntN(5))), Maximum: f(float64(10 + rng.IntN(50)))}
	case k == 1:
		return &toolenv.Schema{Type: "number", Minimum: f(-1.5), Maximum: f(99.5)}
	case k == 2:
		return &toolenv.Schema{Type: "string", Enum: []any{"celsius", "fahrenheit", "kelvin"}}
	case k == 3:
		return &toolenv.Schema{Type: "string", Format: []string{"date", "date-time", "email", "uuid", "ipv4", "uri"}[rng.IntN(6)]}
	case k == 4:
		return &toolenv.Schema{Type: "string", MinLength: n(2), MaxLength: n(12), Default: "Paris"}
	case k == 5:
		return &toolenv.Schema{Type: "boolean"}
	case k == 6 && depth < 2:
		return &toolenv.Schema{Type: "array", Items: randomSchema(rng, depth+1), MaxItems: n(4)}
	case k == 7 && depth < 2:
		o := toolenv.ObjectSchema()
		o.SetProp("name", &toolenv.Schema{Type: "string"})
		o.SetProp("count", &toolenv.Schema{Type: "integer", Minimum: f(0)})
		o.Required = []string{"name"}
		return o
	}
	return &toolenv.Schema{Type: "integer"}
}

// TestSampleValidity checks, on hundreds of random schemas, that every
// valid call passes strict validation, that every call that is meant to
// be invalid in a way validation can see fails it, that calls are
// distinct, and that the sampler is deterministic.
func TestSampleValidity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var v validate.Validator
	total, invalid := 0, 0
	for i := range 300 {
		tool := randomTool(rng, i)
		opts := sample.Options{N: 40, Invalid: 8, Seed: 3}
		calls := sample.Sample(tool, opts)
		again := sample.Sample(tool, opts)
		if len(calls) != len(again) {
			t.Fatalf("%s: %d calls, then %d: not deterministic", tool.ID, len(calls), len(again))
		}
		seen := map[string]bool{}
		valid := 0
		for k, c := range calls {
			if c.Canonical != again[k].Canonical || c.Kind != again[k].Kind {
				t.Fatalf("%s: call %d differs between two runs: %s vs %s", tool.ID, k, c.Canonical, again[k].Canonical)
			}
			if seen[c.Canonical] {
				t.Fatalf("%s: duplicate call %s", tool.ID, c.Canonical)
			}
			seen[c.Canonical] = true
			canon, _ := toolenv.Canonical(c.Args)
			if string(canon) != c.Canonical {
				t.Fatalf("%s: Canonical %s is not the canonical JSON of Args (%s)", tool.ID, c.Canonical, canon)
			}
			out := v.Args(tool.Input, decode(t, c.Canonical), false)
			switch {
			case !c.Invalid():
				valid++
				if len(out.Problems) > 0 {
					t.Errorf("%s: %s call %s fails validation: %+v", tool.ID, c.Kind, c.Canonical, out.Problems)
				}
			case c.Kind == sample.KindInvalid+sample.InvalidEmpty:
				// An empty string is valid unless a length says otherwise.
			default:
				invalid++
				if len(out.Problems) == 0 {
					t.Errorf("%s: %s call %s passes validation", tool.ID, c.Kind, c.Canonical)
				}
			}
		}
		if valid > opts.N {
			t.Errorf("%s: %d valid calls, asked for %d", tool.ID, valid, opts.N)
		}
		if len(tool.Input.Names()) > 0 && valid == 0 {
			t.Errorf("%s: no valid call", tool.ID)
		}
		total += len(calls)
	}
	if invalid == 0 || total < 3000 {
		t.Fatalf("only %d calls (%d invalid) over 300 tools", total, invalid)
	}
}

func decode(t *testing.T, canon string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(canon), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSampleOrder checks the order of the calls: the documented call
// first, then documented and known values, boundaries, random
// combinations, and the invalid calls last, varied over what is wrong.
func TestSampleOrder(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string", Examples: []any{"Paris", "Lyon"}})
	in.SetProp("units", &toolenv.Schema{Type: "string", Enum: []any{"metric", "imperial"}, Default: "metric"})
	in.SetProp("days", &toolenv.Schema{Type: "integer", Minimum: f(1), Maximum: f(14)})
	in.Required = []string{"city"}
	tool := &toolenv.Tool{ID: "w/forecast", Name: "forecast", Input: in}
	known := map[string][]any{"city": {"Berlin", "Madrid"}}
	calls := sample.Sample(tool, sample.Options{N: 30, Invalid: 6, Seed: 1, Known: func(p string) []any { return known[p] }})
	if calls[0].Canonical != `{"city":"Paris"}` || calls[0].Kind != sample.KindDocumented {
		t.Fatalf("first call %s (%s), want the documented call {\"city\":\"Paris\"}", calls[0].Canonical, calls[0].Kind)
	}
	if calls[1].Canonical != `{"city":"Paris","days":1,"units":"metric"}` {
		t.Fatalf("second call %s, want every parameter with its first value", calls[1].Canonical)
	}
	kinds := map[string]int{}
	firstInvalid := -1
	for i, c := range calls {
		kinds[c.Kind]++
		if c.Invalid() && firstInvalid < 0 {
			firstInvalid = i
		}
		if firstInvalid >= 0 && !c.Invalid() {
			t.Fatalf("valid call %s after the invalid ones", c.Canonical)
		}
	}
	for _, want := range []string{`{"city":"Berlin"}`, `{"city":"Madrid"}`, `{"city":"Lyon"}`, `{"city":"Paris","days":14}`} {
		found := false
		for _, c := range calls {
			found = found || c.Canonical == want
		}
		if !found {
			t.Errorf("no call %s (documented, known and boundary values each get one)", want)
		}
	}
	if kinds[sample.KindKnown] < 2 || kinds[sample.KindBoundary] < 1 || kinds[sample.KindSampled] < 1 {
		t.Errorf("kinds %v: want known, boundary and sampled calls", kinds)
	}
	var whats []string
	for _, c := range calls[firstInvalid:] {
		whats = append(whats, strings.TrimPrefix(c.Kind, sample.KindInvalid))
	}
	if len(whats) != 6 || whats[0] == whats[1] {
		t.Errorf("invalid calls %v: want 6, varied over what is wrong", whats)
	}
}

// TestSampleSkipAndNoRandom checks that a second round adds only new
// calls and that NoRandom writes no random combination.
func TestSampleSkipAndNoRandom(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string", Examples: []any{"a", "b"}})
	in.Required = []string{"q"}
	tool := &toolenv.Tool{ID: "s/search", Name: "search", Input: in}
	first := sample.Sample(tool, sample.Options{N: 10, Seed: 1, NoRandom: true})
	for _, c := range first {
		if c.Kind == sample.KindSampled {
			t.Fatalf("NoRandom wrote a random call %s", c.Canonical)
		}
	}
	have := map[string]bool{}
	for _, c := range first {
		have[c.Canonical] = true
	}
	second := sample.Sample(tool, sample.Options{N: 10, Seed: 1, Skip: func(c string) bool { return have[c] }})
	if len(second) != 10 {
		t.Fatalf("second round wrote %d calls, want 10 new ones", len(second))
	}
	for _, c := range second {
		if have[c.Canonical] {
			t.Fatalf("second round repeated %s", c.Canonical)
		}
	}
}

// TestSampleNoParams checks an API without parameters: one call, and an
// unknown-parameter call for the failure set.
func TestSampleNoParams(t *testing.T) {
	tool := &toolenv.Tool{ID: "s/ping", Name: "ping", Input: toolenv.ObjectSchema()}
	calls := sample.Sample(tool, sample.Options{N: 200, Invalid: 5, Seed: 1})
	if len(calls) != 2 || calls[0].Canonical != "{}" || calls[1].Kind != sample.KindInvalid+sample.InvalidUnknownParam {
		t.Fatalf("calls %+v: want {} and one unknown-parameter call", calls)
	}
}

func FuzzSample(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer","minimum":5,"maximum":1}},"required":["a"]}`))
	f.Add([]byte(`{"type":"object","properties":{"s":{"type":"string","minLength":5,"maxLength":2,"enum":[1,"x",null]}}}`))
	f.Add([]byte(`{"type":"object","properties":{"o":{"anyOf":[{"type":"array","items":{"type":"object"}},{"type":"null"}]}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var s toolenv.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return
		}
		tool := &toolenv.Tool{ID: "f/x", Name: "x", Input: &s}
		calls := sample.Sample(tool, sample.Options{N: 20, Invalid: 5, Seed: 1})
		seen := map[string]bool{}
		for _, c := range calls {
			if seen[c.Canonical] {
				t.Fatalf("duplicate %s", c.Canonical)
			}
			seen[c.Canonical] = true
		}
	})
}
