package toolbench_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/toolbench"
)

// TestDecodeDocMatchesEncodingJSON decodes generated ToolBench tool files
// and query files, and hand-made awkward ones, with the loader's fast
// decoder and with encoding/json (toolenv.DecodeJSON): both must give the
// same values, or both fail.
func TestDecodeDocMatchesEncodingJSON(t *testing.T) {
	type doc struct {
		name string
		data string
		slow bool // encoding/json's reading stands (an error, or nesting too deep for the fast decoder)
	}
	var docs []doc
	for seed := uint64(1); seed <= 3; seed++ {
		i := 0
		for tf := range toolbenchgen.Tools(toolbenchgen.Options{APIs: 1500, Seed: seed}) {
			raw, err := tf.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, doc{fmt.Sprintf("seed %d tool %d", seed, i), string(raw), false})
			i++
		}
	}
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for _, d := range []doc{
		{"invalid UTF-8", "{\"tool_name\": \"a\xffb\", \"api_list\": [{\"name\": \"x\xc3\"}]}", false},
		{"lone surrogates", `{"tool_name": "\ud800x\udc00", "api_list": []}`, false},
		{"escapes", `{"tool_name": "tab\there \u00e9 \/ \"q\"", "api_list": []}`, false},
		{"duplicate keys", `{"tool_name": "a", "tool_name": "b", "api_list": [], "api_list": [{"name": "n"}]}`, false},
		{"keys in another case", `{"TOOL_NAME": "a", "Api_List": [{"NAME": "n"}]}`, false},
		{"defaults of every kind", `{"tool_name": "t", "api_list": [{"name": "n", "required_parameters": [
			{"name": "a", "default": 1e400}, {"name": "b", "default": -0.5E-3}, {"name": "c", "default": [1, "x", null, {"k": {}}]},
			{"name": "d", "default": true}, {"name": "e", "default": null}, {"name": "f", "default": 12345678901234567890}]}]}`, false},
		{"null lists", `{"tool_name": "t", "api_list": [{"name": "n", "required_parameters": null, "optional_parameters": null}]}`, false},
		{"template with space", `{"tool_name": "t", "api_list": [{"name": "n", "template_response": { "a" : [ 1 , 2 ] }}]}`, false},
		{"unknown fields", `{"tool_name": "t", "x": {"y": [1, 2, {"z": null}]}, "api_list": [{"name": "n", "extra": 1}]}`, false},
		{"wrong type", `{"tool_name": 7, "api_list": []}`, true},
		{"wrong type in a list", `{"tool_name": "t", "api_list": [{"name": "n", "required_parameters": [{"name": ["a"]}]}]}`, true},
		{"trailing data", `{"tool_name": "t", "api_list": []} x`, true},
		{"two values", `{"tool_name": "t", "api_list": []} {}`, true},
		{"cut short", `{"tool_name": "t", "api_list": [{"name": "n"`, true},
		{"nested too deep", `{"tool_name": "t", "api_list": [{"name": "n", "required_parameters": [{"default": ` + deep + `}]}]}`, true},
		{"brackets in strings", `{"tool_name": "` + strings.Repeat("[{", 3000) + `", "api_list": []}`, false},
		{"query file", `[{"query": "q", "query_id": 12, "api_list": [{"category_name": "C", "tool_name": "T", "api_name": "a"}], "relevant APIs": [["T", "a"]]}]`, false},
		{"query id as a string", `[{"query": "q", "query_id": "12", "api_list": []}]`, true}, // segmentio refuses what encoding/json takes: the fallback reads it
		{"query id not a number", `[{"query": "q", "query_id": "twelve", "api_list": []}]`, true},
	} {
		docs = append(docs, d)
	}
	for _, zeroCopy := range []bool{false, true} {
		for _, d := range docs {
			var fast, std any
			if strings.HasPrefix(d.data, "[") {
				fast, std = &[]toolbench.Query{}, &[]toolbench.Query{}
			} else {
				fast, std = &toolbench.ToolFile{}, &toolbench.ToolFile{}
			}
			byFast, ferr := toolbench.DecodeDocBy([]byte(d.data), fast, zeroCopy)
			if byFast == d.slow {
				t.Errorf("%s (zero copy %v): decoded by the fast decoder: %v, want %v", d.name, zeroCopy, byFast, !d.slow)
			}
			serr := toolenv.DecodeJSON([]byte(d.data), std)
			if (ferr == nil) != (serr == nil) {
				t.Errorf("%s (zero copy %v): fast decoder error %v, encoding/json error %v", d.name, zeroCopy, ferr, serr)
				continue
			}
			if ferr != nil {
				if ferr.Error() != serr.Error() {
					t.Errorf("%s (zero copy %v): error %q, want encoding/json's %q", d.name, zeroCopy, ferr, serr)
				}
				continue
			}
			if !reflect.DeepEqual(fast, std) {
				t.Errorf("%s (zero copy %v): decoded\n%#v\nencoding/json decoded\n%#v", d.name, zeroCopy, fast, std)
			}
		}
	}
}
