package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/configfile"
)

// TestConfigPrint: config print shows defaults, then the file, then the
// flags given; a flag that disagrees with the file wins and says so at
// debug level; relative paths in the file resolve against its folder.
func TestConfigPrint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "toolenv.yaml")
	os.WriteFile(file, []byte("store: cache.db\ncollections: [out/bird/rest]\ndrift:\n  mode: compat\nsimulator:\n  timeout: 30s\n"), 0o644)
	code, out, errs := run(t, context.Background(), "config", "print", "--config", file, "--drift-mode", "strict", "--log-level", "debug")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"store: " + filepath.Join(dir, "cache.db") + "\n",
		"collections:\n  - " + filepath.Join(dir, "out/bird/rest") + "\n",
		"drift:\n  mode: strict\n",
		"  timeout: 30s\n",
		"key_env: OPENAI_API_KEY\n",
		"addr: 127.0.0.1:8080\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "level=DEBUG") || !strings.Contains(errs, "flag=--drift-mode key=drift.mode") || !strings.Contains(errs, "file_value=compat flag_value=strict") {
		t.Errorf("no debug line for the override:\n%s", errs)
	}
	// The printed configuration is a configuration file that gives the
	// same configuration.
	printed := filepath.Join(dir, "printed.json")
	_, js, _ := run(t, context.Background(), "config", "print", "--config", file, "--drift-mode", "strict", "--format", "json")
	os.WriteFile(printed, []byte(js), 0o644)
	if code, again, errs := run(t, context.Background(), "config", "print", "--config", printed); code != 0 || again != out {
		t.Errorf("exit %d %s; printed JSON loads to\n%s\nwant\n%s", code, errs, again, out)
	}
}

// TestConfigBadFiles: every bad file stops the command before it does
// anything, with an exit code and a message saying what to fix.
func TestConfigBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"serve", "--config", filepath.Join(dir, "none.yaml")}, 3, []string{"none.yaml does not exist"}},
		{[]string{"serve", "--config", write("a.yaml", "colections: [x]\n")}, 2, []string{"a.yaml:1:1: colections: unknown key (did you mean collections?"}},
		{[]string{"mcp", "--config", write("b.yaml", "drift:\n  mode: lenient\n")}, 2, []string{`drift.mode: "lenient" is not one of`}},
		{[]string{"eval", "--config", write("c.json", `{"timeout": 30}`), "--tasks", ".", "--out", dir}, 2, []string{"c.json:1:13: timeout: want a duration with a unit"}},
		{[]string{"config", "print", "--config", write("d.yaml", "llm-url: http://x\n")}, 2, []string{"did you mean simulator.url? it is what --llm-url sets"}},
		{[]string{"config", "print", "--format", "toml"}, 2, []string{"--format"}},
	} {
		code, _, errs := run(t, context.Background(), tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errs, w)
			}
		}
	}
}

// TestConfigInlineSecret: a key written into the file is used, with a
// warning that names the variable form; config print never shows it.
func TestConfigInlineSecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(file, []byte("simulator:\n  url: http://127.0.0.1:9/v1\n  model: m\n  api_key: sk-secret-value\n"), 0o644)
	code, out, errs := run(t, context.Background(), "config", "print", "--config", file)
	if code != 0 || strings.Contains(out+errs, "sk-secret-value") {
		t.Fatalf("exit %d; the secret is shown:\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "level=WARN") || !strings.Contains(errs, "simulator.api_key holds a credential written inline") || !strings.Contains(errs, "simulator.key_env: NAME") {
		t.Errorf("no warning naming the variable form:\n%s", errs)
	}
}

var update = flag.Bool("update", false, "rewrite docs/toolenv.schema.json and the key reference of docs/config.md")

// TestConfigSchema: docs/toolenv.schema.json is what config schema prints
// (generated from the configuration structs), and docs/config.md's table
// of keys is generated from them too; -update rewrites both.
func TestConfigSchema(t *testing.T) {
	code, out, _ := run(t, context.Background(), "config", "schema")
	const path = "../../docs/toolenv.schema.json"
	if *update {
		os.WriteFile(path, []byte(out), 0o644)
	}
	want, err := os.ReadFile(path)
	if code != 0 || err != nil || out != string(want) {
		t.Errorf("exit %d, %v; %s is out of date: go test ./cmd/toolenv -run TestConfigSchema -update", code, err, path)
	}
	var s struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil || s.Properties["eval"].Properties["agent"] == nil || s.Properties["simulator"].Properties["url"] == nil {
		t.Errorf("schema lacks keys: %v", err)
	}

	const doc = "../../docs/config.md"
	md, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- reference: generated by go test ./cmd/toolenv -run TestConfigSchema -update -->\n", "<!-- end of reference -->"
	i, j := strings.Index(string(md), begin), strings.Index(string(md), end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the reference markers", doc)
	}
	ref := string(md[:i+len(begin)]) + configfile.Reference(&harness.File{}) + string(md[j:])
	if *update {
		os.WriteFile(doc, []byte(ref), 0o644)
	} else if string(md) != ref {
		t.Errorf("%s's table of keys is out of date: go test ./cmd/toolenv -run TestConfigSchema -update", doc)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, context.Background(), "version")
	if code != 0 || !strings.HasPrefix(out, "toolenv ") || !strings.Contains(out, " go1.") {
		t.Errorf("exit %d: %q", code, out)
	}
	// --version, the flag a reader tries first, prints the same line
	code, flag, _ := run(t, context.Background(), "--version")
	if code != 0 || flag != out {
		t.Errorf("--version: exit %d: %q, want %q", code, flag, out)
	}
	code, out, _ = run(t, context.Background(), "version", "--json")
	if code != 0 || !strings.Contains(out, `"version": "`) || !strings.Contains(out, `"go": "go1.`) {
		t.Errorf("exit %d: %q", code, out)
	}
}

