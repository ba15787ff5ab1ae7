package stb

import (
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Convert turns a raw answer into its converted entry the way
// convert_to_answer_format.py does:
//
//   - a valid answer (answer_generation.valid_data) is read from its last
//     conversation: each assistant function call becomes a tool node whose
//     response is the next message's content ("" for Finish), each
//     assistant message without a call an assistant node;
//   - an invalid CoT answer is read from its chain: Action + Action Input
//     pairs become tool nodes (response = the observation), Thoughts
//     assistant nodes;
//   - an invalid DFS answer is read from its tree along one root-to-leaf
//     path.
//
// Every chain starts with a system and a user node whose messages are
// empty in the output; total_steps counts all nodes. Where StableToolBench
// picks at random (one of several CoT tries, a path through a DFS tree)
// this takes the first, so the result is deterministic.
func Convert(method string, a *RawAnswer) (*Converted, error) {
	ag := a.AnswerGeneration
	var nodes []*DetailNode
	switch {
	case ag.ValidData:
		if len(ag.TrainMessages) == 0 {
			return nil, fmt.Errorf("convert: a valid answer has no train_messages")
		}
		nodes = fromConversation(ag.TrainMessages[len(ag.TrainMessages)-1])
	case strings.Contains(strings.ToLower(method), "cot"):
		if len(a.Trys) == 0 {
			return nil, fmt.Errorf("convert: a CoT answer has no trys")
		}
		var err error
		if nodes, err = fromChain(a.Trys[0].Chain); err != nil {
			return nil, err
		}
	case strings.Contains(strings.ToLower(method), "dfs"):
		if a.Tree == nil || a.Tree.Tree == nil {
			return nil, fmt.Errorf("convert: a DFS answer has no tree")
		}
		var path []*Node
		for n := a.Tree.Tree; len(n.Children) > 0; {
			if n = n.Children[0]; n == nil {
				return nil, fmt.Errorf("convert: node %d of the DFS tree's first path is null", len(path)+1)
			}
			path = append(path, n)
		}
		var err error
		if nodes, err = fromChain(path); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("convert: unknown method %q (want one containing CoT or DFS)", method)
	}
	return &Converted{
		Query:          ag.Query,
		AvailableTools: ag.Function,
		Answer:         chainAnswer(method, ag.FinalAnswer, nodes),
	}, nil
}

// chainAnswer links system, user and nodes into a converted answer.
func chainAnswer(method, finalAnswer string, nodes []*DetailNode) ConvertedAnswer {
	all := append([]*DetailNode{{Role: "system", Message: ""}, {Role: "user", Message: ""}}, nodes...)
	for i := range all {
		all[i].Next = []*DetailNode{}
		if i > 0 {
			all[i-1].Next = []*DetailNode{all[i]}
		}
	}
	return ConvertedAnswer{Method: method, TotalSteps: len(all), FinalAnswer: finalAnswer, AnswerDetails: []*DetailNode{all[0]}}
}

func fromConversation(conv []Message) []*DetailNode {
	var out []*DetailNode
	for i := 2; i < len(conv); i++ {
		m := conv[i]
		if m.Role != "assistant" {
			continue
		}
		switch {
		case m.FunctionCall != nil:
			resp := ""
			if m.FunctionCall.Name != "Finish" && i+1 < len(conv) {
				resp = conv[i+1].Text()
			}
			out = append(out, toolNode(m.FunctionCall.Name, m.FunctionCall.Arguments, resp))
			i++
		case len(m.ToolCalls) > 0:
			for _, tc := range m.ToolCalls {
				if tc.Function.Name == "Finish" {
					out = append(out, toolNode(tc.Function.Name, tc.Function.Arguments, ""))
					break
				}
				for _, r := range conv[i+1:] {
					if r.Role == "tool" && r.ToolCallID == tc.ID {
						out = append(out, toolNode(tc.Function.Name, tc.Function.Arguments, r.Text()))
						break
					}
				}
			}
		default:
			var msg any
			if m.Content != nil {
				msg = *m.Content
			}
			out = append(out, &DetailNode{Role: "assistant", Message: msg})
		}
	}
	return out
}

func fromChain(chain []*Node) ([]*DetailNode, error) {
	var out []*DetailNode
	for i, n := range chain {
		if n == nil {
			return nil, fmt.Errorf("convert: node %d of the chain is null", i)
		}
	}
	for i := 0; i < len(chain); i++ {
		n := chain[i]
		switch n.NodeType {
		case "Action":
			if i+1 >= len(chain) || chain[i+1].NodeType != "Action Input" {
				return nil, fmt.Errorf("convert: Action %q is not followed by its Action Input", n.Description)
			}
			in := chain[i+1]
			obs := ""
			if in.Observation != nil {
				obs = *in.Observation
			}
			out = append(out, toolNode(n.Description, in.Description, obs))
			i++
		case "Thought":
			out = append(out, &DetailNode{Role: "assistant", Message: n.Description})
		case "Action Input":
			// An Action Input with no Action before it (the root of a
			// DFS tree) carries nothing to convert.
		default:
			return nil, fmt.Errorf("convert: unknown node_type %q", n.NodeType)
		}
	}
	return out, nil
}

func toolNode(name, args, resp string) *DetailNode {
	return &DetailNode{Role: "tool", Message: &ToolMessage{Name: name, Arguments: args, Response: resp}}
}

// FromTrajectory writes a toolenv trajectory in the converted format, so
// that StableToolBench's evaluators (and SoPR here) can judge it: each
// step with a call is a tool node (its arguments as the model wrote them
// when the step kept them in Raw, else their JSON; its observation as the
// response, "" for Finish), each step with only a thought an assistant
// node. finalAnswer is what the Finish call carried
// ('{"return_type": ...}'), "" when the agent never finished.
func FromTrajectory(method, query, finalAnswer string, tr *toolenv.Trajectory, availableTools []json.RawMessage) *Converted {
	var nodes []*DetailNode
	for _, s := range tr.Steps {
		if s.Call == nil {
			if s.Thought != "" {
				nodes = append(nodes, &DetailNode{Role: "assistant", Message: s.Thought})
			}
			continue
		}
		args := s.Raw
		if args == "" {
			if b, err := toolenv.Canonical(s.Call.Args); err == nil {
				args = string(b)
			}
		}
		resp := s.Observation
		if s.Call.Name == FinishName {
			resp = ""
		}
		nodes = append(nodes, toolNode(s.Call.Name, args, resp))
	}
	return &Converted{Query: query, AvailableTools: availableTools, Answer: chainAnswer(method, finalAnswer, nodes)}
}

// FinishName is the name of ToolBench's Finish function.
const FinishName = "Finish"
