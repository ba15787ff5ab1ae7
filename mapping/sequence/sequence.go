package sequence

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/toolbench"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// The sequencing prompts.
var (
	promptFewShot = promptfile.MustLoad(promptFiles, "prompts/fewshot.txt")
	promptCoT     = promptfile.MustLoad(promptFiles, "prompts/cot.txt")
	promptReflect = promptfile.MustLoad(promptFiles, "prompts/reflect.txt")
)

// Prompts lists the sequencing prompts, for reports.
func Prompts() []promptfile.Prompt {
	return []promptfile.Prompt{promptFewShot, promptCoT, promptReflect}
}

// Chat is the model endpoint. *llm.Client implements it.
type Chat interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

// Retriever finds candidate tools for a query. probe.IndexRetriever
// implements it.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]*toolenv.Tool, error)
}

// The prompt styles.
const (
	FewShot = "fewshot"
	CoT     = "cot"
)

// Options configure a Sequencer.
type Options struct {
	Model string
	// Style is FewShot (default) or CoT.
	Style string
	// K is how many candidates are retrieved; default 10.
	K int
	// Shots is how many solved examples the prompt shows; default 3.
	Shots int
	// NoReflection skips the self-reflection pass.
	NoReflection bool
	// Mappings feed the reflection's mapping analysis; nil means none
	// (the reflection is still asked).
	Mappings *mapping.Set
	// Temperature and Seed are sent with every request; Seed also picks
	// the examples.
	Temperature float64
	Seed        int64
	MaxTokens   int
	Logger      *slog.Logger
}

// Outcome is one query's sequences and scores.
type Outcome struct {
	TaskID string `json:"task_id"`
	Query  string `json:"query"`
	// Candidates are the retrieved tools' names; Gold the gold APIs.
	Candidates []string `json:"candidates"`
	Gold       []string `json:"gold"`
	// RetrievalRecall is the share of gold APIs among the candidates.
	RetrievalRecall float64 `json:"retrieval_recall"`
	// Initial and Reflected are the sequences (tool names) before and
	// after reflection; Raw* the model's text.
	Initial      []string `json:"initial"`
	Reflected    []string `json:"reflected,omitempty"`
	InitialRaw   string   `json:"initial_raw,omitempty"`
	ReflectedRaw string   `json:"reflected_raw,omitempty"`
	// MappingInfo is the analysis the reflection was given.
	MappingInfo string `json:"mapping_info,omitempty"`
	// Set and Order score Initial; SetReflected and OrderReflected score
	// Reflected (Initial when there was no reflection).
	Set            metrics.PRF `json:"set"`
	Order          metrics.PRF `json:"order"`
	SetReflected   metrics.PRF `json:"set_reflected"`
	OrderReflected metrics.PRF `json:"order_reflected"`
	// Unknown lists answer entries that named no candidate.
	Unknown []string  `json:"unknown,omitempty"`
	Usage   llm.Usage `json:"usage"`
	Error   string    `json:"error,omitempty"`
}

// Sequencer sequences queries.
type Sequencer struct {
	chat Chat
	retr Retriever
	opts Options
	pool []*toolenv.Task
	tool func(name string) *toolenv.Tool
	log  *slog.Logger
}

