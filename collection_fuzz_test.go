package toolenv

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"testing/fstest"
)

// FuzzReadCollection reads any collection.json and tools.json: it never
// panics; a collection it returns is valid, and written out and read
// again it has the same name and tools.
func FuzzReadCollection(f *testing.F) {
	coll, _ := os.ReadFile("demo/collection/collection.json")
	tools, _ := os.ReadFile("demo/collection/tools.json")
	f.Add(coll, tools)
	f.Add([]byte(`{"name": "c", "kind": "openapi"}`), []byte(`[{"name": "t", "input": {"type": "object", "properties": {"a": {"$ref": "#/x"}}}}]`))
	f.Add([]byte(`{"name": "c", "kind": "openapi"}`), []byte(`[{"name": "t"}, {"name": "t"}]`))
	f.Add([]byte(`{"name": ""}`), []byte(`[]`))
	f.Add([]byte(`{"name": "c", "kind": "x", "backend": {"type": "sqlite"}}`), []byte(`[{"name": "t", "input": {"type": ["object", "null"]}, "output_example": {"a": 1}}]`))
	f.Fuzz(func(t *testing.T, coll, tools []byte) {
		c, err := ReadCollectionFS(fstest.MapFS{CollectionFile: {Data: coll}, ToolsFile: {Data: tools}}, ".")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("read an invalid collection: %v", err)
		}
		dir := t.TempDir()
		if err := WriteCollection(dir, c); err != nil {
			t.Fatalf("a collection that was read does not write: %v", err)
		}
		back, err := ReadCollection(dir)
		if err != nil {
			t.Fatalf("a collection written does not read back: %v", err)
		}
		if back.Name != c.Name || len(back.Tools) != len(c.Tools) {
			t.Fatalf("round trip: %s with %d tools, back %s with %d", c.Name, len(c.Tools), back.Name, len(back.Tools))
		}
		for i := range c.Tools {
			if back.Tools[i].Name != c.Tools[i].Name {
				t.Fatalf("tool %d: %q became %q", i, c.Tools[i].Name, back.Tools[i].Name)
			}
		}
	})
}

// FuzzParseTasks parses any JSONL as tasks: no panic; a broken line is an
// error naming it; the tasks accepted, written and parsed again, are the
// same tasks.
func FuzzParseTasks(f *testing.F) {
	tasks, _ := os.ReadFile("demo/collection/tasks.jsonl")
	f.Add(tasks)
	for _, s := range []string{
		`{"id": "1", "query": "q", "gold": [{"tool": "t", "args": {"a": 1}, "label": "$x$"}]}` + "\n\n" + `{"id": "2", "query": "r"}`,
		`{"id": "1"` + "\n", "\xef\xbb\xbf{\"id\": \"b\"}\r\n", `[]`, `{"id": 1}`, "{}\n{}\n", `{"id": "x", "tools": null, "answer": "\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseTasks(data, "fuzz.jsonl")
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte("fuzz.jsonl")) {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		var b bytes.Buffer
		for _, task := range got {
			line, err := json.Marshal(task)
			if err != nil {
				t.Fatalf("task %q does not marshal: %v", task.ID, err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		again, err := ParseTasks(b.Bytes(), "again.jsonl")
		if err != nil {
			t.Fatalf("written tasks do not parse: %v", err)
		}
		if len(again) != len(got) {
			t.Fatalf("%d tasks, %d after a round trip", len(got), len(again))
		}
		for i := range got {
			if again[i].ID != got[i].ID || again[i].Query != got[i].Query {
				t.Fatalf("task %d: %q %q became %q %q", i, got[i].ID, got[i].Query, again[i].ID, again[i].Query)
			}
		}
	})
}
