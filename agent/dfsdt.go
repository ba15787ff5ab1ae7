package agent

import (
	"context"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent/parse"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
)

// DFSDT is ToolBench's depth-first decision tree (DFS_woFilter_w2 in
// StableToolBench): each state is expanded into up to Beam children by
// asking the model again, with the earlier children listed in ToolBench's
// diversity prompt so that it tries something different; a branch that
// gives up or reaches the step limit is abandoned and the search backs
// up. It stops at the first final answer or when the model has been asked
// MaxQueries times.
type DFSDT struct {
	// MaxSteps is the depth limit in nodes, as for CoT; 0 means 12.
	MaxSteps int
	// Beam is ToolBench's tree_beam_size; 0 means 2.
	Beam int
	// MaxQueries is ToolBench's max_query_count; 0 means 200.
	MaxQueries int
	// MaxObservation is as for CoT; 0 means 1024.
	MaxObservation int
	// StrictTools offers the tools as OpenAI strict functions
	// (OfferedTools).
	StrictTools bool
}

var _ Agent = DFSDT{}

// Name returns "dfsdt".
func (DFSDT) Name() string { return "dfsdt" }

// ToolBench's return values: how many levels to back up.
const (
	backFinal  = 2
	backPrune  = 2
	backAll    = 100000
	backAnswer = 10000
)

type dfsNode struct {
	idx      int
	parent   *dfsNode
	children []*dfsNode
	typ      string
	desc     string
	obs      string
	code     int
	pruned   bool
	terminal bool
	// alone marks a Thought that was a reply with no call.
	alone bool
	depth int
	msgs  []llm.Message
}

type dfsSearch struct {
	a         DFSDT
	ctx       context.Context
	ep        *Episode
	o         *Outcome
	r         *toolbenchRun
	queries   int
	terminals []*dfsNode
	stopped   bool
}

// Run searches the tree.
func (a DFSDT) Run(ctx context.Context, ep *Episode) *Outcome {
	if a.MaxSteps <= 0 {
		a.MaxSteps = 12
	}
	if a.Beam <= 0 {
		a.Beam = 2
	}
	if a.MaxQueries <= 0 {
		a.MaxQueries = 200
	}
	o := newOutcome(a.Name(), ep)
	o.Parsed = true
	s := &dfsSearch{a: a, ctx: ctx, ep: ep, o: o, r: newToolbenchRun(ep, o, a.MaxObservation, a.StrictTools)}
	root := &dfsNode{idx: -1, typ: "Action Input", msgs: s.r.initialMessages()}
	s.dfs(root)
	var end *dfsNode
	if len(s.terminals) > 0 {
		end = s.terminals[0]
	} else {
		end = deepestLeaf(root)
		o.OutOfBudget = !s.stopped && !s.r.gaveUp
	}
	o.Trajectory.Steps = pathSteps(end)
	if len(s.terminals) == 0 && s.r.hasDone {
		// A final answer was only given on a pruned branch; ToolBench
		// counts the first terminal node only.
		s.r.hasDone = false
	}
	s.r.finishOutcome()
	return o
}

func (s *dfsSearch) add(parent *dfsNode, n *dfsNode) *dfsNode {
	n.parent = parent
	n.depth = parent.depth + 1
	parent.children = append(parent.children, n)
	n.idx = len(s.o.Tree)
	s.o.Tree = append(s.o.Tree, TreeNode{Parent: parent.idx, Type: n.typ, Description: n.desc, Observation: n.obs, Code: n.code, Terminal: n.terminal})
	return n
}

