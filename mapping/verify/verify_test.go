package verify

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestSameAnswer(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"rows":[[1,"a"],[2,"b"]]}`, `{"rows":[[2,"b"],[1,"a"]]}`, true}, // rows are a set
		{`[{"id":1},{"id":2}]`, `[{"id":2},{"id":1}]`, true},
		{`{"rows":[[1,"a"]]}`, `{"rows":[["a",1]]}`, false}, // a row's values keep their order
		{`{"columns":["a","b"]}`, `{"columns":["b","a"]}`, false},
		{`{"rows":[[1],[1]]}`, `{"rows":[[1]]}`, false}, // a multiset, not a set
		{`{"n":1}`, `{"n":1.0}`, true},
		{`{"n":1}`, `{"n":2}`, false},
		{`"text"`, `"text"`, true},
		{`plain text`, `plain text`, true},
		{`plain text`, `other text`, false},
		{``, ``, true},
		{`{"a":[]}`, `{"a":[]}`, true},
	}
	for _, tt := range tests {
		if got := sameAnswer(json.RawMessage(tt.a), json.RawMessage(tt.b)); got != tt.same {
			t.Errorf("sameAnswer(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

func TestHarvest(t *testing.T) {
	s := newSampler(1)
	s.harvest(json.RawMessage(`{"columns":["superhero_name","height"],"rows":[["Batman",188],["Robin",165],["Batman",188]],"row_count":3}`))
	s.harvest(json.RawMessage(`{"items":[{"city":"Paris","pop":2.1},{"city":"Oslo"}],"next":null,"ok":true}`))
	s.harvest(json.RawMessage(`not json`))
	tests := []struct {
		key  string
		want string
	}{
		{"superhero_name", `["Batman","Robin"]`},
		{"height", `[188,165]`},
		{"city", `["Paris","Oslo"]`},
		{"pop", `[2.1]`},
		{"ok", `[true]`},
		{"columns", `null`}, // the column names are not values
		{"rows", `null`},
		{"next", `null`},
	}
	for _, tt := range tests {
		var got []any
		if v := s.byKey[tt.key]; v != nil {
			got = v.list
		}
		b, _ := json.Marshal(got)
		if string(b) != tt.want {
			t.Errorf("values of %s = %s, want %s", tt.key, b, tt.want)
		}
	}
	if n := len(s.byType["integer"].list); n != 3 { // 188, 165 and row_count 3
		t.Errorf("%d integers: %v", n, s.byType["integer"].list)
	}
}

func TestSampleArgs(t *testing.T) {
	s := newSampler(7)
	s.harvest(json.RawMessage(`{"columns":["superhero_name"],"rows":[["Batman"],["Robin"],["Joker"]]}`))
	s.harvest(json.RawMessage(`{"columns":["n"],"rows":[[1],[2],[3],[4],[5],[6],[7],[8]]}`))
	schema := func(props string, required ...string) *toolenv.Schema {
		var sc toolenv.Schema
		if err := json.Unmarshal([]byte(`{"type":"object","properties":`+props+`}`), &sc); err != nil {
			t.Fatal(err)
		}
		sc.Required = required
		return &sc
	}
	tests := []struct {
		name  string
		input *toolenv.Schema
		n     int
		check func(t *testing.T, sets []map[string]any)
	}{
		{"column named in the description", schema(`{"ARG_1":{"type":"string","description":"The name (superhero.superhero_name): the rows where it equals this value."}}`, "ARG_1"), 3,
			func(t *testing.T, sets []map[string]any) {
				seen := map[any]bool{}
				for _, a := range sets {
					seen[a["ARG_1"]] = true
				}
				if len(sets) != 3 || !seen["Batman"] || !seen["Robin"] || !seen["Joker"] {
					t.Errorf("sets %v: want each harvested name once", sets)
				}
			}},
		{"documented enum first", schema(`{"unit":{"type":"string","enum":["metric","imperial"]}}`, "unit"), 2,
			func(t *testing.T, sets []map[string]any) {
				got := fmt.Sprintf("%v %v", sets[0]["unit"], sets[len(sets)-1]["unit"])
				if len(sets) != 2 || (got != "metric imperial" && got != "imperial metric") {
					t.Errorf("sets %v", sets)
				}
			}},
		{"type-compatible values only", schema(`{"k":{"type":"integer"}}`, "k"), 5,
			func(t *testing.T, sets []map[string]any) {
				if len(sets) != 5 {
					t.Errorf("%d sets", len(sets))
				}
				for _, a := range sets {
					if scalarType(a["k"]) != "integer" {
						t.Errorf("k = %#v", a["k"])
					}
				}
			}},
		{"optional arguments left out", schema(`{"q":{"type":"string"}}`), 3,
			func(t *testing.T, sets []map[string]any) {
				if len(sets) != 1 || len(sets[0]) != 0 {
					t.Errorf("sets %v: want one empty set", sets)
				}
			}},
		{"an object nothing shows", schema(`{"o":{"type":"object","properties":{"x":{"type":"string"}}}}`, "o"), 3,
			func(t *testing.T, sets []map[string]any) {
				if len(sets) != 0 {
					t.Errorf("sets %v: want none", sets)
				}
			}},
		{"nothing harvested fits: synthetic", schema(`{"flag":{"type":"boolean"}}`, "flag"), 3,
			func(t *testing.T, sets []map[string]any) {
				if len(sets) != 2 {
					t.Errorf("sets %v: want true and false", sets)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &toolenv.Tool{ID: "c/" + strings.ReplaceAll(tt.name, " ", "_"), Input: tt.input}
			tt.check(t, s.args(tool, tt.n))
			// The same seed draws the same arguments.
			a, _ := json.Marshal(s.args(tool, tt.n))
			b, _ := json.Marshal(s.args(tool, tt.n))
			if string(a) != string(b) {
				t.Errorf("not deterministic: %s vs %s", a, b)
			}
		})
	}
}

// FuzzHarvest: any answer is read without a panic, and what is kept
// stays within the limits.
func FuzzHarvest(f *testing.F) {
	for _, s := range []string{
		`{"columns":["a","b"],"rows":[[1,"x"],[2,"y"]]}`,
		`[{"a":{"b":[1,2,{"c":"d"}]}}]`,
		`{"columns":["a"],"rows":[[1,2]]}`,
		`"text"`, `null`, `[[[[[[[[[[[[1]]]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newSampler(1)
		s.harvest(body)
		for k, v := range s.byKey {
			if len(v.list) > maxPerKey {
				t.Fatalf("%s: %d values", k, len(v.list))
			}
		}
		_ = sameAnswer(body, body)
		tool := &toolenv.Tool{ID: "c/t", Input: &toolenv.Schema{Type: "object", Required: []string{"a"},
			Properties: map[string]*toolenv.Schema{"a": {Type: "string", Description: "x (t.a)"}}}}
		for _, args := range s.args(tool, 3) {
			if _, ok := args["a"].(string); !ok {
				t.Fatalf("args %v", args)
			}
		}
	})
}
