package agent

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent/parse"
	"github.com/toolenv/toolenv/llm"
)

// CoT is ToolBench's single-chain runner (CoT@N): the model calls
// functions natively, one state after another, until it calls Finish. A
// chain that gives up (Finish with give_up_and_restart) is abandoned and,
// with Tries > 1, started again.
type CoT struct {
	// MaxSteps is ToolBench's single_chain_max_step: the chain's length in
	// nodes (each thought, function name and function input is one node);
	// 0 means 12.
	MaxSteps int
	// Tries is N of CoT@N; 0 means 1.
	Tries int
	// MaxObservation is ToolBench's max_observation_length (bytes of a
	// function's response shown to the model); 0 means 1024.
	MaxObservation int
	// StrictTools offers the tools as OpenAI strict functions
	// (OfferedTools).
	StrictTools bool
}

var _ Agent = CoT{}

// Name returns "cot".
func (CoT) Name() string { return "cot" }

// Run runs up to Tries chains.
func (a CoT) Run(ctx context.Context, ep *Episode) *Outcome {
	o := newOutcome(a.Name(), ep)
	o.Parsed = true
	r := newToolbenchRun(ep, o, a.MaxObservation, a.StrictTools)
	maxSteps, tries := a.MaxSteps, a.Tries
	if maxSteps <= 0 {
		maxSteps = 12
	}
	if tries <= 0 {
		tries = 1
	}
	gaveUp := false
	for try := 0; try < tries; try++ {
		gaveUp = false
		if try > 0 {
			o.EarlierTries = append(o.EarlierTries, o.Trajectory.Steps)
			o.Trajectory.Steps = []toolenv.Step{}
		}
		msgs := r.initialMessages()
		for depth := 0; depth < maxSteps && !gaveUp; {
			resp, err := o.chat(ctx, ep, r.request(msgs))
			if err != nil {
				r.finishOutcome()
				return o
			}
			o.Loops++
			msg := resp.Choices[0].Message
			msgs = append(msgs, llm.Message{Role: "assistant", Content: msg.Content, ToolCalls: msg.ToolCalls})
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				depth++ // a Thought node (an empty answer counts, so the chain ends)
			}
			thought := msg.Content
			if len(msg.ToolCalls) == 0 {
				o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{Thought: thought})
				continue
			}
			for _, tc := range msg.ToolCalls {
				depth += 2 // Action and Action Input
				obs, code := r.step(ctx, tc.Function.Name, tc.Function.Arguments)
				if o.Canceled {
					return o
				}
				args, _ := parse.ArgsFromString(tc.Function.Arguments)
				o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{
					Thought: thought, Call: &toolenv.GoldCall{Name: tc.Function.Name, Args: args},
					Observation: obs, Status: codeStatus(code), Raw: tc.Function.Arguments,
				})
				thought = ""
				msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Function.Name, Content: obs})
				if code == codeFinalAnswer {
					r.finishOutcome()
					return o
				}
				if code == codeGiveUp {
					gaveUp = true
					break
				}
			}
		}
	}
	// The last chain ended without an answer: it gave up, or it reached
	// the step limit.
	r.gaveUp = gaveUp
	o.OutOfBudget = !gaveUp
	r.finishOutcome()
	return o
}

// codeStatus maps a ToolBench observation code to a step status.
func codeStatus(code int) toolenv.Status {
	switch code {
	case codeOK, codeFinalAnswer, codeGiveUp:
		return toolenv.StatusOK
	case codeNoSuchTool:
		return toolenv.StatusUnknownTool
	case codeBadFinish:
		return toolenv.StatusInvalidArguments
	}
	return toolenv.StatusUpstreamError
}
