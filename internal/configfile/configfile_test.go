package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type testConfig struct {
	Store   string        `json:"store" flag:"store" path:"file" default:"cache.db" help:"the store"`
	Sources []string      `json:"sources" flag:"source" path:"file" help:"sources"`
	Named   []string      `json:"named" flag:"named" path:"named" help:"NAME=FILE"`
	IDs     []string      `json:"ids" flag:"id,comma" help:"ids"`
	Demo    bool          `json:"demo" flag:"demo" help:"demo"`
	Timeout time.Duration `json:"timeout" flag:"timeout" default:"2m" help:"timeout"`
	Limit   int           `json:"limit" flag:"limit" default:"10" help:"limit"`
	Big     int64         `json:"big" flag:"big" help:"big"`
	Score   float64       `json:"score" flag:"score" default:"0.5" help:"score"`
	LLM     testLLM       `json:"llm" help:"the model"`
	Hidden  string        `json:"-"`
}

type testLLM struct {
	URL    string `json:"url" flag:"llm-url" help:"endpoint"`
	KeyEnv string `json:"key_env" flag:"llm-key-env" default:"OPENAI_API_KEY" help:"variable of the key"`
	APIKey string `json:"api_key,omitempty" secret:"llm.key_env" help:"the key"`
	Mode   string `json:"mode" flag:"mode" enum:",fast,slow" help:"mode"`
}

func defaults() testConfig {
	var c testConfig
	Defaults(&c)
	return c
}

func TestDefaults(t *testing.T) {
	c := defaults()
	want := testConfig{Store: "cache.db", Timeout: 2 * time.Minute, Limit: 10, Score: 0.5, LLM: testLLM{KeyEnv: "OPENAI_API_KEY"}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestDecodeValid(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "petstore.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		check     func(c testConfig) bool
		set       []string
	}{
		{"yaml", "store: s.db\nsources: [a, /abs/b, 'http://x/y']\ntimeout: 90s\nlimit: 0x10\nscore: 1\nllm:\n  url: http://m/v1\n  mode: fast\n",
			func(c testConfig) bool {
				return c.Store == filepath.Join(dir, "s.db") && reflect.DeepEqual(c.Sources, []string{filepath.Join(dir, "a"), "/abs/b", "http://x/y"}) &&
					c.Timeout == 90*time.Second && c.Limit == 16 && c.Score == 1 && c.LLM.URL == "http://m/v1" && c.LLM.Mode == "fast" &&
					c.LLM.KeyEnv == "OPENAI_API_KEY" && !c.Demo
			}, []string{"store", "sources", "timeout", "limit", "score", "llm.url", "llm.mode"}},
		{"json with tabs", "{\n\t\"$schema\": \"toolenv.schema.json\",\n\t\"demo\": true,\n\t\"big\": 9007199254740993,\n\t\"llm\": {\"key_env\": \"MY_KEY\"}\n}",
			func(c testConfig) bool {
				return c.Demo && c.Big == 9007199254740993 && c.LLM.KeyEnv == "MY_KEY" && c.Store == "cache.db"
			},
			[]string{"demo", "big", "llm.key_env"}},
		{"null resets", "store: null\ntimeout: 0\nllm:\n", func(c testConfig) bool { return c.Store == "" && c.Timeout == 0 }, []string{"store", "timeout"}},
		{"memory store and inline JSON stay", "store: ':memory:'\nsources: ['{\"a\":1}']\n", func(c testConfig) bool {
			return c.Store == ":memory:" && c.Sources[0] == `{"a":1}`
		}, []string{"store", "sources"}},
		{"named paths", "named: [petstore.yaml, 'books=lib.json', 'x=/abs.json']\n", func(c testConfig) bool {
			return reflect.DeepEqual(c.Named, []string{filepath.Join(dir, "petstore.yaml"), "books=" + filepath.Join(dir, "lib.json"), "x=/abs.json"})
		}, []string{"named"}},
		{"anchors", "sources: &s [a]\nnamed: *s\n", func(c testConfig) bool { return len(c.Named) == 1 }, []string{"sources", "named"}},
		{"empty file", "", func(c testConfig) bool { return reflect.DeepEqual(c, defaults()) }, nil},
		{"comments only", "# nothing yet\n", func(c testConfig) bool { return reflect.DeepEqual(c, defaults()) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults()
			f, err := Decode([]byte(tc.src), "t.yaml", dir, &c)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("decoded %+v", c)
			}
			if len(f.Set) != len(tc.set) {
				t.Errorf("set %v, want %v", f.Set, tc.set)
			}
			for _, k := range tc.set {
				if !f.Set[k] {
					t.Errorf("%s not marked set (%v)", k, f.Set)
				}
			}
		})
	}
}

