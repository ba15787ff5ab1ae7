package main

import (
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
		name:  "anything else: a ReAct final answer",
		match: func(string, string, *llm.Request) bool { return true },
		reply: func(*llm.Request) llmtest.Reply {
			return llmtest.Reply{Content: "Thought: I cannot tell.\nFinal Answer: I do not know."}
		},
	},
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
