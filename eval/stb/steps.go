package stb

import (
	"fmt"
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// Steps returns the answer_steps and final_step strings that
// eval_pass_rate.py's get_steps builds from a converted answer: for each
// tool node of the chain, "Step n: " followed by Python's str of its
// message dict, one per line, and "Final step: " followed by the last
// one's.
func Steps(a *ConvertedAnswer) (answerSteps, finalStep string) {
	var steps []string
	n := 1
	for _, node := range a.Chain() {
		if node.Role != "tool" {
			continue
		}
		s := messageStr(node.Message)
		if s == "" {
			continue
		}
		steps = append(steps, fmt.Sprintf("Step %d: %s", n, s))
		finalStep = "Final step: " + s
		n++
	}
	return strings.Join(steps, "\n"), finalStep
}

// messageStr is Python's str of a node's message.
func messageStr(m any) string {
	switch x := m.(type) {
	case *ToolMessage:
		return pyfmt.Repr(pyfmt.Dict{{Key: "name", Value: x.Name}, {Key: "arguments", Value: x.Arguments}, {Key: "response", Value: x.Response}})
	case string:
		return x
	case nil:
		return ""
	}
	return fmt.Sprint(m)
}

// HasFinish reports whether the answer's last tool call is Finish: the
// test eval_pass_rate.py makes ("'name': 'Finish'" in final_step) before
// asking a judge; without it the answer is Unsolved.
func HasFinish(a *ConvertedAnswer) bool {
	_, final := Steps(a)
	return strings.Contains(final, "'name': 'Finish'")
}