// TestDecodeInvalid: every bad file is an error naming the file, line and
// key and saying what to write instead, and leaves the configuration as
// it was.
func TestDecodeInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"unknown key", "stor: x.db\n", []string{"t.yaml:1:1: stor: unknown key (did you mean store?"}},
		{"unknown nested key", "llm:\n  ulr: x\n", []string{"t.yaml:2:3: llm.ulr: unknown key (did you mean llm.url?"}},
		{"flag name as key", "llm-key-env: X\n", []string{"llm-key-env: unknown key (did you mean llm.key_env? it is what --llm-key-env sets)"}},
		{"key at the wrong level", "key_env: X\n", []string{"key_env: unknown key (did you mean llm.key_env?"}},
		{"nothing near", "zzzzzz: 1\n", []string{"zzzzzz: unknown key (valid here: store, sources"}},
		{"string for a list", "sources: a\n", []string{"t.yaml:1:10: sources: want a list of strings", `not the string "a"`}},
		{"number for a string", "store: 1.5\n", []string{"store: want a string, not the number 1.5 (quote it"}},
		{"string for a bool", "demo: yes\n", []string{"demo: want true or false, not the string \"yes\""}},
		{"bad duration", "timeout: soon\n", []string{`timeout: "soon" is not a duration`}},
		{"duration without unit", "timeout: 30\n", []string{"timeout: want a duration with a unit"}},
		{"negative duration", "timeout: -1s\n", []string{"is not a duration"}},
		{"float for an int", "limit: 1.5\n", []string{"limit: want a whole number, not the number 1.5"}},
		{"int overflow", "big: 99999999999999999999\n", []string{"big: want a whole number"}},
		{"not a number", "score: .nan\n", []string{"score: want a number"}},
		{"enum", "llm:\n  mode: fats\n", []string{`llm.mode: "fats" is not one of`, "did you mean fast?"}},
		{"list in a section's place", "llm: [a]\n", []string{"llm: is a section"}},
		{"mapping for a leaf", "store: {a: 1}\n", []string{"store: want a string, not a mapping"}},
		{"list of non-strings", "sources: [1, 2]\n", []string{"sources: want a string, not the number 1"}},
		{"top level list", "- a\n", []string{"the file must be a mapping"}},
		{"duplicate", "store: a\nstore: b\n", []string{"t.yaml:2:1: store: appears twice (first on line 1)"}},
		{"syntax", "store: [a\n", []string{"t.yaml: not valid YAML or JSON"}},
		{"json syntax", "{\"store\": \"a\",}", []string{"t.yaml:1:16: not valid JSON: invalid character"}},
		{"merge key", "llm:\n  <<: {url: x}\n", []string{"merge keys"}},
		{"several problems at once", "stor: a\ndemo: 1\n", []string{"stor: unknown key", "demo: want true or false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults()
			_, err := Decode([]byte(tc.src), "t.yaml", "/cfg", &c)
			if err == nil {
				t.Fatalf("no error; decoded %+v", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Errorf("%T is not a *Error", err)
			}
			if !reflect.DeepEqual(c, defaults()) {
				t.Errorf("the configuration changed on error: %+v", c)
			}
		})
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	c := defaults()
	if _, err := Load(filepath.Join(dir, "none.yaml"), &c); !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "none.yaml does not exist") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(dir, &c); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("folder: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#"), MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, &c); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("big file: %v", err)
	}
	sub := filepath.Join(dir, "conf")
	os.Mkdir(sub, 0o755)
	p := filepath.Join(sub, "t.yaml")
	os.WriteFile(p, []byte("store: ../s.db\n"), 0o644)
	if _, err := Load(p, &c); err != nil || c.Store != filepath.Join(dir, "s.db") {
		t.Errorf("relative path: %q %v", c.Store, err)
	}
}

func TestInlineSecretWarns(t *testing.T) {
	c := defaults()
	f, err := Decode([]byte("llm:\n  url: http://m\n  api_key: sk-123456\n"), "t.yaml", "", &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.APIKey != "sk-123456" {
		t.Errorf("the inline key is not used: %q", c.LLM.APIKey)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "t.yaml:3: llm.api_key holds a credential written inline") ||
		!strings.Contains(f.Warnings[0], "llm.key_env: NAME") || strings.Contains(f.Warnings[0], "sk-123456") {
		t.Errorf("warnings %q", f.Warnings)
	}
	for _, format := range []string{"yaml", "json"} {
		out, err := Marshal(&c, format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "sk-123456") || !strings.Contains(string(out), "hidden") || !strings.Contains(string(out), "OPENAI_API_KEY") {
			t.Errorf("%s print shows the secret or not its variable:\n%s", format, out)
		}
	}
}

func TestPrintRoundTrip(t *testing.T) {
	c := defaults()
	c.Sources = []string{"/a", "/b"}
	c.LLM.Mode = "slow"
	c.Store = "postgres://u:pw@h/db"
	for _, format := range []string{"yaml", "json"} {
		out, err := Marshal(&c, format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), ":pw@") {
			t.Errorf("%s: the URL's password is printed:\n%s", format, out)
		}
		back := defaults()
		if _, err := Decode(out, "printed", "", &back); err != nil {
			t.Fatalf("%s: the printed configuration does not load: %v\n%s", format, err, out)
		}
		back.Store = c.Store
		if !reflect.DeepEqual(back, c) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", format, back, c)
		}
	}
	out, _ := Marshal(&c, "yaml")
	if !strings.HasPrefix(string(out), "store: postgres://u:xxxxx@h/db\nsources:\n  - /a\n") || !strings.Contains(string(out), "timeout: 2m0s\n") {
		t.Errorf("yaml:\n%s", out)
	}
}

