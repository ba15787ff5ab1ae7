package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/toolbench"
)

// recorded is a backend that answers each call with the response a
// StableToolBench run recorded for the same function and arguments (what
// StableToolBench's cache does), and says so when it has none.
type recorded struct {
	mu   sync.Mutex
	resp map[string]string // cache key -> observation text
}

func newRecorded() *recorded { return &recorded{resp: map[string]string{}} }

func (r *recorded) add(t *testing.T, name, args, observation string) {
	t.Helper()
	var a map[string]any
	if err := toolenv.DecodeJSON([]byte(args), &a); err != nil {
		t.Fatalf("recorded arguments %q: %v", args, err)
	}
	k, err := toolenv.CacheKey(name, a)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resp[k] = observation
}

func (r *recorded) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	k, err := toolenv.CacheKey(call.Tool.Name, call.Args)
	if err != nil {
		return toolenv.ResultOf(err)
	}
	r.mu.Lock()
	obs, ok := r.resp[k]
	r.mu.Unlock()
	if !ok {
		return toolenv.Errorf(toolenv.StatusNotFound, "", "no recorded response for %s", k)
	}
	var o struct {
		Error    string          `json:"error"`
		Response json.RawMessage `json:"response"`
	}
	if err := toolenv.DecodeJSON([]byte(obs), &o); err != nil {
		// ToolBench kept only the first 1024 characters of long
		// responses: complete the JSON so that the response shown to
		// the model starts with the same text.
		if err := toolenv.DecodeJSON([]byte(completeJSON(obs)), &o); err != nil {
			return toolenv.Errorf(toolenv.StatusInternal, "", "recorded observation: %v", err)
		}
	}
	if o.Error != "" {
		return &toolenv.Result{Status: toolenv.StatusUpstreamError, Error: o.Error, Source: toolenv.SourceCache}
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: o.Response, Source: toolenv.SourceCache}
}

// stbTask loads StableToolBench query id of G1_instruction as a task over
// a collection of its APIs.
func stbTask(t *testing.T, id string) (*toolenv.Collection, *toolenv.Task) {
	t.Helper()
	path := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")
	src, err := toolbench.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	for _, task := range src.Tasks(c) {
		if task.ID == "G1_instruction/"+id {
			return c, task
		}
	}
	t.Fatalf("query %s not found", id)
	return nil, nil
}

