package parse

import (
	"strings"
	"testing"

	"github.com/toolenv/toolenv/llm"
)

func FuzzCalls(f *testing.F) {
	for _, s := range []string{qwenTagged, deepseekBareName, deepseekCoT, gpt4oProse, mixtralRunOn, pythonLiteral,
		`[f(a=1, b="x")]`, "```json\n{\"name\": \"f\"}\n```", `{"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}`,
		"<tool_call>\n{\"name\"", `[[[[[`, `f(g(h(1)))`, `'''`, `{"name": "a", "arguments": "{'x': 1}"}`} {
		f.Add(s, "")
	}
	f.Add("", `{"a": [1, {"b": null}]}`)
	f.Fuzz(func(t *testing.T, content, nativeArgs string) {
		var native []llm.ToolCall
		if nativeArgs != "" {
			native = []llm.ToolCall{{Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: nativeArgs}}}
		}
		r, err := Calls(content, native)
		if err != nil {
			if len(r.Calls) != 0 {
				t.Fatalf("error with calls: %v %+v", err, r)
			}
			return
		}
		for _, c := range r.Calls {
			if c.Problem == "" && (c.Name == "" || c.Args == nil) {
				t.Fatalf("well-formed call without name or args: %+v from %q", c, content)
			}
		}
	})
}

func FuzzReAct(f *testing.F) {
	for _, s := range []string{"Thought: x\nAction: f\nAction Input: {\"a\": 1}", "Final Answer: 3", "Action: `g`\nAction Input: ```{'a': [1,}```\nObservation: x",
		"Action:\nAction Input:", strings.Repeat("Action: a\n", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ReAct(text)
		if err == nil && !s.IsFinal && (s.Action == "" || s.Input == nil && s.InputProblem == "") {
			t.Fatalf("accepted step without action or input: %+v from %q", s, text)
		}
	})
}
