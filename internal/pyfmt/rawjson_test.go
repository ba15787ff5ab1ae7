package pyfmt

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestReprOfRawJSON: an argument kept as text (an undocumented object or
// array, toolenv.ParseArgs) is written as the value it holds, as if
// decoded: the simulator's prompt does not change with how the server
// parsed the call.
func TestReprOfRawJSON(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	for _, text := range []string{
		`{"q":"x","extra":{"b":[1,2.50,"é"],"a":{"z":null,"y":true}}}`,
		`{"q":"x","list":[{"k":"v"},[],{}],"n":-0.0}`,
	} {
		kept, err := toolenv.ParseArgs([]byte(text), in)
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := toolenv.ParseJSONObject([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		raw := 0
		for _, v := range kept {
			if _, ok := v.(toolenv.RawJSON); ok {
				raw++
			}
		}
		if raw == 0 {
			t.Fatalf("%s: nothing kept as text", text)
		}
		if got, want := Repr(kept), Repr(decoded); got != want {
			t.Errorf("Repr of %s kept as text = %s, want %s", text, got, want)
		}
	}
}
