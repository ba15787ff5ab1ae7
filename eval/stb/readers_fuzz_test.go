package stb

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadRawAnswer reads any file as a raw StableToolBench answer: no
// panic; an answer it reads converts (or fails with a message), and a
// converted answer's steps can be listed.
func FuzzReadRawAnswer(f *testing.F) {
	for _, s := range []string{
		`{"win": true, "answer_generation": {"valid_data": true, "query": "q", "final_answer": "{\"return_type\": \"give_answer\", \"final_answer\": \"42\"}",
		  "train_messages": [[{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
		  {"role": "assistant", "content": null, "function_call": {"name": "get_x_for_t", "arguments": "{\"a\": 1}"}},
		  {"role": "function", "name": "get_x_for_t", "content": "{\"error\": \"\", \"response\": \"r\"}"}]]}}`,
		`{"win": false, "try_count": 1, "trys": [{"chain": [{"node_type": "Action", "description": "x", "children": [{"node_type": "Action Input", "description": "{}"}]}]}]}`,
		`{"tree": {"tree": {"node_type": null, "children": [null]}}}`, `{"answer_generation": {"train_messages": [[null]]}}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "7_DFS_woFilter_w2.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadRawAnswer(path)
		if err != nil {
			return
		}
		for _, method := range []string{"DFS_woFilter_w2", "CoT@1"} {
			c, err := Convert(method, a)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("an error without a message")
				}
				continue
			}
			if c == nil {
				t.Fatal("no conversion and no error")
			}
			for _, ca := range []*ConvertedAnswer{&c.Answer} {
				Steps(ca)
				HasFinish(ca)
			}
		}
	})
}

// FuzzReadConverted reads any file as converted answers: no panic; what
// it reads writes and reads back with the same queries in the same
// order.
func FuzzReadConverted(f *testing.F) {
	for _, s := range []string{
		`{"7": {"query": "q", "available_tools": [], "answer": {"method": "DFS", "total_steps": 2, "final_answer": "42",
		  "answer_details": [{"role": "system", "message": "", "next": [{"role": "tool", "message": {"name": "x", "arguments": "{}", "response": "r"}, "next": []}]}]}}}`,
		`{"1": {}, "1": {"query": "again"}, " 2": null}`, `{"3": {"answer": {"answer_details": [null]}}}`, `{}`, `[]`, ``, `{"4": 5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cf, err := ReadConverted(path)
		if err != nil {
			return
		}
		for _, id := range cf.IDs {
			if c := cf.Entries[id]; c != nil {
				Steps(&c.Answer)
				HasFinish(&c.Answer)
			}
		}
		out := filepath.Join(dir, "out.json")
		if err := WriteConverted(out, cf); err != nil {
			t.Fatalf("converted answers that were read do not write: %v", err)
		}
		back, err := ReadConverted(out)
		if err != nil {
			t.Fatalf("converted answers written do not read back: %v", err)
		}
		if len(back.IDs) != len(cf.IDs) {
			t.Fatalf("%d queries, %d after a round trip", len(cf.IDs), len(back.IDs))
		}
		for i := range cf.IDs {
			if back.IDs[i] != cf.IDs[i] {
				t.Fatalf("query %d: %q became %q", i, cf.IDs[i], back.IDs[i])
			}
		}
	})
}
