package pyfmt

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// TestLoadsMatchesPython reads testdata/loads.json, which Python 3.11
// wrote: for each input, repr(json.loads(input)) and
// json.dumps(json.loads(input)); and inputs json.loads rejects.
func TestLoadsMatchesPython(t *testing.T) {
	raw, err := os.ReadFile("testdata/loads.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Good []struct{ In, Repr, Dumps string }
		Bad  []string
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Good {
		v, err := Loads(c.In)
		if err != nil {
			t.Errorf("Loads(%q): %v", c.In, err)
			continue
		}
		if got := Repr(v); got != c.Repr {
			t.Errorf("repr(Loads(%q)) = %s, want %s", c.In, got, c.Repr)
		}
		if got := Dumps(v); got != c.Dumps {
			t.Errorf("dumps(Loads(%q)) = %s, want %s", c.In, got, c.Dumps)
		}
	}
	for _, in := range f.Bad {
		_, err := Loads(in)
		var le *LoadsError
		if !errors.As(err, &le) {
			t.Errorf("Loads(%.40q) = %v, want a LoadsError", in, err)
		}
	}
}

func TestLoadsValues(t *testing.T) {
	v, err := Loads(`[NaN, -Infinity, 7, 7.0, "\ud800"]`)
	if err != nil {
		t.Fatal(err)
	}
	a := v.([]any)
	if f, ok := a[0].(float64); !ok || !math.IsNaN(f) {
		t.Errorf("NaN read as %#v", a[0])
	}
	if f, ok := a[1].(float64); !ok || !math.IsInf(f, -1) {
		t.Errorf("-Infinity read as %#v", a[1])
	}
	if a[2] != json.Number("7") || a[3] != json.Number("7.0") {
		t.Errorf("numbers read as %#v %#v", a[2], a[3])
	}
	// The surrogate is kept: read again from what Loads made of it, it
	// is the same surrogate, and Dumps writes its escape.
	s := a[4].(string)
	again, err := Loads(`"` + s + `"`)
	if err != nil || again != s {
		t.Errorf("a raw lone surrogate read back as %q, %v", again, err)
	}
	if got := JSONString(s + "\xff"); got != `"\ud800\ufffd"` {
		t.Errorf("JSONString = %s", got)
	}
	if _, err := Loads(strings.Repeat("[", loadsMaxDepth+2) + strings.Repeat("]", loadsMaxDepth+2)); err == nil {
		t.Error("nesting past Python's recursion limit accepted")
	}
}

func FuzzLoads(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x"], "a": null}`, `[NaN, -Infinity]`, `"\ud800\udc00\ud800"`, `1e400`, `{"":{"":[]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Loads(s)
		if err != nil {
			return
		}
		// What Dumps writes of a value Loads read reads back to the
		// same value.
		d := Dumps(v)
		w, err := Loads(d)
		if err != nil {
			t.Fatalf("Loads(Dumps(Loads(%q))) = %v (dumps %s)", s, err, d)
		}
		if Repr(w) != Repr(v) {
			t.Fatalf("round trip of %q: %s != %s", s, Repr(w), Repr(v))
		}
	})
}
