package simulate

import (
	"bytes"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// TestArgumentsKeptAsText: the simulator writes an argument kept as text
// (an undocumented object or array, toolenv.ParseArgs) as the value it
// holds, in its JSON and in its ordered (prompt) form, so an answer does
// not change with how the server parsed the call.
func TestArgumentsKeptAsText(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	text := `{"q":"x","extra":{"b":[1,2.50,"é\n"],"a":{"z":null,"y":true}},"list":[{"k":"v"},[]]}`
	kept, err := toolenv.ParseArgs([]byte(text), in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := kept["extra"].(toolenv.RawJSON); !ok {
		t.Fatalf("extra not kept as text: %T", kept["extra"])
	}
	decoded, err := toolenv.ParseJSONObject([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	writeJSON(&a, kept)
	writeJSON(&b, decoded)
	if a.String() != b.String() {
		t.Errorf("writeJSON: %s, want %s", a.String(), b.String())
	}
	if got, want := pyfmt.Repr(ordered(kept)), pyfmt.Repr(ordered(decoded)); got != want {
		t.Errorf("ordered: %s, want %s", got, want)
	}
}
