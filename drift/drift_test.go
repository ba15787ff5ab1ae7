package drift_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
)

func demoLineage(t testing.TB) (*drift.Lineage, []*toolenv.Task) {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	return drift.NewLineage(c), tasks
}

func driftDemo(t *testing.T, dir string, seed uint64) *drift.Drifted {
	t.Helper()
	l, tasks := demoLineage(t)
	d, err := drift.Drift(l, drift.Options{Seed: seed, Tasks: tasks, Rates: highRates})
	if err != nil {
		t.Fatal(err)
	}
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return d
}

// readTree returns every file under dir by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSameSeedSameBytes(t *testing.T) {
	tmp := t.TempDir()
	driftDemo(t, filepath.Join(tmp, "a"), 5)
	driftDemo(t, filepath.Join(tmp, "b"), 5)
	driftDemo(t, filepath.Join(tmp, "c"), 6)
	a, b, c := readTree(t, filepath.Join(tmp, "a")), readTree(t, filepath.Join(tmp, "b")), readTree(t, filepath.Join(tmp, "c"))
	want := []string{"CHANGELOG.md", "base/collection.json", "base/tools.json", "breaking.json", "breaking.md", "collection.json", "manifest.json", "openapi.json", "tasks.jsonl", "tools.json"}
	for _, f := range want {
		if a[f] == nil {
			t.Errorf("%s not written", f)
		}
		if !bytes.Equal(a[f], b[f]) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	if len(a) != len(want) {
		t.Errorf("files: %d, want %d", len(a), len(want))
	}
	if bytes.Equal(a["manifest.json"], c["manifest.json"]) {
		t.Error("another seed gave the same manifest")
	}
}

func TestChainComposes(t *testing.T) {
	tmp := t.TempDir()
	v2 := filepath.Join(tmp, "v2")
	d2 := driftDemo(t, v2, 1)
	c2, err := toolenv.ReadCollection(v2)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := drift.Open(c2)
	if err != nil {
		t.Fatal(err)
	}
	d3, err := drift.Drift(l2, drift.Options{Seed: 2, Rates: highRates})
	if err != nil {
		t.Fatal(err)
	}
	v3 := filepath.Join(tmp, "v3")
	if err := drift.Write(v3, d3, drift.WriteOptions{BaseDir: l2.Base.Dir}); err != nil {
		t.Fatal(err)
	}
	c3, err := toolenv.ReadCollection(v3)
	if err != nil {
		t.Fatal(err)
	}
	l3, err := drift.Open(c3)
	if err != nil {
		t.Fatal(err)
	}
	m := l3.Manifest
	if got := strings.Join(m.Versions(), ","); got != "v1,v2,v3" {
		t.Fatalf("versions %s", got)
	}
	// The v3 manifest is the v2 one followed by the new step.
	second := &drift.Manifest{Format: drift.ManifestFormat, Collection: m.Collection, Kind: m.Kind, BaseVersion: "v2", Version: "v3", Steps: m.Steps[1:]}
	composed, err := drift.Compose(d2.Lineage.Manifest, second)
	if err != nil {
		t.Fatal(err)
	}
	if canonJSONValue(t, composed) != canonJSONValue(t, m) {
		t.Error("Compose(v1→v2, v2→v3) differs from the v3 manifest")
	}
	// v1 documentation can still be shown.
	if c1 := l3.CollectionAt("v1"); c1 == nil || len(c1.Tools) != 6 || c1.Version != "v1" {
		t.Fatalf("CollectionAt(v1): %+v", c1)
	}
	// Every v1 example call goes forward to v3 and back.
	for _, tool := range l3.Base.Tools {
		for _, ex := range tool.Examples {
			name, args, err := m.Forward("v1", tool.Name, ex.Args)
			if err != nil {
				t.Fatal(err)
			}
			if l3.Current.Tool(name) == nil {
				t.Fatalf("%s forwards to %s, not a v3 tool", tool.Name, name)
			}
			_, alts := m.BackwardAlternatives(name, args)
			ok := false
			for _, a := range alts {
				ok = ok || canonJSONValue(t, a) == canonJSONValue(t, ex.Args)
			}
			if !ok {
				t.Errorf("%s %v → %s %v → %v", tool.Name, ex.Args, name, args, alts)
			}
		}
	}
	if len(m.Alignments()) == 0 {
		t.Error("no alignments over two steps")
	}
}

