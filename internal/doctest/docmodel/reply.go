package main

import (
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// Reply answers every request the same way: a ReAct-style final answer
// that says nothing is known.
func Reply(n int, req *llm.Request) llmtest.Reply {
	return llmtest.Reply{Content: "Thought: I cannot tell.\nFinal Answer: I do not know."}
}
