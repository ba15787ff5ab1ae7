package agent

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// References into earlier outputs resolve to the value at their path,
// keeping its JSON type, at any depth of the arguments; strings that are
// not references to this sequence stay as written; a path that does not
// exist is an error naming the argument and the reference.
func TestResolveRefs(t *testing.T) {
	outputs := map[string]json.RawMessage{
		"var1":  json.RawMessage(`{"total":2,"results":[{"isbn":"111","tags":["a","b"]},{"isbn":"222","price":9.5,"stock":null}],"meta":{"page":{"n":3}}}`),
		"var2":  json.RawMessage(`[10, [20, 21], {"k": true}]`),
		"txt":   json.RawMessage(`plain text, not JSON`),
		"a-b_3": json.RawMessage(`"scalar"`),
		// MCP CallToolResults: structured content, JSON text, plain text,
		// and an object that merely has a "content" key.
		"mcp1":   json.RawMessage(`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"results":[{"isbn":"333"}]}}`),
		"mcp2":   json.RawMessage(`{"content":[{"type":"text","text":"{\"results\":[{\"isbn\":\"444\"}]}"}]}`),
		"mcp3":   json.RawMessage(`{"content":[{"type":"text","text":"just words"}],"isError":false}`),
		"notmcp": json.RawMessage(`{"content":[{"type":"text"}],"page":2}`),
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr []string // substrings of the error
	}{
		{name: "object then array then object", args: map[string]any{"isbn": "$var1.results[0].isbn$"}, want: map[string]any{"isbn": "111"}},
		{name: "second element", args: map[string]any{"isbn": "$var1.results[1].isbn$"}, want: map[string]any{"isbn": "222"}},
		{name: "number keeps its type", args: map[string]any{"n": "$var1.results[1].price$", "t": "$var1.total$"}, want: map[string]any{"n": json.Number("9.5"), "t": json.Number("2")}},
		{name: "null", args: map[string]any{"s": "$var1.results[1].stock$"}, want: map[string]any{"s": nil}},
		{name: "nested objects", args: map[string]any{"p": "$var1.meta.page.n$"}, want: map[string]any{"p": json.Number("3")}},
		{name: "whole output", args: map[string]any{"all": "$var2$"}, want: map[string]any{"all": []any{json.Number("10"), []any{json.Number("20"), json.Number("21")}, map[string]any{"k": true}}}},
		{name: "array of arrays", args: map[string]any{"x": "$var2[1][1]$"}, want: map[string]any{"x": json.Number("21")}},
		{name: "dotted index into an array", args: map[string]any{"x": "$var1.results.1.isbn$"}, want: map[string]any{"x": "222"}},
		{name: "sub-array as a value", args: map[string]any{"tags": "$var1.results[0].tags$"}, want: map[string]any{"tags": []any{"a", "b"}}},
		{name: "inside arrays and objects", args: map[string]any{"ids": []any{"$var1.results[0].isbn$", "literal"}, "f": map[string]any{"k": "$var2[2].k$"}}, want: map[string]any{"ids": []any{"111", "literal"}, "f": map[string]any{"k": true}}},
		{name: "MCP structured content", args: map[string]any{"isbn": "$mcp1.results[0].isbn$"}, want: map[string]any{"isbn": "333"}},
		{name: "MCP JSON text", args: map[string]any{"isbn": "$mcp2.results[0].isbn$"}, want: map[string]any{"isbn": "444"}},
		{name: "MCP plain text", args: map[string]any{"s": "$mcp3$"}, want: map[string]any{"s": "just words"}},
		{name: "an API's own content key", args: map[string]any{"p": "$notmcp.page$"}, want: map[string]any{"p": json.Number("2")}},
		{name: "label with dash and underscore", args: map[string]any{"s": "$a-b_3$"}, want: map[string]any{"s": "scalar"}},
		{name: "non-JSON output as a whole", args: map[string]any{"s": "$txt$"}, want: map[string]any{"s": "plain text, not JSON"}},
		{name: "unknown label stays literal", args: map[string]any{"price": "$5$", "r": "$var9.x$"}, want: map[string]any{"price": "$5$", "r": "$var9.x$"}},
		{name: "not a whole-string reference", args: map[string]any{"q": "see $var1.total$ here", "o": 7}, want: map[string]any{"q": "see $var1.total$ here", "o": 7}},
		{name: "missing key", args: map[string]any{"isbn": "$var1.results[0].ibsn$"}, wantErr: []string{"argument isbn", "$var1.results[0].ibsn$", `no key "ibsn"`, "isbn, tags"}},
		{name: "index out of range", args: map[string]any{"isbn": "$var1.results[5].isbn$"}, wantErr: []string{"$var1.results[5].isbn$", "$var1.results has 2 element(s); index 5 is out of range"}},
		{name: "index into an object", args: map[string]any{"x": "$var1.meta[0]$"}, wantErr: []string{"$var1.meta is an object, not an array"}},
		{name: "key of an array", args: map[string]any{"x": "$var1.results.isbn$"}, wantErr: []string{"$var1.results is an array of 2 element(s), not an object"}},
		{name: "step into a scalar", args: map[string]any{"x": "$var1.total.value$"}, wantErr: []string{"$var1.total is a number, which has no .value"}},
		{name: "path into text", args: map[string]any{"x": "$txt.a$"}, wantErr: []string{"the output of $txt is not JSON"}},
		{name: "nested argument named in the error", args: map[string]any{"f": map[string]any{"ids": []any{"ok", "$var2[7]$"}}}, wantErr: []string{"argument f.ids[1]", "$var2[7]$"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.args)
			got, err := ResolveRefs(tc.args, outputs)
			if after, _ := json.Marshal(tc.args); string(after) != string(before) {
				t.Errorf("the arguments were modified: %s → %s", before, after)
			}
			if tc.wantErr != nil {
				var re *RefError
				if err == nil || !errors.As(err, &re) {
					t.Fatalf("got %v, %v; want a *RefError", got, err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
