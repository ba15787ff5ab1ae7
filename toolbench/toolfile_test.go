package toolbench_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/toolbench"
)

var toolFileCases = []string{
	`{"tool_name": "T", "tool_description": "d", "host": "h", "api_list": [{"name": "a", "url": "https://h/a", "description": "x", "method": "GET",
	  "required_parameters": [{"name": "p", "type": "STRING", "description": "q", "default": "v"}], "optional_parameters": [], "template_response": {"a": [1, "x"]}}]}`,
	`{"tool_name": "T", "api_list": []}`,
	`{"tool_name": "T", "api_list": null}`,
	`{}`,
	`{"tool_name": "tab\there \u00e9 \/ \"q\" \ud800", "api_list": []}`,
	`{"tool_name": "a", "tool_name": "b", "api_list": []}`,
	`{"TOOL_NAME": "a", "api_list": []}`,
	`{"Tool_Name": "a", "api_list": []}`,
	`{"tool_name": 7, "api_list": []}`,
	`{"tool_name": "t", "x": {"y": [1, 2, {"z": null, "ü": "\u00fc"}], "n": -0.5e-3}, "api_list": [{"name": "n", "extra": 1, "code": "x\ny"}]}`,
	`{"tool_name": "t", "api_list": [{"name": "n", "required_parameters": [
		{"name": "a", "default": 1e400}, {"name": "b", "default": -0.5E-3}, {"name": "c", "default": [1]},
		{"name": "d", "default": true}, {"name": "e", "default": null}, {"name": "f", "default": 12345678901234567890}, {"name": "g", "default": false}]}]}`,
	`{"tool_name": "t", "api_list": [{"name": "n", "template_response": null}]}`,
	`{"tool_name": "t", "api_list": [{"name": "n", "template_response": "s"}, {"name": "m", "template_response": 01}]}`,
	`{"tool_name": "t", "api_list": []} x`,
	`{"tool_name": "t", "api_list": [] `,
	`{"tool_name": "t", "api_list": [{"name": "a", "name": "b"}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "required_parameters": {}}]}`,
	"{\"tool_name\": \"bad \xff byte\", \"api_list\": []}",
	"{\"tool_name\": \"raw\ttab\", \"api_list\": []}",
	`{"tool_name": "t", "api_list": [1]}`,
	`{"tool_name": "t","api_list":[{"name":"a","template_response":{"k":[true,false,null,{"":""}]}}],"z":[[[[]]]]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": {"a": 1,}}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": tru}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": -}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": 1.}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": 2e}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "template_response": "\x"}]}`,
	`{"tool_name": "\ud83d\ude00 \ud83d x \ude00\ud83d \ud83d\u0041 \uDBFF\uDFFF \u00", "api_list": []}`,
	`{"tool_name": "a\'b", "api_list": []}`,
	`{"tool_name": "t", "api_list": [{"name": "a\u0000b\b\f\n\r\t\/\\", "description": "\uZZZZ"}]}`,
	`{"tool_name": "t", "k\u00e9y": {"\ud800": "\n\"", "x": "\u12"}, "api_list": [{"name": "a", "template_response": {"\"q\"": "\u2028"}}]}`,
	`{"tool_name": "t", "api_list": [{"name": "a", "required_parameters": [{"name": "p", "default": "\ud800\udc00"}, {"name": "q", "default": -0}]}]}`,
}

// checkToolFile holds decodeToolFile to encoding/json: where it reads a
// text, encoding/json reads the same value from it.
func checkToolFile(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	var got toolbench.ToolFile
	if !toolbench.DecodeToolFile(data, &got) {
		return false
	}
	var want toolbench.ToolFile
	if err := toolenv.DecodeJSON(data, &want); err != nil {
		t.Fatalf("decodeToolFile read %q, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeToolFile(%q) =\n%#v\nencoding/json:\n%#v", data, got, want)
	}
	return true
}

// TestDecodeToolFile: every case decodeToolFile reads, it reads as
// encoding/json does; it reads the common files (the seeds, the
// generated set) rather than leaving them to the decoders.
func TestDecodeToolFile(t *testing.T) {
	fast := 0
	for _, c := range toolFileCases {
		if checkToolFile(t, []byte(c)) {
			fast++
		}
	}
	if fast < 6 {
		t.Errorf("only %d of %d cases read the fast way", fast, len(toolFileCases))
	}
	dir := t.TempDir()
	if _, err := toolbenchgen.WriteTree(context.Background(), dir, toolbenchgen.Options{APIs: 2000, Seed: 9}, nil); err != nil {
		t.Fatal(err)
	}
	files, slow := 0, 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files++
		if !checkToolFile(t, data) {
			slow++
		}
		return nil
	})
	if files == 0 || slow > files/100 {
		t.Errorf("%d of %d generated files left to the decoders", slow, files)
	}
	for _, p := range []string{"testdata/tools/Data/theclique.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !checkToolFile(t, data) {
			t.Errorf("%s left to the decoders", p)
		}
	}
}

func FuzzDecodeToolFile(f *testing.F) {
	for _, c := range toolFileCases {
		f.Add([]byte(c))
	}
	if data, err := os.ReadFile("testdata/tools/Data/theclique.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkToolFile(t, data) })
}
