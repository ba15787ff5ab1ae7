package episode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// ResetOptions choose an episode's task and shape it. They are the
// fields of OpenEnv's reset message ({"type": "reset", "data": {...}}),
// of POST /reset's body and of the MCP episode URL's query. The zero value
// picks the first task of the only collection that has tasks.
type ResetOptions struct {
	// Collection names the task's collection; it may be left out when
	// one collection only has tasks, or when TaskID is unique.
	Collection string `json:"collection,omitempty"`
	// TaskID picks the task by id. Without it, a task of Split (all the
	// collection's tasks when empty) is drawn with Seed.
	TaskID string `json:"task_id,omitempty"`
	// Split is a task group: a BIRD database, a StableToolBench
	// query group (G1_instruction, ...), the Group of tasks.jsonl.
	Split string `json:"split,omitempty"`
	// Seed draws the task of a split, and seeds the perturbation and the
	// episode's faults: the same seed and actions give the same
	// observations and rewards. Nil means 0.
	Seed *int64 `json:"seed,omitempty"`
	// Version is the collection version the episode expects (a drifted
	// collection is "2", "3", ...): an episode is refused when the server
	// serves another one, rather than run against tools it did not ask
	// for. Empty accepts the version served.
	Version string `json:"version,omitempty"`
	// Perturbation rewrites the query (perturb modes distractor,
	// case_mix, punctuation; paraphrase needs a model and is not offered
	// here), seeded by Seed.
	Perturbation string `json:"perturbation,omitempty"`
	// Faults are operational faults of this episode alone (the JSON of
	// --faults, see docs/drift.md), drawn from Seed and the episode's
	// own calls and clock: time advances StepTime per step, and injected
	// latency advances it instead of being slept.
	Faults json.RawMessage `json:"faults,omitempty"`
	// Feedback is how much a rejected call is told: none, terse or
	// helpful ("" keeps the collection's policy).
	Feedback string `json:"feedback,omitempty"`
	// MaxSteps ends the episode, truncated, after this many steps (nil:
	// Options.MaxSteps); at least 1, at most Options.MaxStepsCeiling.
	MaxSteps *int `json:"max_steps,omitempty"`
	// ToolFormat is how the first observation writes the tools:
	// "openai" (function JSON, the default) or "mcp" (MCP tool
	// definitions).
	ToolFormat string `json:"tool_format,omitempty"`
	// Reward says how the episode is rewarded.
	Reward Reward `json:"reward,omitzero"`
	// EpisodeID is the client's own name for the episode (OpenEnv's
	// episode_id), kept in its state and records. The id that addresses
	// the episode is always the one the server issues.
	EpisodeID string `json:"episode_id,omitempty"`
	// Client is the key the client's share of Options.Max is counted by
	// (guard.ClientKey: its token, or its address without tokens); empty
	// means the principal. It is not a reset option: the front-end sets
	// it.
	Client string `json:"-"`
}

// Reward is how an episode is rewarded: the success measure, added to
// the last step's reward, and the costs subtracted from every step's.
// An episode's return is the sum of its steps' rewards.
type Reward struct {
	// Success is the measure of the episode's outcome, in [0, 1]:
	//
	//   - completion: 1 when the answer equals the task's verified gold
	//     answer (the evaluation harness's check, eval/answer), else 0;
	//   - intent_f1, slot_f1: Live API-Bench's position-aware intent or
	//     slot F1 of the calls made against the gold sequence;
	//   - sequence_match, full_sequence_match: NESTful's partial and full
	//     sequence match against the gold sequence;
	//   - api_f1: F1 of the APIs called against the task's solvable API
	//     list (StableToolBench's relevant APIs) or the gold sequence's;
	//   - pass_rate: StableToolBench's judge (its SoPR prompts, through
	//     Options.Judge): 1 for Solved, 0.5 for Unsure, 0 for Unsolved;
	//   - none: 0 (costs only).
	//
	// Empty means completion when the task has a gold answer, else
	// api_f1 (the episode's info says which, and why).
	Success string `json:"success,omitempty"`
	// StepCost is subtracted from every step's reward.
	StepCost float64 `json:"step_cost,omitempty"`
	// Penalty is subtracted for every failed call, by its status
	// (invalid_arguments, unknown_tool, not_found, rate_limited,
	// timeout, ...); "*" stands for every status not listed.
	Penalty map[string]float64 `json:"penalty,omitempty"`
}

