package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

func TestMCPResult(t *testing.T) {
	tests := []struct {
		name       string
		res        *toolenv.Result
		isError    bool
		text       []string // substrings of the text content
		structured bool
		meta       map[string]any
	}{
		{"object body is compact text and structured content",
			&toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage("{\n  \"a\": 1\n}"), Source: toolenv.SourceCache, Latency: 1500 * time.Microsecond, Meta: map[string]string{invoke.MetaOrigin: "simulator"}},
			false, []string{`{"a":1}`}, true,
			map[string]any{MCPMetaStatus: "ok", MCPMetaSource: "cache", MCPMetaOrigin: "simulator", MCPMetaLatency: 1.5}},
		{"a JSON string body is its text",
			&toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"{\"results\": [\"x\"]}"`), Source: toolenv.SourceSimulator},
			false, []string{`{"results": ["x"]}`}, false, map[string]any{MCPMetaSource: "simulator"}},
		{"array body is text only",
			&toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`[1,2]`), Warnings: []string{"deprecated"}, Faults: []string{"latency"}},
			false, []string{"[1,2]"}, false, map[string]any{MCPMetaWarnings: []string{"deprecated"}, MCPMetaFaults: []string{"latency"}}},
		{"empty body", &toolenv.Result{Status: toolenv.StatusOK}, false, []string{"null"}, false, nil},
		{"validation failure lists the problems and the hint",
			&toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: "invalid arguments: missing required argument `q`", Hint: "q is the search text", Source: toolenv.SourcePipeline,
				Problems: []toolenv.Problem{{Param: "q", Code: "missing_required", Message: "missing required argument `q`", Expected: "string"}}},
			true, []string{"error (invalid_arguments): the arguments do not match the tool's input schema (1 problem)", "- missing required argument `q` (expected: string)", "hint: q is the search text"}, false,
			map[string]any{MCPMetaStatus: "invalid_arguments", MCPMetaSource: "toolenv"}},
		{"upstream failure keeps the API's answer and retry time",
			&toolenv.Result{Status: toolenv.StatusRateLimited, Error: "too many requests", Body: json.RawMessage(`{"message":"slow down"}`), RetryAfter: 2 * time.Second},
			true, []string{"error (rate_limited): too many requests", `response: {"message":"slow down"}`}, false,
			map[string]any{MCPMetaRetryAfter: int64(2000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MCPResult(tt.res)
			if got.IsError != tt.isError {
				t.Errorf("isError = %v", got.IsError)
			}
			text := got.Content[0].(*mcp.TextContent).Text
			for _, want := range tt.text {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
			if (got.StructuredContent != nil) != tt.structured {
				t.Errorf("structured content = %v", got.StructuredContent)
			}
			for k, want := range tt.meta {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(got.Meta[k])
				if string(w) != string(g) {
					t.Errorf("_meta[%s] = %s, want %s", k, g, w)
				}
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("result does not marshal: %v", err)
			}
		})
	}
}

func TestMCPArgs(t *testing.T) {
	for _, raw := range []string{"", "null", " {} "} {
		if args, res := mcpArgs(json.RawMessage(raw), nil); res != nil || args == nil || len(args) != 0 {
			t.Errorf("%q: %v %v", raw, args, res)
		}
	}
	args, res := mcpArgs(json.RawMessage(`{"n": 1.50}`), nil)
	if res != nil || args["n"] != json.Number("1.50") {
		t.Errorf("numbers must stay exact: %#v %v", args, res)
	}
	for _, raw := range []string{`[1]`, `"x"`, `{`} {
		if _, res := mcpArgs(json.RawMessage(raw), nil); res == nil || res.Status != toolenv.StatusBadRequest {
			t.Errorf("%q: %v", raw, res)
		}
	}
}
