package main

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// rule answers the requests its match accepts.
type rule struct {
	name  string
	match func(system, user string, req *llm.Request) bool
	reply func(req *llm.Request) llmtest.Reply
}

// rules are tried in order; the last one answers anything. Each answers
// in the format the prompt asks for, with content that says it comes
// from the doc test's model.
var rules = []rule{
	{
		name: "API simulator (MirrorAPI's and StableToolBench's prompts)",
		match: func(system, user string, _ *llm.Request) bool {
			return strings.Contains(system, "API Server") || strings.Contains(system, "[CHAIN_OF_THOUGHT]") ||
				strings.Contains(system, "API Documentation") && strings.Contains(system, "API Input")
		},
		reply: func(*llm.Request) llmtest.Reply {
			return llmtest.Reply{Content: `{"error": "", "response": "{\"note\": \"answered by the doc test's model\"}"}`}
		},
	},
	{
		name: "API mapping and its self-reflection (mapping/probe): no equivalent APIs",
		match: func(system, user string, _ *llm.Request) bool {
			return strings.Contains(system+user, `"mappings"`) && strings.Contains(system+user, "Answer with JSON only")
		},
		reply: func(req *llm.Request) llmtest.Reply {
			// the first two candidates, proposed as a pair a reviewer should
			// look at: this model reads no documentation
			ids := candidateID.FindAllStringSubmatch(lastUser(req), 2)
			if len(ids) < 2 {
				return llmtest.Reply{Content: `{"critique": "no candidates", "mappings": []}`}
			}
			m, _ := json.Marshal(map[string]any{
				"critique": "the doc test's model reads no documentation: review this pair",
				"mappings": []map[string]any{{
					"from": ids[0][1], "to": ids[1][1], "score": 0.5, "inputs": []any{}, "outputs": []any{},
					"reasoning": "proposed by the doc test's model without reading the documentation",
				}},
			})
			return llmtest.Reply{Content: string(m)}
		},
	},
	{
		name: "StableToolBench's answer-status judges (SoPR, FAC): unsure",
		match: func(system, user string, req *llm.Request) bool {
			return strings.Contains(system+user, "answer_status")
		},
		reply: func(req *llm.Request) llmtest.Reply {
			args := `{"content": "the doc test's model does not judge", "answer_status": "Unsure"}`
			for _, t := range req.Tools {
				if strings.Contains(t.Function.Name, "answer_status") {
					return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_0", Type: "function", Function: llm.FunctionCall{Name: t.Function.Name, Arguments: args}}}}
				}
			}
			return llmtest.Reply{Content: args}
		},
	},
	{
		name: "MirrorAPI's query generation (Table 14): a query over the first two APIs offered",
		match: func(_, user string, _ *llm.Request) bool {
			return strings.Contains(user, "related_apis") && strings.Contains(user, "INPUT:")
		},
		reply: func(req *llm.Request) llmtest.Reply {
			u := lastUser(req)
			in := u[strings.LastIndex(u, "INPUT:")+len("INPUT:"):]
			in = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(in), "OUTPUT:"))
			var tools []struct {
				ToolName string `json:"tool_name"`
				APIList  []struct {
					Name string `json:"name"`
				} `json:"api_list"`
			}
			_ = json.Unmarshal([]byte(in), &tools)
			var related [][2]string
			var names []string
			for _, t := range tools {
				for _, a := range t.APIList {
					if len(related) < 2 {
						related = append(related, [2]string{t.ToolName, a.Name})
						names = append(names, a.Name)
					}
				}
			}
			b, _ := json.Marshal(map[string]any{
				"query":        "Please use " + strings.Join(names, " and ") + " for me (a query written by the doc test's model).",
				"related_apis": related,
			})
			return llmtest.Reply{Content: string(b)}
		},
	},
	{
		name: "ToolBench's agents (CoT, DFSDT): Finish with a final answer",
		match: func(_, _ string, req *llm.Request) bool {
			for _, t := range req.Tools {
				if t.Function.Name == "Finish" {
					return true
				}
			}
			return false
		},
		reply: func(*llm.Request) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "call_0", Type: "function", Function: llm.FunctionCall{
				Name: "Finish", Arguments: `{"return_type": "give_answer", "final_answer": "I do not know."}`}}}}
		},
	},
	{
		name:  "anything else: a ReAct final answer",
		match: func(string, string, *llm.Request) bool { return true },
		reply: func(*llm.Request) llmtest.Reply {
			return llmtest.Reply{Content: "Thought: I cannot tell.\nFinal Answer: I do not know."}
		},
	},
}

var candidateID = regexp.MustCompile(`(?m)^\[\d+\] id: (\S+)`)

// lastUser is the text of the request's last user message.
func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// Reply answers a request by the first rule that matches it.
func Reply(_ int, req *llm.Request) llmtest.Reply {
	var system, user strings.Builder
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			system.WriteString(m.Content)
		case "user":
			user.WriteString(m.Content)
		}
	}
	for _, r := range rules {
		if r.match(system.String(), user.String(), req) {
			return r.reply(req)
		}
	}
	return llmtest.Reply{}
}
