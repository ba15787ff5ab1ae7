package toolenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCollectionWriteReadRoundTrip(t *testing.T) {
	in := ObjectSchema()
	in.SetProp("city", &Schema{Type: "string", Description: "City name"})
	in.Required = []string{"city"}
	c := NewCollection("demo", "demo", []*Tool{{Name: "get_weather", Title: "Get weather", Input: in}})
	c.Policy = Policy{Validation: ValidationStrict, Cache: true}
	dir := t.TempDir()
	if err := WriteCollection(dir, c); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, ToolsFile))
	got, err := ReadCollection(dir)
	if err != nil {
		t.Fatal(err)
	}
	tool := got.Tool("get_weather")
	if tool == nil || tool.ID != "demo/get_weather" || !tool.Input.IsRequired("city") {
		t.Fatalf("tool = %+v", tool)
	}
	if got.Policy.Validation != ValidationStrict || !got.Policy.Cache {
		t.Fatalf("policy = %+v", got.Policy)
	}
	if err := WriteCollection(dir, got); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(dir, ToolsFile))
	if string(first) != string(second) {
		t.Fatalf("write is not deterministic:\n%s\n%s", first, second)
	}
}

func TestCollectionValidate(t *testing.T) {
	c := NewCollection("c", "demo", []*Tool{{Name: "a"}, {Name: "a"}, {Name: ""}, {Name: "b", Input: &Schema{Type: "string"}}})
	err := c.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{`"a" is used twice`, "has no name", "must be an object"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestValidateAfterChanges: a collection validated once indexed (where
// the index vouches for unique names) is checked in full again once a
// tool is renamed, replaced, added or removed without Reindex.
func TestValidateAfterChanges(t *testing.T) {
	fresh := func() *Collection {
		return NewCollection("c", "demo", []*Tool{{Name: "a"}, {Name: "b"}, {Name: "c"}})
	}
	if err := fresh().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(c *Collection){
		"renamed":        func(c *Collection) { c.Tools[1].Name = "a" },
		"replaced":       func(c *Collection) { c.Tools[2] = &Tool{Name: "a"} },
		"added":          func(c *Collection) { c.Tools = append(c.Tools, &Tool{Name: "b"}) },
		"removed, added": func(c *Collection) { c.Tools = append(c.Tools[:2], &Tool{Name: "a"}) },
		"renamed back and forth": func(c *Collection) {
			c.Tools[0].Name, c.Tools[1].Name = "b", "b"
		},
	} {
		c := fresh()
		change(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "is used twice") {
			t.Errorf("%s: Validate() = %v, want a name used twice", name, err)
		}
	}
	c := fresh()
	c.Tools = append(c.Tools, nil)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "tool 3 is null") {
		t.Errorf("a null tool: Validate() = %v", err)
	}
}

func TestReadTasksSkipsBrokenLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	data := `{"id":"1","query":"q1","gold":[{"name":"f","arguments":{"n":5},"label":"$var1"}]}
{not json
{"id":"3","query":"q3"}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	tasks, problems, err := ReadTasks(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || len(problems) != 1 || !strings.Contains(problems[0].Error(), ":2:") {
		t.Fatalf("tasks=%d problems=%v", len(tasks), problems)
	}
	if n, ok := tasks[0].Gold[0].Args["n"].(json.Number); !ok || n != "5" {
		t.Fatalf("number not kept exactly: %#v", tasks[0].Gold[0].Args["n"])
	}
}

// TestWriteFileAtomicMode checks that atomically written files (collection
// folders, exported caches, reports) get the mode os.WriteFile(0o644) would
// give them, not the owner-only mode of a temporary file, so that other
// users and containers can read what toolenv wrote.
func TestWriteFileAtomicMode(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	if err := os.WriteFile(ref, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(ref)
	want := st.Mode().Perm()
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"WriteFileAtomic", func(p string) error { return WriteFileAtomic(p, []byte("x")) }},
		{"WriteJSONFile", func(p string) error { return WriteJSONFile(p, map[string]int{"a": 1}) }},
		{"WriteTasks", func(p string) error { return WriteTasks(p, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if err := tt.write(p); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Fatalf("mode %v, want %v", got, want)
			}
		})
	}
}

func TestToolNameFallbacks(t *testing.T) {
	tests := []struct {
		tool              Tool
		title, groupOrCol string
	}{
		{Tool{Name: "f", Title: "Get F", Collection: "c", Group: "G"}, "Get F", "G"},
		{Tool{Name: "f", Collection: "c"}, "f", "c"},
	}
	for _, tt := range tests {
		if got := tt.tool.TitleOrName(); got != tt.title {
			t.Errorf("TitleOrName = %q, want %q", got, tt.title)
		}
		if got := tt.tool.GroupOrCollection(); got != tt.groupOrCol {
			t.Errorf("GroupOrCollection = %q, want %q", got, tt.groupOrCol)
		}
	}
}
