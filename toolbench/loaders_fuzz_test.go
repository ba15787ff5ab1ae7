package toolbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzLoad reads any file as ToolBench documentation (a tool file or a
// query file, by its first character): no panic; the docs it reads build
// a valid collection, and the queries give tasks whose tools are in it;
// LoadCollection (which decodes without copying) fails alike or gives
// the same tools.
func FuzzLoad(f *testing.F) {
	tool, _ := os.ReadFile("testdata/tools/Data/theclique.json")
	f.Add(tool)
	f.Add([]byte(`[{"query": "q", "query_id": 7, "api_list": [{"category_name": "Data", "tool_name": "T", "api_name": "a b", "api_description": "d",
	  "required_parameters": [{"name": "x", "type": "NUMBER", "default": "5"}], "optional_parameters": [{"name": "y", "type": "ENUM"}], "method": "POST"}],
	  "relevant APIs": [["T", "a b"], ["T"]]}]`))
	f.Add([]byte(`{"tool_name": "", "api_list": [{"name": ""}, {"name": "x", "required_parameters": null, "optional_parameters": {}}]}`))
	f.Add([]byte("\ufeff[]"))
	f.Add([]byte(`{"api_list": [{"name": "a", "required_parameters": [{"name": "p", "type": "ARRAY", "default": [1]}]}, {"name": "a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "Data")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "tool.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Load(path)
		lc, _, lerr := LoadCollection(CollectionOptions{}, path)
		if (err == nil) != (lerr == nil) || err != nil && err.Error() != lerr.Error() {
			t.Fatalf("Load: %v; LoadCollection: %v", err, lerr)
		}
		if err != nil {
			return
		}
		c := NewCollection(src.Docs, CollectionOptions{})
		if len(lc.Tools) != len(c.Tools) {
			t.Fatalf("LoadCollection made %d tools, NewCollection %d", len(lc.Tools), len(c.Tools))
		}
		for i := range c.Tools {
			got, _ := json.Marshal(lc.Tools[i])
			want, _ := json.Marshal(c.Tools[i])
			if string(got) != string(want) {
				t.Fatalf("tool %d: LoadCollection made\n%s\nNewCollection made\n%s", i, got, want)
			}
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("the docs read build an invalid collection: %v", err)
		}
		for _, task := range src.Tasks(c) {
			for _, name := range task.Tools {
				if c.Tool(name) == nil {
					t.Fatalf("task %s offers %q, which the collection does not hold", task.ID, name)
				}
			}
		}
	})
}

// FuzzReadCache reads any file at a cache path of StableToolBench's
// layout: no panic; every record it hands over has a JSON response and
// arguments that canonicalize, and a file that does not parse is a
// problem, not an error of the whole read.
func FuzzReadCache(f *testing.F) {
	for _, s := range []string{
		`{"{'city': 'Paris'}": {"error": "", "response": "{\"t\": 21}"}}`,
		`{"{'a': [1, 2.5, True, None, (3,)]}": {"error": "x", "response": {"p": NaN}}, "not python": {"response": 1}}`,
		`{"{}": {}}`, `{"{'k': 1}": null}`, `[]`, `{`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		tool := filepath.Join(dir, "Data", "skylark_for_data")
		if err := os.MkdirAll(tool, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tool, "forecast.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		files, problems, err := ReadCache(dir, func(r *CacheRecord) error {
			if r.Category == "" || r.Tool == "" || r.API == "" {
				t.Fatalf("a record without its names: %+v", r)
			}
			if r.Response != nil && !json.Valid(r.Response) {
				t.Fatalf("record %q: response %q is not JSON", r.Key, r.Response)
			}
			if _, err := toolenv.Canonical(r.Args); err != nil {
				t.Fatalf("record %q: arguments do not canonicalize: %v", r.Key, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("one bad file failed the whole read: %v", err)
		}
		if files+len(problems) == 0 {
			t.Fatal("the file was neither read nor reported as a problem")
		}
		for _, p := range problems {
			if p.File == "" || p.Err == "" {
				t.Fatalf("a problem that does not say where or what: %+v", p)
			}
		}
	})
}

// FuzzParsePyLiteral parses any text as a Python literal: no panic; what
// it parses from UTF-8 text, written back with PyRepr, parses to the
// same value.
func FuzzParsePyLiteral(f *testing.F) {
	for _, s := range []string{
		`{'city': 'Paris', 'days': 3, 'x': 1.5, 'ok': True, 'n': None, 'l': [1, (2, 3)]}`, `"it's"`, `'\u00e9\n\x00'`, `1e400`, `-0.0`,
		`{'a': {'b': {'c': []}}}`, `{1: 2}`, `'unterminated`, `[1,]`, `0x1f`, `1_000`, `{'k': 'v',}`, `"\ud800"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePyLiteral(s)
		if err != nil {
			return
		}
		want, err := toolenv.Canonical(v)
		if err != nil {
			return // a value JSON cannot hold (the caller reports it)
		}
		if !utf8.ValidString(s) {
			return // no Python text holds a byte that is not UTF-8: PyRepr writes U+FFFD
		}
		repr := PyRepr(v)
		back, err := ParsePyLiteral(repr)
		if err != nil {
			t.Fatalf("%q parsed, written as %q, does not parse: %v", s, repr, err)
		}
		got, err := toolenv.Canonical(back)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%q: %s, written as %q, reads back as %s (%v)", s, want, repr, got, err)
		}
	})
}