// TestResultsRecordVersionAndConfig: the build report, the drift manifest
// and the evaluation summary each say which toolenv made them and with
// which configuration.
func TestResultsRecordVersionAndConfig(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	type prov struct {
		Provenance *struct {
			Version string         `json:"version"`
			Go      string         `json:"go"`
			Command []string       `json:"command"`
			Config  map[string]any `json:"config"`
		} `json:"provenance"`
	}
	read := func(path string) prov {
		t.Helper()
		var p prov
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if p.Provenance == nil || p.Provenance.Version == "" || p.Provenance.Config == nil {
			t.Fatalf("%s records no provenance: %.300s", path, b)
		}
		return p
	}
	bird := builtBird(t)
	if p := read(filepath.Join(bird, "report.json")); p.Provenance.Config["data"] == "" || !strings.HasPrefix(p.Provenance.Go, "go1.") {
		t.Errorf("build report provenance %+v", p.Provenance)
	}
	v2 := filepath.Join(dir, "demo-v2")
	if code, _, errs := run(t, ctx, "drift", "--demo", "--out", v2, "--seed", "3"); code != 0 {
		t.Fatal(errs)
	}
	var m struct{ Steps []prov }
	b, _ := os.ReadFile(filepath.Join(v2, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil || len(m.Steps) != 1 || m.Steps[0].Provenance == nil || m.Steps[0].Provenance.Config["seed"] != 3.0 {
		t.Errorf("manifest step provenance: %v %.400s", err, b)
	}
	cfg := filepath.Join(dir, "env.yaml")
	os.WriteFile(cfg, []byte("store: ':memory:'\nfeedback: helpful\nsimulator:\n  api_key: sk-never-recorded\neval:\n  agent: react\n  out: run\n"), 0o644)
	out := filepath.Join(dir, "run")
	// The file's eval section sets the output folder; a flag overrides
	// its agent.
	if code, _, errs := run(t, ctx, "eval", "--config", cfg, "--env", v2, "--agent", "oracle", "--log-level", "error"); code != 0 {
		t.Fatalf("eval: %s", errs)
	}
	p := read(filepath.Join(out, "summary.json"))
	ev, _ := p.Provenance.Config["eval"].(map[string]any)
	if p.Provenance.Config["feedback"] != "helpful" || p.Provenance.Config["store"] != ":memory:" || ev["agent"] != "oracle" || ev["out"] != "" {
		t.Errorf("summary provenance config %v", p.Provenance.Config)
	}
	for _, f := range []string{"summary.json", "run.json", "report.md", "report.html"} {
		if b, _ := os.ReadFile(filepath.Join(out, f)); strings.Contains(string(b), "sk-never-recorded") {
			t.Errorf("%s records the inline key", f)
		}
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), ", toolenv `") {
		t.Errorf("report.md does not name the toolenv version")
	}
}

// TestExampleConfigs: every configuration in examples/ loads without a
// problem or a warning. Every *.yaml and *.json at the top of examples/
// is a configuration (examples/README.md: other files, such as OpenAPI
// documents and probe files, live in subfolders), except the faults
// files a configuration names.
func TestExampleConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	more, _ := filepath.Glob("../../examples/*.json")
	n := 0
	for _, f := range append(files, more...) {
		if strings.Contains(f, "faults") {
			continue
		}
		n++
		if code, _, errs := run(t, context.Background(), "config", "print", "--config", f); code != 0 || errs != "" {
			t.Errorf("%s: exit %d: %s", f, code, errs)
		}
	}
	if n < 4 {
		t.Errorf("%d example configurations", n)
	}
}

// TestMoreResultsRecordVersion: the fidelity summary and the bench
// report say which toolenv made them, with which configuration.
func TestMoreResultsRecordVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pairs := filepath.Join(dir, "pairs.jsonl")
	os.WriteFile(pairs, []byte(`{"tool": "get_book", "args": {"isbn": "9780553293357"}, "response": {"isbn": "9780553293357", "title": "Foundation"}}`+"\n"), 0o644)
	out := filepath.Join(dir, "fidelity")
	if code, _, errs := run(t, ctx, "eval", "fidelity", "--demo", "--store", ":memory:", "--pairs", pairs, "--out", out); code != 0 {
		t.Fatalf("fidelity: %s", errs)
	}
	benchOut := filepath.Join(dir, "bench.json")
	if code, _, errs := run(t, ctx, "bench", "--duration", "1s", "--rounds", "1", "--warmup", "10ms", "--connections", "1", "--json", benchOut); code != 0 {
		t.Fatalf("bench: %s", errs)
	}
	for _, f := range []string{filepath.Join(out, "summary.json"), benchOut} {
		var p struct {
			Provenance *struct {
				Version string `json:"version"`
				Go      string `json:"go"`
				Config  any    `json:"config"`
			} `json:"provenance"`
		}
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &p); err != nil || p.Provenance == nil || p.Provenance.Version == "" || !strings.HasPrefix(p.Provenance.Go, "go1.") || p.Provenance.Config == nil {
			t.Errorf("%s records no provenance: %v %.300s", f, err, b)
		}
	}
}
