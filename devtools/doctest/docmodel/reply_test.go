package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/openai"
)

// TestReply checks that each rule answers in the format the prompt it
// recognizes asks for (the doc test's pages exercise them end to end).
func TestReply(t *testing.T) {
	msg := func(system, user string) *llm.Request {
		return &llm.Request{Messages: []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}}
	}
	withTools := func(r *llm.Request, names ...string) *llm.Request {
		for _, n := range names {
			r.Tools = append(r.Tools, openai.Tool{Type: "function", Function: openai.Function{Name: n}})
		}
		return r
	}
	tests := []struct {
		name  string
		req   *llm.Request
		check func(t *testing.T, content string, calls []llm.ToolCall)
	}{
		{"simulator", msg(simulate.SFTSystemPrompt, "API doc:\n{}\nRequest:\n{}"), func(t *testing.T, c string, _ []llm.ToolCall) {
			var v struct {
				Error    *string `json:"error"`
				Response any     `json:"response"`
			}
			if json.Unmarshal([]byte(c), &v) != nil || v.Error == nil || v.Response == nil {
				t.Errorf("not an {error, response} answer: %s", c)
			}
		}},
		{"mapping", msg("", "Candidates:\n[1] id: a/x\n[2] id: a/y\nAnswer with JSON only, in exactly this shape:\n{\"mappings\": []}"), func(t *testing.T, c string, _ []llm.ToolCall) {
			var v struct {
				Mappings []struct{ From, To string } `json:"mappings"`
			}
			if json.Unmarshal([]byte(c), &v) != nil || len(v.Mappings) != 1 || v.Mappings[0].From != "a/x" || v.Mappings[0].To != "a/y" {
				t.Errorf("mapping answer %s, want a/x → a/y", c)
			}
		}},
		{"judge with a function", withTools(msg("", "give `answer_status`"), "check_answer_status"), func(t *testing.T, _ string, calls []llm.ToolCall) {
			if len(calls) != 1 || calls[0].Function.Name != "check_answer_status" || !strings.Contains(calls[0].Function.Arguments, `"answer_status"`) {
				t.Errorf("judge calls %+v", calls)
			}
		}},
		{"query generation", msg("", `write related_apis ... INPUT: [{"tool_name":"t","api_list":[{"name":"a"},{"name":"b"}]}] OUTPUT:`), func(t *testing.T, c string, _ []llm.ToolCall) {
			var v struct {
				Query   string      `json:"query"`
				Related [][2]string `json:"related_apis"`
			}
			if json.Unmarshal([]byte(c), &v) != nil || v.Query == "" || len(v.Related) != 2 || v.Related[1] != [2]string{"t", "b"} {
				t.Errorf("query answer %s", c)
			}
		}},
		{"ToolBench agent", withTools(msg("", "do it"), "get_x", "Finish"), func(t *testing.T, _ string, calls []llm.ToolCall) {
			if len(calls) != 1 || calls[0].Function.Name != "Finish" || !strings.Contains(calls[0].Function.Arguments, "give_answer") {
				t.Errorf("agent calls %+v", calls)
			}
		}},
		{"anything else", msg("", "hello"), func(t *testing.T, c string, _ []llm.ToolCall) {
			if !strings.Contains(c, "Final Answer:") {
				t.Errorf("answer %q has no Final Answer", c)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Reply(0, tc.req)
			tc.check(t, r.Content, r.ToolCalls)
		})
	}
}
