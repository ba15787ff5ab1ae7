package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent/parse"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/openai"
)

// The direct agent's prompt styles.
const (
	// StyleNestful is Live API-Bench's prompt for SLOT and SEL: a JSON
	// list of labelled calls, in-context examples.
	StyleNestful = "nestful"
	// StyleBFCL is its prompt for REST: a Python list of calls.
	StyleBFCL = "bfcl"
)

// Direct asks the model once for the whole call sequence and executes
// it.
type Direct struct {
	// Style is StyleNestful or StyleBFCL; empty chooses by the
	// collection's kind (NESTful for nl2sql-slot and nl2sql-sel).
	Style string
	// NativeTools offers the tools through the request's tools field
	// instead of listing them in the prompt (Live API-Bench's "Tools"
	// setting for GPT-4o).
	NativeTools bool
	// StrictTools offers the native tools as OpenAI strict functions
	// (OfferedTools).
	StrictTools bool
	// Examples is how many in-context examples the NESTful style shows;
	// 0 means 3, negative none.
	Examples int
	// MaxObservation bounds each observation kept in the trajectory.
	MaxObservation int
}

var _ Agent = Direct{}

// Name returns "direct".
func (Direct) Name() string { return "direct" }

// StyleFor returns the style the direct agent uses for a collection
// kind.
func StyleFor(kind string) string {
	switch kind {
	case "nl2sql-slot", "nl2sql-sel":
		return StyleNestful
	}
	return StyleBFCL
}

// Run asks for the sequence, parses it and executes the well-formed
// calls in order, stopping at the first failure.
func (a Direct) Run(ctx context.Context, ep *Episode) *Outcome {
	o := newOutcome(a.Name(), ep)
	style := a.Style
	if style == "" {
		kind := ""
		if ep.Collection != nil {
			kind = ep.Collection.Kind
		}
		style = StyleFor(kind)
	}
	tools := ep.Session.Tools()
	req := &llm.Request{Messages: a.messages(ep, style, tools)}
	if a.NativeTools {
		req.Tools = OfferedTools(tools, a.StrictTools)
	}
	resp, err := o.chat(ctx, ep, req)
	if err != nil {
		return o
	}
	msg := resp.Choices[0].Message
	o.Loops = 1
	raw := msg.Content
	if len(msg.ToolCalls) > 0 {
		b, _ := json.Marshal(msg.ToolCalls)
		raw = strings.TrimSpace(raw + "\n" + string(b))
	}
	o.Trajectory.Steps = append(o.Trajectory.Steps, toolenv.Step{Thought: "(the model's answer)", Raw: raw})
	r, perr := parse.Calls(msg.Content, msg.ToolCalls)
	if perr != nil {
		o.ParseError = perr.Error()
		o.Trajectory.Steps[0].Observation = "not parsed: " + perr.Error()
		return o
	}
	o.Parsed = true
	o.Malformed = r.Malformed()
	calls := r.WellFormed()
	for i := range calls {
		calls[i] = SplitLabel(toolNamed(ep.Session, calls[i].Name), calls[i])
	}
	executeCalls(ctx, ep, o, calls, obsLimit(a.MaxObservation))
	if o.Malformed > 0 {
		o.Trajectory.Finished = false
	}
	return o
}

func (a Direct) messages(ep *Episode, style string, tools []*toolenv.Tool) []llm.Message {
	functions := "(given to you as tools)"
	if !a.NativeTools {
		if fl, ok := ep.Session.(functionLister); ok {
			functions = fl.FunctionsJSON(tools)
		} else {
			functions = FunctionsJSON(tools)
		}
	}
	var system string
	switch style {
	case StyleNestful:
		n := a.Examples
		if n == 0 {
			n = 3
		}
		system = fill(promptDirectNestful.Text, map[string]string{
			"start":     StartLabel(ep.Task),
			"functions": functions,
			"examples":  renderExamples(pickExamples(ep, n)),
		})
	default:
		system = fill(promptDirectBFCL.Text, map[string]string{"functions": functions})
	}
	return []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: UserQuery(ep.Task)}}
}

// UserQuery is the question as the user asks it, with BIRD's evidence
// when the task has some.
func UserQuery(t *toolenv.Task) string {
	if t.Evidence != "" {
		return t.Query + "\nEvidence: " + t.Evidence
	}
	return t.Query
}

// StartLabel is the label the task's starting data is stored under (the
// label of its last initialisation call), "starting_table" by default.
func StartLabel(t *toolenv.Task) string {
	label := "starting_table"
	for _, c := range InitCalls(t) {
		if l := c.Label; l != "" {
			label = l
		} else if l, ok := c.Args["label"].(string); ok && l != "" {
			label = l
		}
	}
	return label
}

// functionLister is a session whose environment keeps each tool's
// function definition across episodes (Local does): FunctionsJSON(tools)
// without encoding every tool's schema again for every episode.
type functionLister interface {
	FunctionsJSON(tools []*toolenv.Tool) string
}

// FunctionsJSON lists tools as OpenAI function definitions, one JSON
// object per line.
func FunctionsJSON(tools []*toolenv.Tool) string { return functionsJSON(tools, functionJSON) }

// functionJSON is one tool as an OpenAI function definition, on one line.
func functionJSON(t *toolenv.Tool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(openai.FromTool(t).Function)
	return strings.TrimSpace(buf.String())
}

// functionsJSON is FunctionsJSON with each tool's line from one.
func functionsJSON(tools []*toolenv.Tool, one func(*toolenv.Tool) string) string {
	lines := make([]string, len(tools))
	n := 3
	for i, t := range tools {
		lines[i] = one(t)
		n += len(lines[i]) + 2
	}
	var b strings.Builder
	b.Grow(n) // the prompt of a large collection is long: no copying as it grows
	b.WriteString("[\n")
	for i := range tools {
		b.WriteString(lines[i])
		if i < len(tools)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]")
	return b.String()
}

// pickExamples chooses up to n in-context examples from ep.Examples,
// other than the task itself and with a gold sequence, preferring the
// task's group (its database), with the episode's seed.
func pickExamples(ep *Episode, n int) []*toolenv.Task {
	if n <= 0 {
		return nil
	}
	var same, other []*toolenv.Task
	for _, t := range ep.Examples {
		if t.ID == ep.Task.ID || len(t.Gold) == 0 {
			continue
		}
		if t.Group == ep.Task.Group {
			same = append(same, t)
		} else {
			other = append(other, t)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(ep.Seed), hashString(ep.Task.ID)))
	rng.Shuffle(len(same), func(i, j int) { same[i], same[j] = same[j], same[i] })
	rng.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
	out := append(same, other...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func renderExamples(ts []*toolenv.Task) string {
	if len(ts) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(t.Gold)
		fmt.Fprintf(&b, "Question: %s\nAnswer: %s", UserQuery(t), strings.TrimSpace(buf.String()))
	}
	return b.String()
}
