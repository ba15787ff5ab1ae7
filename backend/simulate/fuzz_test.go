package simulate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// FuzzParseOutput: whatever a model writes, parseOutput neither panics
// nor hangs, a parsed answer's response is valid JSON, and a well-formed
// envelope comes back unchanged.
func FuzzParseOutput(f *testing.F) {
	seeds := []string{
		`{"error": "", "response": "ok"}`,
		"```json\n{\"error\": \"\", \"response\": [1, 2]}\n```",
		`{'error': '', 'response': {'a': True, 'b': None}}`,
		"{\"error\": \"\", \"response\": \"{\"status\":0}\"}",
		`{"mechanism_of_the_api": "x", "error": "", "response": {"id": 7`,
		"<think>x</think>{\"error\":\"\",\"response\":\"\\u00e9\"}",
		`{"a": [1, 2, {"b": "c"`, `{"x": 1e5, "y": -.5, "z": +3}`, `{`, `"`, `{"error": "`, "{'a': '\\x41\\U0001F600'}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := parseOutput(text)
		if err != nil {
			return
		}
		body := responseJSON(out)
		if !json.Valid(body) {
			t.Fatalf("response is not valid JSON: %q (from %q)", body, text)
		}
		// A strict envelope must round-trip exactly.
		var env struct {
			Error    *string         `json:"error"`
			Response json.RawMessage `json:"response"`
		}
		if json.Unmarshal([]byte(text), &env) == nil && env.Error != nil && env.Response != nil {
			if out.Error != *env.Error {
				t.Fatalf("error changed: %q -> %q", *env.Error, out.Error)
			}
			want, err1 := canonicalText(env.Response)
			got, err2 := canonicalText(body)
			if err1 == nil && err2 == nil && want != got {
				t.Fatalf("response changed: %s -> %s", want, got)
			}
		}
	})
}

// FuzzEncodeLoose: whatever the tolerant parser (pyfmt.ParseLoose, which
// has its own fuzzer) reads from model output, encodeJSON writes as valid
// JSON.
func FuzzEncodeLoose(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `[1, 2,`, `{'k': (1,)}`, `{"s": "a"b"}`, `tru`, `-`, `{"a": "NoneTy`, `[[[[`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, keep bool) {
		v, end, _, err := pyfmt.ParseLoose(text, pyfmt.LooseOptions{KeepPartial: keep})
		if err != nil {
			return
		}
		if end < 0 || end > len(text) {
			t.Fatalf("end %d out of range for %d bytes", end, len(text))
		}
		if b := encodeJSON(v); !json.Valid(b) {
			t.Fatalf("encodeJSON gave invalid JSON %q from %q", b, text)
		}
		_ = pyfmt.Repr(v)
	})
}

func canonicalText(raw []byte) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// FuzzTemplate: any template_response the interpreter accepts yields a
// synthesized value that has exactly its shape, the same bytes twice.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		`{"a": "str", "b": [{"c": "int", "_list_length": 3}], "d": ["list of float with length 4"], "e": "empty list", "f": "NoneType"}`,
		`"{\"status\": \"str\", \"data\": {\"items\": [{\"id\": \"int\", \"_list_length\": 2}], \"next\": \"NoneTy`,
		`{"x": ["list of list with length 2"], "y": "bool", "z": 5, "w": "hello"}`,
		`[{"a": "str"}]`, `"str"`, `null`, `{"a": [[]], "b": {"c": {"d": "float"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sh := parseTemplate(raw)
		if sh == nil {
			return
		}
		g := &generator{seed: "fuzz", args: map[string]any{}, title: "API", maxList: 5}
		v := g.value(sh, "", "")
		body := encodeJSON(v)
		if !json.Valid(body) {
			t.Fatalf("invalid JSON %q from template %q", body, raw)
		}
		back, err := pyfmt.DecodeOrdered(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := conforms(sh, back, 5, "response"); err != nil {
			t.Fatalf("%v\ntemplate %q\nbody %s", err, raw, body)
		}
		if again := encodeJSON((&generator{seed: "fuzz", args: map[string]any{}, title: "API", maxList: 5}).value(sh, "", "")); string(again) != string(body) {
			t.Fatalf("not deterministic: %s vs %s", body, again)
		}
	})
}

// FuzzAdaptBody: adapting a recorded answer to other arguments never
// panics, keeps a JSON body JSON, is deterministic, and leaves a body in
// which no argument appears as it was.
func FuzzAdaptBody(f *testing.F) {
	f.Add([]byte(`{"city": "Paris", "text": "{'city': 'Paris'}"}`), "Paris", "O'Brien")
	f.Add([]byte(`"7 of 17"`), "7", "8")
	f.Add([]byte(`{"Paris": [1, "Paris\\"]}`), `Paris\`, `"`)
	f.Add([]byte(`[]`), "", "x")
	f.Fuzz(func(t *testing.T, body []byte, old, new string) {
		subs := substitutions(map[string]any{"a": old}, map[string]any{"a": new})
		out, n := adaptBody(body, subs)
		again, m := adaptBody(body, subs)
		if !bytes.Equal(out, again) || n != m {
			t.Fatalf("not deterministic: %s / %s", out, again)
		}
		if json.Valid(body) && !json.Valid(out) {
			t.Fatalf("%s became %s, not JSON", body, out)
		}
		if n == 0 && !bytes.Equal(out, body) {
			t.Fatalf("no replacement, yet %s became %s", body, out)
		}
	})
}
