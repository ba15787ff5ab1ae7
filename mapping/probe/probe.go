package probe

import (
	"context"
	"embed"
	"fmt"
	"log/slog"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// The probe's prompts.
var (
	promptMap     = promptfile.MustLoad(promptFiles, "prompts/map.txt")
	promptReflect = promptfile.MustLoad(promptFiles, "prompts/reflect.txt")
	promptRepair  = promptfile.MustLoad(promptFiles, "prompts/repair.txt")
)

// Prompts lists the probe's prompts, for reports.
func Prompts() []promptfile.Prompt {
	return []promptfile.Prompt{promptMap, promptReflect, promptRepair}
}

// Chat is the model endpoint. *llm.Client implements it.
type Chat interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ Chat = (*llm.Client)(nil)

// Retriever finds the tools a query is about.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]*toolenv.Tool, error)
}

// Query is one user request to probe mappings for.
type Query struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Options configure a probe.
type Options struct {
	// Model is the model name sent with each request.
	Model string
	// K is how many tools are retrieved per query; default 10.
	K int
	// Neighbours, when set, gives a tool's neighbours in the operation
	// graph; up to MaxNeighbours of them join the candidates, so that
	// operations sharing fields are mapped together.
	Neighbours    func(toolID string) []string
	MaxNeighbours int
	// Tool resolves a neighbour's ID to its tool (needed with Neighbours).
	Tool func(id string) *toolenv.Tool
	// NoReflection skips the self-reflection pass.
	NoReflection bool
	// Evidence, when set, gives structural mappings among the candidates
	// to show the model during reflection.
	Evidence *mapping.Set
	// Temperature and Seed are sent with every request (default 0 and 0).
	Temperature float64
	Seed        int64
	// MaxTokens bounds each answer; 0 means the server's default.
	MaxTokens int
	// Logger logs failures; nil discards.
	Logger *slog.Logger
}

// Failure is a step whose model output could not be read.
type Failure struct {
	// Stage is "llm" or "reflection".
	Stage string `json:"stage"`
	Error string `json:"error"`
	// Raw is the model's text, as received.
	Raw string `json:"raw"`
}