// The success measures of Reward.Success.
const (
	Completion        = "completion"
	IntentF1          = "intent_f1"
	SlotF1            = "slot_f1"
	SequenceMatch     = "sequence_match"
	FullSequenceMatch = "full_sequence_match"
	APIF1             = "api_f1"
	PassRate          = "pass_rate"
	NoSuccess         = "none"
	// StateSuccess rewards the state the episode leaves (eval/endstate): 1 when
	// every check the task has holds — its end state, no collateral
	// change, its end-state checks, its answer — else 0. StateF1 is the
	// graded form: the F1 of the rows changed as the gold changes them.
	StateSuccess = "state"
	StateF1      = "state_f1"
)

// SuccessKinds lists the success measures.
var SuccessKinds = []string{Completion, IntentF1, SlotF1, SequenceMatch, FullSequenceMatch, APIF1, PassRate, StateSuccess, StateF1, NoSuccess}

// The tool formats of ResetOptions.ToolFormat.
const (
	FormatOpenAI = "openai"
	FormatMCP    = "mcp"
)

var resetKeys = []string{"collection", "task_id", "split", "seed", "version", "perturbation", "faults", "feedback", "max_steps", "tool_format", "reward", "episode_id"}

// ParseResetOptions reads reset options from JSON: an unknown key is an
// error naming the nearest known one (a typo must not silently reset to
// another task), and a value of the wrong type says which key.
func ParseResetOptions(data []byte) (*ResetOptions, error) {
	var o ResetOptions
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return &o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, badOption(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("reset options: trailing data after the JSON object", "send one JSON object")
	}
	if o.Seed != nil && *o.Seed < 0 {
		return nil, invalid(fmt.Sprintf("reset option seed %d: must be 0 or more", *o.Seed), "OpenEnv's seeds are non-negative integers")
	}
	return &o, nil
}

func badOption(err error) error {
	msg := err.Error()
	if k, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		k = strings.Trim(k, `"`)
		hint := "the reset options are " + strings.Join(resetKeys, ", ")
		if near := validate.Suggest(k, resetKeys); near != "" {
			hint = fmt.Sprintf("did you mean %q? (%s)", near, hint)
		}
		return invalid(fmt.Sprintf("unknown reset option %q", k), hint)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return invalid(fmt.Sprintf("reset option %s: a JSON %s cannot be a %s", te.Field, te.Value, te.Type), "see GET /schema for the reset options' types")
	}
	return invalid("reset options: "+msg, "send a JSON object such as {\"collection\": \"bird-slot\", \"task_id\": \"bird-717\"}")
}

// check rejects values no episode accepts.
func (o *ResetOptions) check() error {
	switch o.ToolFormat {
	case "", FormatOpenAI, FormatMCP:
	default:
		return invalid(fmt.Sprintf("tool_format %q", o.ToolFormat), "want openai (function JSON) or mcp (MCP tool definitions)")
	}
	switch o.Feedback {
	case "", toolenv.FeedbackNone, toolenv.FeedbackTerse, toolenv.FeedbackHelpful:
	default:
		return invalid(fmt.Sprintf("feedback %q", o.Feedback), "want none, terse or helpful")
	}
	if o.MaxSteps != nil && *o.MaxSteps <= 0 {
		return invalid(fmt.Sprintf("max_steps %d: an episode takes at least one step", *o.MaxSteps), "give a positive number of steps, or leave max_steps out for the server's default (--episode-max-steps)")
	}
	if s := o.Reward.Success; s != "" && !slices.Contains(SuccessKinds, s) {
		hint := "want one of " + strings.Join(SuccessKinds, ", ")
		if near := validate.Suggest(s, SuccessKinds); near != "" {
			hint = fmt.Sprintf("did you mean %q? (%s)", near, hint)
		}
		return invalid(fmt.Sprintf("reward.success %q", s), hint)
	}
	if o.Reward.StepCost < 0 {
		return invalid(fmt.Sprintf("reward.step_cost %g", o.Reward.StepCost), "a cost is subtracted: give it as a positive number")
	}
	for k, v := range o.Reward.Penalty {
		if v < 0 {
			return invalid(fmt.Sprintf("reward.penalty[%q] %g", k, v), "a penalty is subtracted: give it as a positive number")
		}
		if k != "*" && !knownStatus(k) {
			return invalid(fmt.Sprintf("reward.penalty names status %q", k), "name a call status ("+strings.Join(statuses, ", ")+") or \"*\" for every other")
		}
	}
	return nil
}

var statuses = []string{"invalid_arguments", "unknown_tool", "not_found", "unauthorized", "rate_limited", "timeout", "upstream_error", "unavailable", "gone", "bad_request", "too_large", "canceled", "internal"}

func knownStatus(s string) bool { return slices.Contains(statuses, s) }

// invalid is bad input: the request is refused and nothing changes.
func invalid(msg, hint string) *toolenv.Error {
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: msg, Hint: hint}
}