func readAnswer(t *testing.T, model, file string) *stb.RawAnswer {
	t.Helper()
	a, err := stb.ReadRawAnswer(shareddata.Require(t, "stabletoolbench", "data_example", "answer", model, "G1_instruction", file))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readConverted(t *testing.T, model, id string) *stb.Converted {
	t.Helper()
	f, err := stb.ReadConverted(shareddata.Require(t, "stabletoolbench", "data_example", "model_predictions_converted", model, "G1_instruction.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f.Entries[id]
}

func toolCall(n int, name, args string) []llm.ToolCall {
	return []llm.ToolCall{{ID: fmt.Sprintf("call_%d", n), Type: "function", Function: llm.FunctionCall{Name: name, Arguments: args}}}
}

// chainReplies turns a recorded CoT chain into the model's replies, and
// the recorded observations into the backend.
func chainReplies(t *testing.T, chain []*stb.Node, back *recorded) []llmtest.Reply {
	var replies []llmtest.Reply
	thought := ""
	for i := 0; i < len(chain); i++ {
		n := chain[i]
		switch n.NodeType {
		case "Thought":
			if thought != "" {
				replies = append(replies, llmtest.Reply{Content: thought})
			}
			thought = n.Description
		case "Action":
			in := chain[i+1]
			replies = append(replies, llmtest.Reply{Content: thought, ToolCalls: toolCall(len(replies), n.Description, in.Description)})
			thought = ""
			if n.Description != "Finish" {
				back.add(t, n.Description, in.Description, *in.Observation)
			}
			i++
		}
	}
	if thought != "" {
		replies = append(replies, llmtest.Reply{Content: thought})
	}
	return replies
}

// conversationReplies turns a recorded conversation into the model's
// replies, and its function results into the backend.
func conversationReplies(t *testing.T, conv []stb.Message, back *recorded) []llmtest.Reply {
	var replies []llmtest.Reply
	for i, m := range conv {
		if m.Role != "assistant" {
			continue
		}
		r := llmtest.Reply{Content: m.Text()}
		if fc := m.FunctionCall; fc != nil {
			r.ToolCalls = toolCall(len(replies), fc.Name, fc.Arguments)
			if fc.Name != "Finish" && i+1 < len(conv) {
				back.add(t, fc.Name, fc.Arguments, conv[i+1].Text())
			}
		}
		replies = append(replies, r)
	}
	return replies
}

// treeReplies turns a recorded DFS tree into the model's replies in the
// order ToolBench's search asked for them (depth first, each node's
// children in order), and its observations into the backend.
func treeReplies(t *testing.T, root *stb.Node, back *recorded) []llmtest.Reply {
	var replies []llmtest.Reply
	var walk func(n *stb.Node)
	expand := func(action *stb.Node, content string) {
		in := action.Children[0]
		replies = append(replies, llmtest.Reply{Content: content, ToolCalls: toolCall(len(replies), action.Description, in.Description)})
		if action.Description != "Finish" {
			back.add(t, action.Description, in.Description, *in.Observation)
		}
		walk(in)
	}
	walk = func(n *stb.Node) {
		for _, c := range n.Children {
			switch c.NodeType {
			case "Thought":
				// A thought the search expanded on its own (expand_num set)
				// was a reply without a call; otherwise it came with the
				// call below it.
				if c.ExpandNum == 0 && len(c.Children) > 0 && c.Children[0].NodeType == "Action" {
					expand(c.Children[0], c.Description)
				} else {
					replies = append(replies, llmtest.Reply{Content: c.Description})
					walk(c)
				}
			case "Action":
				expand(c, "")
			}
		}
	}
	walk(root)
	return replies
}

// completeJSON closes a JSON text cut short ("...{"a": [1, "xy..."):
// the open string, a dangling key or comma, and the open containers.
func completeJSON(s string) string {
	s = strings.TrimSuffix(s, "...")
	var stack []byte
	inStr, esc := false, false
	strStart := 0
	keyPos := false // the open string is an object key
	last := byte(0) // last significant byte outside strings
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				last = '"'
			}
			continue
		}
		switch c {
		case '"':
			inStr, strStart = true, i
			keyPos = len(stack) > 0 && stack[len(stack)-1] == '{' && (last == '{' || last == ',')
		case '{', '[':
			stack = append(stack, c)
			last = c
		case '}', ']':
			stack = stack[:len(stack)-1]
			last = c
		case ' ', '\n', '\t', '\r':
		default:
			last = c
		}
	}
	out := s
	if inStr {
		if i := strings.LastIndexByte(out, '\\'); i >= len(out)-6 && i > strStart {
			out = out[:i] // a cut escape sequence
		}
		out += `"`
		if keyPos {
			out += ": null"
		}
	} else {
		t := strings.TrimRight(out, " ")
		switch {
		case strings.HasSuffix(t, ":"):
			out = t + " null"
		case strings.HasSuffix(t, ","):
			out = strings.TrimSuffix(t, ",")
		case last == '.' || last == 'e' || last == 'E' || last == '-':
			out += "0"
		}
		for _, w := range []string{"true", "false", "null"} {
			for k := len(w) - 1; k > 0; k-- {
				if strings.HasSuffix(out, w[:k]) && (len(out) == k || !isWordByte(out[len(out)-k-1])) {
					out += w[k:]
					break
				}
			}
		}
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			out += "}"
		} else {
			out += "]"
		}
	}
	return out
}

func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