// New returns a sequencer. pool holds solved tasks the prompts' examples
// are drawn from (a task is never its own example); tool resolves a tool
// by name, for rendering the examples' APIs.
func New(chat Chat, retr Retriever, pool []*toolenv.Task, tool func(name string) *toolenv.Tool, opts Options) *Sequencer {
	if opts.K <= 0 {
		opts.K = 10
	}
	if opts.Shots < 0 {
		opts.Shots = 0
	} else if opts.Shots == 0 {
		opts.Shots = 3
	}
	if opts.Style == "" {
		opts.Style = FewShot
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sequencer{chat: chat, retr: retr, opts: opts, pool: pool, tool: tool, log: log}
}

// Gold returns a task's gold APIs: StableToolBench's relevant APIs, else
// the tools of its gold calls, in order.
func Gold(t *toolenv.Task) []string {
	if rel, ok := t.Meta["relevant_apis"].([]any); ok && len(rel) > 0 {
		var out []string
		for _, r := range rel {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	var out []string
	for _, g := range t.Gold {
		out = append(out, g.Name)
	}
	return out
}

// Run sequences one task. It never returns nil.
func (s *Sequencer) Run(ctx context.Context, t *toolenv.Task) *Outcome {
	o := &Outcome{TaskID: t.ID, Query: t.Query, Gold: Gold(t)}
	tools, err := s.retr.Retrieve(ctx, t.Query, s.opts.K)
	if err != nil {
		o.Error = "retrieval: " + err.Error()
		return o
	}
	for _, tl := range tools {
		o.Candidates = append(o.Candidates, tl.Name)
	}
	o.RetrievalRecall = recall(o.Gold, o.Candidates)
	input := renderInput(t.Query, tools)
	examples := s.examples(t)
	tmpl := promptFewShot
	if s.opts.Style == CoT {
		tmpl = promptCoT
	}
	prompt := promptfile.Fill(tmpl.Text, map[string]string{"examples": examples.text, "input": input})
	text, ok := s.ask(ctx, o, prompt)
	if !ok {
		return o
	}
	o.InitialRaw = text
	o.Initial, o.Unknown = resolve(parseSequence(text), tools)
	o.Set, o.Order = metrics.SetPRF(o.Gold, o.Initial), metrics.OrderPRF(o.Gold, o.Initial)
	o.SetReflected, o.OrderReflected = o.Set, o.Order
	if s.opts.NoReflection {
		return o
	}
	o.MappingInfo = s.mappingInfo(o.Initial, tools)
	refl := promptfile.Fill(promptReflect.Text, map[string]string{
		"input0": examples.firstInput, "output0": examples.firstOutput, "input": input,
		"output": renderSequence(o.Initial, tools), "mapping_info": o.MappingInfo,
	})
	text, ok = s.ask(ctx, o, refl)
	if !ok {
		return o
	}
	o.ReflectedRaw = text
	var unknown []string
	o.Reflected, unknown = resolve(parseSequence(text), tools)
	o.Unknown = append(o.Unknown, unknown...)
	o.SetReflected, o.OrderReflected = metrics.SetPRF(o.Gold, o.Reflected), metrics.OrderPRF(o.Gold, o.Reflected)
	return o
}

func (s *Sequencer) ask(ctx context.Context, o *Outcome, prompt string) (string, bool) {
	temp := s.opts.Temperature
	resp, err := s.chat.Chat(ctx, &llm.Request{Model: s.opts.Model, Messages: []llm.Message{{Role: "user", Content: prompt}},
		Temperature: &temp, Seed: llm.Int(s.opts.Seed), MaxTokens: s.opts.MaxTokens})
	if err != nil {
		o.Error = "model: " + err.Error()
		s.log.Warn("sequence: the model failed", "task", o.TaskID, "err", err)
		return "", false
	}
	o.Usage.PromptTokens += resp.Usage.PromptTokens
	o.Usage.CompletionTokens += resp.Usage.CompletionTokens
	o.Usage.TotalTokens += resp.Usage.TotalTokens
	return resp.Text(), true
}

type shots struct {
	text                    string
	firstInput, firstOutput string
}

// examples draws the prompt's solved examples from the pool: the
// example's query with its offered APIs as input, its gold APIs as
// output. The choice is seeded by the run's seed and the task.
func (s *Sequencer) examples(t *toolenv.Task) shots {
	var cands []*toolenv.Task
	for _, p := range s.pool {
		if p.ID != t.ID && len(Gold(p)) > 0 {
			cands = append(cands, p)
		}
	}
	h := uint64(0)
	for _, c := range t.ID {
		h = h*31 + uint64(c)
	}
	r := rand.New(rand.NewPCG(uint64(s.opts.Seed), h))
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	if len(cands) > s.opts.Shots {
		cands = cands[:s.opts.Shots]
	}
	var out shots
	var b strings.Builder
	for i, ex := range cands {
		var tools []*toolenv.Tool
		names := ex.Tools
		if len(names) == 0 {
			names = Gold(ex)
		}
		for _, n := range names {
			if tl := s.tool(n); tl != nil {
				tools = append(tools, tl)
			}
		}
		in := renderInput(ex.Query, tools)
		outSeq := renderSequence(Gold(ex), tools)
		if i == 0 {
			out.firstInput, out.firstOutput = in, outSeq
		}
		fmt.Fprintf(&b, "EXAMPLE %d\n\nINPUT:\n%s\n\n", i+1, in)
		if s.opts.Style == CoT {
			fmt.Fprintf(&b, "THOUGHT:\n- From the user utterance, I understand that I need to call the following APIs:\n- %s\n\n", outSeq)
		}
		fmt.Fprintf(&b, "OUTPUT:\n%s\n\n", outSeq)
	}
	out.text = strings.TrimRight(b.String(), "\n")
	return out
}

// mappingInfo tells the reflection which mappings exist between the APIs
// of the initial answer and the candidates.
func (s *Sequencer) mappingInfo(seq []string, cands []*toolenv.Tool) string {
	byName := map[string]*toolenv.Tool{}
	byID := map[string]*toolenv.Tool{}
	for _, t := range cands {
		byName[t.Name], byID[t.ID] = t, t
	}
	var lines []string
	if s.opts.Mappings != nil {
		seen := map[string]bool{}
		for _, n := range seq {
			t := byName[n]
			if t == nil {
				continue
			}
			for _, m := range s.opts.Mappings.Alternatives(t.ID) {
				alt := byID[m.To]
				if alt == nil || seen[m.Key()] {
					continue
				}
				seen[m.Key()] = true
				lines = append(lines, fmt.Sprintf("- %s can be replaced by %s (mapping score %.2f, %d fields in common)", pairOf(t), pairOf(alt), m.Score, len(m.Inputs)+len(m.Outputs)))
			}
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("There are %d API mappings between your output and the candidate APIs: none of the APIs of your answer has an equivalent among the candidates.", 0)
	}
	return fmt.Sprintf("There are %d API mappings between your output and the candidate APIs:\n%s", len(lines), strings.Join(lines, "\n"))
}

// pairOf names a tool as the prompts do: ["tool_name", "api_name"].
func pairOf(t *toolenv.Tool) string {
	b, _ := json.Marshal([]string{t.GroupOrCollection(), t.TitleOrName()})
	return string(b)
}

// renderInput is the INPUT block: the utterance and the candidate APIs.
func renderInput(query string, tools []*toolenv.Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "User utterance: %s\nAPIs:\n", query)
	for _, t := range tools {
		var params []string
		for _, n := range t.Input.Names() {
			params = append(params, n)
		}
		d := strings.Join(strings.Fields(t.Description), " ")
		if r := []rune(d); len(r) > 160 {
			d = string(r[:160]) + "…"
		}
		fmt.Fprintf(&b, "- tool_name: %q, api_name: %q, description: %q, parameters: [%s]\n", t.GroupOrCollection(), t.TitleOrName(), d, strings.Join(params, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// renderSequence writes a sequence of tool names as [["tool", "api"], ...].
func renderSequence(names []string, tools []*toolenv.Tool) string {
	byName := map[string]*toolenv.Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if t := byName[n]; t != nil {
			parts = append(parts, pairOf(t))
		} else {
			b, _ := json.Marshal([]string{"", n})
			parts = append(parts, string(b))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// parseSequence reads [["tool", "api"], ...] (or ["api", ...], or a list
// of {"tool_name", "api_name"} objects) from model text: the last JSON
// list in it that reads as a sequence, Python literals accepted.
func parseSequence(text string) [][2]string {
	var best [][2]string
	for start := strings.IndexByte(text, '['); start >= 0; {
		end := matchBracket(text, start)
		if end < 0 {
			break
		}
		if seq := readSequence(text[start : end+1]); len(seq) > 0 {
			best = seq // keep the last: a CoT answer ends with its output
			start = strings.IndexByte(text[end+1:], '[')
			if start >= 0 {
				start += end + 1
			}
			continue
		}
		next := strings.IndexByte(text[start+1:], '[')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return best
}

func matchBracket(s string, start int) int {
	depth, inStr := 0, byte(0)
	for i := start; i < len(s); i++ {
		c := s[i]
		if inStr != 0 {
			if c == '\\' {
				i++
			} else if c == inStr {
				inStr = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			inStr = c
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func readSequence(s string) [][2]string {
	v, err := toolbench.ParsePyLiteral(s)
	if err != nil {
		var j any
		if toolenv.DecodeJSON([]byte(s), &j) != nil {
			return nil
		}
		v = j
	}
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out [][2]string
	for _, e := range list {
		switch x := e.(type) {
		case []any:
			if len(x) == 2 {
				a, _ := x[0].(string)
				b, _ := x[1].(string)
				if b != "" {
					out = append(out, [2]string{a, b})
				}
			}
		case string:
			if x != "" {
				out = append(out, [2]string{"", x})
			}
		case map[string]any:
			a, _ := x["tool_name"].(string)
			b, _ := x["api_name"].(string)
			if b != "" {
				out = append(out, [2]string{a, b})
			}
		}
	}
	return out
}

// resolve maps answer entries to candidate tool names: by tool and API
// name, by API name or function name alone when unique.
func resolve(seq [][2]string, cands []*toolenv.Tool) (names, unknown []string) {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	byPair := map[string]string{}
	byAPI := map[string][]string{}
	for _, t := range cands {
		byPair[norm(t.GroupOrCollection())+"\x00"+norm(t.TitleOrName())] = t.Name
		byAPI[norm(t.TitleOrName())] = append(byAPI[norm(t.TitleOrName())], t.Name)
		byAPI[norm(t.Name)] = append(byAPI[norm(t.Name)], t.Name)
		if std := toolbench.APIName(t.TitleOrName()); std != norm(t.TitleOrName()) {
			byAPI[std] = append(byAPI[std], t.Name)
		}
	}
	for _, p := range seq {
		if n, ok := byPair[norm(p[0])+"\x00"+norm(p[1])]; ok {
			names = append(names, n)
			continue
		}
		if ns := uniq(byAPI[norm(p[1])]); len(ns) == 1 {
			names = append(names, ns[0])
			continue
		}
		unknown = append(unknown, p[0]+"/"+p[1])
	}
	return names, unknown
}

func uniq(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func recall(gold, cands []string) float64 {
	if len(gold) == 0 {
		return 1
	}
	in := map[string]bool{}
	for _, c := range cands {
		in[c] = true
	}
	n := 0
	seen := map[string]bool{}
	for _, g := range gold {
		if in[g] && !seen[g] {
			n++
		}
		seen[g] = true
	}
	return float64(n) / float64(len(seen))
}