func (s *dfsSearch) dfs(now *dfsNode) int {
	if now.depth >= s.a.MaxSteps || now.pruned || now.terminal {
		if now.terminal {
			s.terminals = append(s.terminals, now)
			return backFinal
		}
		now.pruned = true
		if now.idx >= 0 {
			s.o.Tree[now.idx].Pruned = true
		}
		if now.code == codeGiveUp {
			return backPrune
		}
		return 1
	}
	for i := 0; i < s.a.Beam; i++ {
		msgs := append([]llm.Message(nil), now.msgs...)
		if len(now.children) > 0 {
			if d := s.diversity(now); d != "" {
				msgs = append(msgs, llm.Message{Role: "user", Content: d})
			}
		}
		resp, err := s.o.chat(s.ctx, s.ep, s.r.request(msgs))
		s.queries++
		if err != nil {
			s.stopped = true
			return backAll
		}
		s.o.Loops++
		if s.queries >= s.a.MaxQueries {
			return backAll
		}
		msg := resp.Choices[0].Message
		msgs = append(msgs, llm.Message{Role: "assistant", Content: msg.Content, ToolCalls: msg.ToolCalls})
		temp := now
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			temp = s.add(temp, &dfsNode{typ: "Thought", desc: msg.Content, alone: len(msg.ToolCalls) == 0})
		}
		for _, tc := range msg.ToolCalls {
			act := s.add(temp, &dfsNode{typ: "Action", desc: tc.Function.Name})
			obs, code := s.r.step(s.ctx, tc.Function.Name, tc.Function.Arguments)
			if s.o.Canceled {
				s.stopped = true
				return backAll
			}
			in := &dfsNode{typ: "Action Input", desc: tc.Function.Arguments, obs: obs, code: code}
			switch code {
			case codeGiveUp:
				in.pruned = true
				s.r.gaveUp = true
			case codeFinalAnswer:
				in.terminal = true
			}
			temp = s.add(act, in)
			if in.pruned {
				s.o.Tree[in.idx].Pruned = true
			}
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Function.Name, Content: obs})
			if code == codeGiveUp || code == codeFinalAnswer {
				break
			}
		}
		temp.msgs = msgs
		result := s.dfs(temp)
		if len(s.terminals) >= 1 || s.stopped {
			return backAnswer
		}
		if result > 1 {
			return result - 1
		}
	}
	return 1
}

// diversity builds ToolBench's diversity prompt from the first call under
// each of now's children.
func (s *dfsSearch) diversity(now *dfsNode) string {
	var items []string
	for _, child := range now.children {
		n := child
		for !n.terminal && n.typ != "Action Input" && len(n.children) > 0 {
			n = n.children[0]
		}
		if n.typ != "Action Input" || n.parent == nil {
			continue
		}
		items = append(items, fmt.Sprintf("  {\n    \"name\": %s,\n    \"arguments\": %s,\n    \"function_output\": %s,\n    \"mento-carlo-action-value\": 0.0\n  }",
			asciiJSON(n.parent.desc), asciiJSON(n.desc), asciiJSON(n.obs)))
	}
	if len(items) == 0 {
		return ""
	}
	former := "[\n" + strings.Join(items, ",\n") + "\n]\n"
	if now.obs != "" {
		former += "again, your former observation: " + now.obs + "\n"
	}
	return strings.Replace(promptDiversity.Text, "{previous_candidate}", former, 1)
}

// asciiJSON writes s as Python's json.dumps does (non-ASCII escaped).
func asciiJSON(s string) string { return pyfmt.JSONString(s) }

// deepestLeaf returns the last-created node on the deepest path.
func deepestLeaf(root *dfsNode) *dfsNode {
	best := root
	var walk func(n *dfsNode)
	walk = func(n *dfsNode) {
		if n.depth >= best.depth {
			best = n
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	return best
}

// pathSteps turns the path from the root to end into trajectory steps.
func pathSteps(end *dfsNode) []toolenv.Step {
	var path []*dfsNode
	for n := end; n != nil && n.idx >= 0; n = n.parent {
		path = append(path, n)
	}
	steps := []toolenv.Step{}
	thought := ""
	for i := len(path) - 1; i >= 0; i-- {
		n := path[i]
		switch n.typ {
		case "Thought":
			if n.alone {
				steps = append(steps, toolenv.Step{Thought: n.desc})
				continue
			}
			thought = n.desc
		case "Action Input":
			args, _ := parse.ArgsFromString(n.desc)
			name := ""
			if n.parent != nil {
				name = n.parent.desc
			}
			steps = append(steps, toolenv.Step{Thought: thought, Call: &toolenv.GoldCall{Name: name, Args: args}, Observation: n.obs, Status: codeStatus(n.code), Raw: n.desc})
			thought = ""
		}
	}
	if thought != "" {
		steps = append(steps, toolenv.Step{Thought: thought})
	}
	return steps
}