// Result is what the probe found for one query.
type Result struct {
	Query Query `json:"query"`
	// Candidates are the IDs of the tools shown to the model, retrieved
	// first, then neighbours.
	Candidates []string `json:"candidates"`
	// Initial are the model's first mappings (provenance llm);
	// Reflected its revised ones (provenance reflection).
	Initial   []*mapping.Mapping `json:"initial"`
	Reflected []*mapping.Mapping `json:"reflected"`
	// Critique is the reflection's own account of what it changed.
	Critique string `json:"critique,omitempty"`
	// Repaired counts answers that needed repair (local or a re-ask).
	Repaired int `json:"repaired,omitempty"`
	// Notes say what was dropped from the answers and why.
	Notes    []string  `json:"notes,omitempty"`
	Failures []Failure `json:"failures,omitempty"`
	// Usage counts the tokens of every request.
	Usage   llm.Usage     `json:"usage"`
	Calls   int           `json:"calls"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Error is set when the query could not be probed at all (retrieval
	// or the model endpoint failed).
	Error string `json:"error,omitempty"`
}

// Final returns the mappings to keep: the reflected ones when reflection
// ran and was read (Reflected is then non-nil, possibly empty), else the
// first ones.
func (r *Result) Final() []*mapping.Mapping {
	if r.Reflected != nil {
		return r.Reflected
	}
	return r.Initial
}

// Probe probes queries with one model and retriever.
type Probe struct {
	chat Chat
	retr Retriever
	opts Options
	log  *slog.Logger
}

// New returns a probe.
func New(chat Chat, retr Retriever, opts Options) *Probe {
	if opts.K <= 0 {
		opts.K = 10
	}
	if opts.MaxNeighbours <= 0 {
		opts.MaxNeighbours = 5
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Probe{chat: chat, retr: retr, opts: opts, log: log}
}

// RunAll probes qs in order and returns their results, calling progress
// (when not nil) after each. A canceled ctx stops between queries: the
// results are those of the queries probed.
func (p *Probe) RunAll(ctx context.Context, qs []Query, progress func(done, total int)) []*Result {
	var out []*Result
	for i, q := range qs {
		if ctx.Err() != nil {
			break
		}
		out = append(out, p.Run(ctx, q))
		if progress != nil {
			progress(i+1, len(qs))
		}
	}
	return out
}

// Run probes one query: retrieval, mapping, reflection. It never returns
// nil; failures are recorded in the result.
func (p *Probe) Run(ctx context.Context, q Query) *Result {
	start := time.Now()
	r := &Result{Query: q}
	defer func() { r.Elapsed = time.Since(start) }()
	tools, err := p.retr.Retrieve(ctx, q.Text, p.opts.K)
	if err != nil {
		r.Error = "retrieval: " + err.Error()
		return r
	}
	tools = p.withNeighbours(tools)
	cands := newCandidates(tools)
	r.Candidates = cands.ids
	if len(cands.ids) < 2 {
		r.Error = fmt.Sprintf("retrieval found %d tool(s): nothing to map", len(cands.ids))
		return r
	}
	docs := renderCandidates(cands)
	prompt := promptfile.Fill(promptMap.Text, map[string]string{"query": q.Text, "candidates": docs})
	msgs := []llm.Message{{Role: "user", Content: prompt}}
	a, msgs, ok := p.ask(ctx, r, "llm", msgs)
	if !ok {
		return r
	}
	var notes []string
	r.Initial, notes = cands.mappings(a, mapping.LLM, q.ID)
	r.Notes = append(r.Notes, notes...)
	if p.opts.NoReflection {
		return r
	}
	refl := promptfile.Fill(promptReflect.Text, map[string]string{
		"query": q.Text, "candidates": docs, "mappings": renderMappings(r.Initial), "evidence": dropped(notes) + p.evidence(cands),
	})
	msgs = append(msgs, llm.Message{Role: "user", Content: refl})
	a, _, ok = p.ask(ctx, r, "reflection", msgs)
	if !ok {
		return r
	}
	r.Critique = a.Critique
	r.Reflected, notes = cands.mappings(a, mapping.Reflection, q.ID)
	if r.Reflected == nil {
		r.Reflected = []*mapping.Mapping{}
	}
	for _, m := range r.Reflected {
		if m.Reasoning == "" {
			m.Reasoning = a.Critique
		}
	}
	r.Notes = append(r.Notes, notes...)
	return r
}

// ask sends msgs and reads a mapping answer, repairing it locally or by
// asking once more with the error. It returns the conversation so far.
func (p *Probe) ask(ctx context.Context, r *Result, stage string, msgs []llm.Message) (*answer, []llm.Message, bool) {
	for attempt := 0; attempt < 2; attempt++ {
		temp := p.opts.Temperature
		resp, err := p.chat.Chat(ctx, &llm.Request{Model: p.opts.Model, Messages: msgs, Temperature: &temp, Seed: llm.Int(p.opts.Seed), MaxTokens: p.opts.MaxTokens})
		r.Calls++
		if err != nil {
			r.Error = stage + ": model: " + err.Error()
			p.log.Warn("probe: the model failed", "query", r.Query.ID, "stage", stage, "err", err)
			return nil, msgs, false
		}
		r.Usage.PromptTokens += resp.Usage.PromptTokens
		r.Usage.CompletionTokens += resp.Usage.CompletionTokens
		r.Usage.TotalTokens += resp.Usage.TotalTokens
		text := resp.Text()
		msgs = append(msgs, llm.Message{Role: "assistant", Content: text})
		a, repaired, err := parseAnswer(text)
		if err == nil {
			if repaired || attempt > 0 {
				r.Repaired++
			}
			return a, msgs, true
		}
		r.Failures = append(r.Failures, Failure{Stage: stage, Error: err.Error(), Raw: text})
		p.log.Warn("probe: unreadable answer", "query", r.Query.ID, "stage", stage, "attempt", attempt+1, "err", err)
		msgs = append(msgs, llm.Message{Role: "user", Content: promptfile.Fill(promptRepair.Text, map[string]string{"error": err.Error()})})
	}
	return nil, msgs, false
}

// dropped tells the model what of its answer was dropped, for the
// reflection.
func dropped(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "\nThese parts of your answer named APIs or fields that are not in the documentation and were dropped:\n- " + strings.Join(notes, "\n- ") + "\n"
}

// withNeighbours adds up to MaxNeighbours operation-graph neighbours of
// the retrieved tools.
func (p *Probe) withNeighbours(tools []*toolenv.Tool) []*toolenv.Tool {
	if p.opts.Neighbours == nil || p.opts.Tool == nil {
		return tools
	}
	have := map[string]bool{}
	for _, t := range tools {
		have[t.ID] = true
	}
	added := 0
	out := tools
	for _, t := range tools {
		for _, n := range p.opts.Neighbours(t.ID) {
			if added >= p.opts.MaxNeighbours {
				return out
			}
			if have[n] {
				continue
			}
			if nt := p.opts.Tool(n); nt != nil {
				have[n] = true
				out = append(out, nt)
				added++
			}
		}
	}
	return out
}

// evidence lists the structural mappings among the candidates for the
// reflection prompt.
func (p *Probe) evidence(c *candidates) string {
	if p.opts.Evidence == nil {
		return ""
	}
	var lines []string
	for _, id := range c.ids {
		for _, m := range p.opts.Evidence.Alternatives(id) {
			if _, ok := c.byID[m.To]; !ok || m.From > m.To {
				continue
			}
			var fs []string
			for _, f := range m.Inputs {
				fs = append(fs, f.From+"="+f.To)
			}
			lines = append(lines, fmt.Sprintf("- %s and %s (score %.2f; parameters %s)", m.From, m.To, m.Score, strings.Join(fs, ", ")))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "\nA structural comparison of the documentation (names, types, descriptions) suggests these equivalences; check them too:\n" + strings.Join(lines, "\n") + "\n"
}

// renderCandidates documents the candidates for the prompts.
func renderCandidates(c *candidates) string {
	var b strings.Builder
	for i, id := range c.ids {
		t := c.byID[id]
		p := c.profiles[id]
		fmt.Fprintf(&b, "[%d] id: %s\n", i+1, id)
		if t.Title != "" && t.Title != t.Name {
			fmt.Fprintf(&b, "    name: %s\n", t.Title)
		}
		if t.Group != "" {
			fmt.Fprintf(&b, "    api: %s\n", t.Group)
		}
		if d := oneLine(t.Description, 300); d != "" {
			fmt.Fprintf(&b, "    description: %s\n", d)
		}
		var params []string
		for _, f := range p.Inputs {
			s := f.Path
			if f.Type != "" {
				s += " (" + f.Type
				if f.Required {
					s += ", required"
				}
				s += ")"
			}
			if d := oneLine(f.Description, 80); d != "" {
				s += ": " + d
			}
			params = append(params, s)
		}
		if len(params) == 0 {
			params = []string{"none"}
		}
		fmt.Fprintf(&b, "    parameters: %s\n", strings.Join(params, "; "))
		var outs []string
		for j, f := range p.Outputs {
			if j == 30 {
				outs = append(outs, fmt.Sprintf("… %d more", len(p.Outputs)-30))
				break
			}
			outs = append(outs, f.Path)
		}
		if len(outs) > 0 {
			fmt.Fprintf(&b, "    response fields: %s\n", strings.Join(outs, ", "))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}
