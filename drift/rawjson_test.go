package drift

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestHasRefInArgumentsKeptAsText: a NESTful reference inside an
// argument kept as text (an undocumented object or array) is found as in
// the decoded argument.
func TestHasRefInArgumentsKeptAsText(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	for text, want := range map[string]bool{
		`{"q":"x","extra":{"id":"$result_1.id$"}}`: true,
		`{"q":"x","extra":["a",["$var$"]]}`:        true,
		`{"q":"x","extra":{"id":"result_1"}}`:      false,
	} {
		kept, err := toolenv.ParseArgs([]byte(text), in)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := kept["extra"].(toolenv.RawJSON); !ok {
			t.Fatalf("%s: extra not kept as text", text)
		}
		if got := hasRef(kept["extra"]); got != want {
			t.Errorf("hasRef(%s) = %v, want %v", text, got, want)
		}
	}
}
