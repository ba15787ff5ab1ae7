package parse

import (
	"fmt"
	"regexp"
	"strings"
)

// Step is one ReAct turn: a thought, then either an action with its input
// or a final answer.
type Step struct {
	Thought string `json:"thought,omitempty"`
	// Action is the tool to call; empty for a final answer.
	Action string `json:"action,omitempty"`
	// Input is the action's arguments; InputRaw is the text they were
	// read from. InputProblem says why the text could not be read as an
	// object (the call is then made with no arguments).
	Input        map[string]any `json:"input,omitempty"`
	InputRaw     string         `json:"input_raw,omitempty"`
	InputProblem string         `json:"input_problem,omitempty"`
	// Final is the final answer when IsFinal.
	Final   string `json:"final,omitempty"`
	IsFinal bool   `json:"is_final,omitempty"`
}

var (
	reactActionRE  = regexp.MustCompile(`(?mi)^[ \t*]*Action[ \t*]*:[ \t*]*(.*)$`)
	reactInputRE   = regexp.MustCompile(`(?mi)^[ \t*]*Action[ \t]+Input[ \t*]*:[ \t*]*`)
	reactFinalRE   = regexp.MustCompile(`(?mi)^[ \t*]*Final[ \t]+Answer[ \t*]*:[ \t*]*`)
	reactObsRE     = regexp.MustCompile(`(?mi)^[ \t*]*Observation[ \t*]*:`)
	reactThoughtRE = regexp.MustCompile(`(?i)^\s*Thought\s*:\s*`)
	reactNextRE    = regexp.MustCompile(`(?mi)^[ \t*]*(Thought|Action|Final[ \t]+Answer)[ \t*]*:`)
)

// ReAct reads one turn of a ReAct agent written in the format of Live
// API-Bench's Appendix F:
//
//	Thought: ...
//	Action: tool_name
//	Action Input: {"key": "value"}
//
// or "Final Answer: ...". Anything from an "Observation:" line on is the
// model imagining the tool's answer and is dropped. When both an action
// and a final answer appear, the one written first wins. The error, when
// neither can be found, wraps ErrUnparseable.
func ReAct(text string) (Step, error) {
	text = clean(text)
	if loc := reactObsRE.FindStringIndex(text); loc != nil {
		text = text[:loc[0]]
	}
	act := reactActionRE.FindStringSubmatchIndex(text)
	fin := reactFinalRE.FindStringIndex(text)
	var s Step
	switch {
	case fin != nil && (act == nil || fin[0] < act[0]):
		s.Thought = thought(text[:fin[0]])
		s.Final = strings.TrimSpace(text[fin[1]:])
		s.IsFinal = true
		return s, nil
	case act == nil:
		return Step{}, fmt.Errorf("%w: no \"Action:\" or \"Final Answer:\" line in %q", ErrUnparseable, snippet(text))
	}
	s.Thought = thought(text[:act[0]])
	s.Action = cleanName(text[act[2]:act[3]])
	if s.Action == "" {
		return Step{}, fmt.Errorf("%w: the \"Action:\" line names no tool", ErrUnparseable)
	}
	rest := text[act[1]:]
	if in := reactInputRE.FindStringIndex(rest); in != nil {
		raw := rest[in[1]:]
		if next := reactNextRE.FindStringIndex(raw); next != nil && next[0] > 0 {
			raw = raw[:next[0]]
		}
		raw = strings.TrimSpace(raw)
		if m := fenceRE.FindStringSubmatch(raw); m != nil {
			raw = strings.TrimSpace(m[1])
		}
		s.InputRaw = raw
		s.Input, s.InputProblem = ArgsFromString(raw)
		if s.InputProblem != "" {
			// A JSON object followed by more text: take the object.
			if calls := firstObject(raw); calls != nil {
				s.Input, s.InputProblem = calls, ""
			}
		}
	} else {
		s.Input = map[string]any{}
	}
	return s, nil
}

// firstObject returns the first JSON or Python object at the start of s.
func firstObject(s string) map[string]any {
	v, n, err := parsePythonPrefix(s)
	if err != nil || n == 0 {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

func thought(s string) string {
	return strings.TrimSpace(reactThoughtRE.ReplaceAllString(strings.TrimSpace(s), ""))
}

// cleanName trims what models put around a tool name: backticks, quotes,
// asterisks, a trailing "()" or period.
func cleanName(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "`*\"' ")
	s = strings.TrimSuffix(s, "()")
	s = strings.TrimSuffix(s, ".")
	if i := strings.IndexAny(s, " \t("); i > 0 {
		s = s[:i]
	}
	return s
}