func canonJSONValue(t *testing.T, v any) string {
	t.Helper()
	b, err := toolenv.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBadInputFailsBeforeWriting(t *testing.T) {
	l, _ := demoLineage(t)
	tests := []struct {
		name string
		opts drift.Options
		want string
	}{
		{"unknown operator", drift.Options{Operators: []string{"rename", "shuffle"}}, `unknown operator "shuffle"`},
		{"rate above 1", drift.Options{Rates: map[string]float64{"rename": 1.5}}, "rates are probabilities in [0, 1]"},
		{"negative rate", drift.Options{Rates: map[string]float64{"type": -0.1}}, "rates are probabilities"},
		{"rate of an unknown operator", drift.Options{Rates: map[string]float64{"shuffle": 0.5}}, `unknown operator "shuffle"`},
		{"rate of an operator not run", drift.Options{Operators: []string{"rename"}, Rates: map[string]float64{"type": 0.5}}, "--ops does not run"},
		{"existing version", drift.Options{Version: "v1"}, `version "v1" already exists`},
		{"bad mode", drift.Options{Mode: "loose"}, `mode "loose"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := drift.Drift(l, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestOutputFolderRules(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "v2")
	driftDemo(t, out, 1)
	before := readTree(t, out)
	l, tasks := demoLineage(t)

	// Another seed into the same folder: a clear error, nothing touched.
	d, err := drift.Drift(l, drift.Options{Seed: 2, Tasks: tasks, Rates: highRates})
	if err != nil {
		t.Fatal(err)
	}
	err = drift.Write(out, d, drift.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "already drifted") || !strings.Contains(err.Error(), "seed 1") {
		t.Fatalf("err = %v", err)
	}
	assertSameTree(t, before, readTree(t, out))
	// The same seed again: allowed, and byte-identical.
	d1, _ := drift.Drift(l, drift.Options{Seed: 1, Tasks: tasks, Rates: highRates})
	if err := drift.Write(out, d1, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, before, readTree(t, out))
	// A folder that is not a drifted collection is refused.
	other := filepath.Join(tmp, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if err := drift.Write(other, d, drift.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "not a drifted collection") {
		t.Fatalf("err = %v", err)
	}
	// With --force it is replaced, and no temporary folder is left over.
	if err := drift.Write(other, d, drift.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left over: %s", e.Name())
		}
	}
}

func assertSameTree(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("%s changed", k)
		}
	}
}

// TestManifestMatchesAReencodedCollection: a tools.json whose JSON
// differs only in form (a documented response's keys in another order, as
// another program writes it) is the same collection; comparing encodings
// first must not refuse it.
func TestManifestMatchesAReencodedCollection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "v2")
	driftDemo(t, out, 3)
	c, err := toolenv.ReadCollection(out)
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, tl := range c.Tools {
		if r, ok := reversedKeys(tl.OutputExample); ok {
			tl.OutputExample = r
			changed++
		}
		for i := range tl.Examples {
			if r, ok := reversedKeys(tl.Examples[i].Response); ok {
				tl.Examples[i].Response = r
				changed++
			}
		}
	}
	if changed == 0 {
		t.Fatal("no tool of the drifted demo has an output example or documented response with two keys or more: the test needs one")
	}
	tools := filepath.Join(out, toolenv.ToolsFile)
	before, _ := os.ReadFile(tools)
	if err := toolenv.WriteJSONFile(tools, c.Tools); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(tools); bytes.Equal(before, after) {
		t.Fatal("tools.json was not re-encoded")
	}
	c, err = toolenv.ReadCollection(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drift.Open(c); err != nil {
		t.Fatalf("a re-encoded tools.json was refused: %v", err)
	}
}

// reversedKeys is the JSON object raw with its keys in reverse order; ok is
// false when raw is not an object of two keys or more.
func reversedKeys(raw json.RawMessage) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	type kv struct {
		k string
		v json.RawMessage
	}
	var kvs []kv
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		kvs = append(kvs, kv{tok.(string), v})
	}
	if len(kvs) < 2 {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i := len(kvs) - 1; i >= 0; i-- {
		k, _ := json.Marshal(kvs[i].k)
		b.Write(k)
		b.WriteByte(':')
		b.Write(kvs[i].v)
		if i > 0 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

func TestManifestMustMatchItsCollection(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "v2")
	driftDemo(t, out, 3)
	tools := filepath.Join(out, toolenv.ToolsFile)
	data, _ := os.ReadFile(tools)
	os.WriteFile(tools, bytes.Replace(data, []byte(`"description": "`), []byte(`"description": "Edited. `), 1), 0o644)
	c, err := toolenv.ReadCollection(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drift.Open(c); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("an edited tools.json opened: %v", err)
	}
	// A manifest of another chain is refused too.
	os.WriteFile(tools, data, 0o644)
	mf := filepath.Join(out, drift.ManifestFile)
	m, err := drift.ReadManifest(mf)
	if err != nil {
		t.Fatal(err)
	}
	m.Steps[0].To, m.Version = "v9", "v9"
	m.Write(mf)
	c, _ = toolenv.ReadCollection(out)
	if _, err := drift.Open(c); err == nil || !strings.Contains(err.Error(), `manifest ends at "v9"`) {
		t.Fatalf("err = %v", err)
	}
}