func TestFlagsOverrideFile(t *testing.T) {
	def := defaults()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	b := Bind(fs, &def, BindOptions{Skip: []string{"big"}, Rename: map[string]string{"llm.mode": "llm-mode"}})
	if fs.Lookup("big") != nil || fs.Lookup("mode") != nil || fs.Lookup("llm-mode") == nil || fs.Lookup("hidden") != nil {
		t.Fatal("skip/rename not applied")
	}
	if got := fs.Lookup("timeout").DefValue; got != "2m0s" {
		t.Errorf("timeout flag default %q", got)
	}
	if err := fs.Parse([]string{"--store", "flag.db", "--source", "x", "--source", "y", "--id", "a,b", "--demo", "--limit", "3"}); err != nil {
		t.Fatal(err)
	}
	c := defaults()
	f, err := Decode([]byte("store: file.db\nlimit: 3\nscore: 0.9\nsources: [z]\n"), "t.yaml", "", &c)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.Apply(&c, f, log)
	if c.Store != "flag.db" || !reflect.DeepEqual(c.Sources, []string{"x", "y"}) || !reflect.DeepEqual(c.IDs, []string{"a", "b"}) ||
		!c.Demo || c.Score != 0.9 || c.Limit != 3 || c.Timeout != 2*time.Minute {
		t.Errorf("applied %+v", c)
	}
	l := logs.String()
	if !strings.Contains(l, "level=DEBUG") || !strings.Contains(l, "flag=--store key=store") || !strings.Contains(l, "file_value=file.db flag_value=flag.db") ||
		!strings.Contains(l, "flag=--source") || strings.Contains(l, "flag=--limit") || strings.Contains(l, "flag=--demo") {
		t.Errorf("logs:\n%s", l)
	}
	// The flags' values are their own: changing the result does not
	// change them.
	c.Sources[0] = "changed"
	c2 := defaults()
	b.Apply(&c2, nil, nil)
	if c2.Sources[0] != "x" {
		t.Errorf("Apply shares the flag's slice")
	}
}

func TestSchema(t *testing.T) {
	out, err := Schema(&testConfig{}, "id", "title")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	if s["additionalProperties"] != false || props["timeout"].(map[string]any)["pattern"] == nil ||
		props["limit"].(map[string]any)["default"] != 10.0 || props["score"].(map[string]any)["default"] != 0.5 {
		t.Errorf("schema %s", out)
	}
	llm := props["llm"].(map[string]any)
	if llm["description"] != "the model" || llm["additionalProperties"] != false {
		t.Errorf("llm %v", llm)
	}
	mode := llm["properties"].(map[string]any)["mode"].(map[string]any)
	if !reflect.DeepEqual(mode["enum"], []any{"", "fast", "slow"}) || mode["description"] != "mode (flag --mode)" {
		t.Errorf("mode %v", mode)
	}
	if strings.Contains(string(out), `\u003c`) {
		t.Error("HTML-escaped")
	}
}

func TestOption(t *testing.T) {
	if got := Option(&testConfig{}, "llm.url"); got != "llm.url (--llm-url)" {
		t.Error(got)
	}
	if got := Option(&testConfig{}, "llm.api_key"); got != "llm.api_key" {
		t.Error(got)
	}
}

type badConfig struct {
	M map[string]string `json:"m"`
}

func TestUnsupportedTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a map field")
		}
	}()
	Fields(&badConfig{})
}

// TestUnsignedAndShorthand checks uint64 fields (seeds) in files, flags
// and the schema, and a flag's one-letter shorthand.
func TestUnsignedAndShorthand(t *testing.T) {
	type cfg struct {
		Seed uint64 `json:"seed" flag:"seed" default:"7" help:"seed"`
		Top  int    `json:"top" flag:"top" short:"k" default:"10" help:"results"`
	}
	var def cfg
	Defaults(&def)
	if def.Seed != 7 || def.Top != 10 {
		t.Fatalf("defaults %+v", def)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	b := Bind(fs, &def, BindOptions{})
	if err := fs.Parse([]string{"-k", "3", "--seed", "18446744073709551615"}); err != nil {
		t.Fatal(err)
	}
	var c cfg
	b.Apply(&c, nil, nil)
	if c.Top != 3 || c.Seed != 18446744073709551615 {
		t.Fatalf("flags applied: %+v", c)
	}
	if _, err := Decode([]byte("seed: -1\n"), "t.yaml", "", &c); err == nil || !strings.Contains(err.Error(), "0 or more") {
		t.Fatalf("negative seed: %v", err)
	}
	if _, err := Decode([]byte("seed: 42\n"), "t.yaml", "", &c); err != nil || c.Seed != 42 {
		t.Fatalf("seed from a file: %v %d", err, c.Seed)
	}
	s, err := Schema(&cfg{}, "id", "title")
	if err != nil || !strings.Contains(string(s), `"minimum": 0`) {
		t.Fatalf("schema: %v\n%s", err, s)
	}
}
