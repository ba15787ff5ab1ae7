package agent

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestResolveRefsInArgumentsKeptAsText: a reference inside an argument
// kept as text (an undocumented object or array, toolenv.ParseArgs) is
// resolved as in the decoded argument.
func TestResolveRefsInArgumentsKeptAsText(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	text := `{"q":"x","extra":{"id":"$result_1.id$","list":["$result_1.name$"]}}`
	kept, err := toolenv.ParseArgs([]byte(text), in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := kept["extra"].(toolenv.RawJSON); !ok {
		t.Fatalf("extra not kept as text: %T", kept["extra"])
	}
	decoded, _ := toolenv.ParseJSONObject([]byte(text))
	outputs := map[string]json.RawMessage{"result_1": json.RawMessage(`{"id": 7, "name": "Ada"}`)}
	got, err := ResolveRefs(kept, outputs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ResolveRefs(decoded, outputs)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := toolenv.Canonical(got)
	w, _ := toolenv.Canonical(want)
	if string(g) != string(w) || string(w) == text {
		t.Errorf("resolved %s, want %s", g, w)
	}
}
