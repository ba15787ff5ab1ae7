package mirror

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzParseSynth feeds the reader of synthesized pairs whatever a model
// might answer: it never panics, and every pair it returns has canonical
// arguments and a JSON body.
func FuzzParseSynth(f *testing.F) {
	f.Add(`[{"request": {"city": "Paris"}, "error": "", "response": {"days": []}}]`)
	f.Add("```json\n[{'request': '{\"city\": \"Oslo\"}', 'error': 'missing city', 'response': None}, 3]\n```")
	f.Add(`[{"request": [1], "response": "x"}, {"request": {}, "response": {"a": [1, {"b": 1e400}]}}]`)
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	tool := &toolenv.Tool{ID: "w/forecast", Collection: "w", Name: "forecast", Input: in}
	f.Fuzz(func(t *testing.T, text string) {
		pairs, _ := parseSynth(tool, text)
		for _, p := range pairs {
			var args map[string]any
			if err := toolenv.DecodeJSON([]byte(p.Args), &args); err != nil {
				t.Fatalf("arguments %q are not a JSON object: %v", p.Args, err)
			}
			if c, _ := toolenv.Canonical(args); string(c) != p.Args {
				t.Fatalf("arguments %q are not canonical (%s)", p.Args, c)
			}
			if len(p.Body) > 0 && !json.Valid(p.Body) {
				t.Fatalf("body %q is not JSON", p.Body)
			}
			if p.Class == "" || p.Status == "" {
				t.Fatalf("pair %+v is not classified", p)
			}
		}
	})
}
