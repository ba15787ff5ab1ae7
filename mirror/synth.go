package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/promptfile"
)

// SynthOptions configure the synthesize stage.
type SynthOptions struct {
	// Below makes an API long-tail: fewer kept pairs than this; default
	// 20. Target is how many kept pairs synthesis tops a long-tail API
	// up to; default Below.
	Below, Target int
	// Examples is how many real examples one request shows; default 10,
	// the paper's. An API with fewer shows what it has (at least one).
	Examples int
	// PerCall is how many pairs one request asks for; default 5.
	PerCall int
	// Rounds bounds the requests per API; default 2*ceil(Target/PerCall).
	Rounds int
	// Temperatures are cycled over the rounds, and the seed is Seed plus
	// the round: the paper varies both for diversity. Default 0.7, 0.8,
	// 0.9, 1.0.
	Temperatures []float64
	Seed         int64
	// NoDocCheck skips the documentation check of synthesized pairs.
	NoDocCheck bool
	// Workers is how many APIs are synthesized at once; default 4.
	Workers int
}

func (o *SynthOptions) defaults() {
	if o.Below <= 0 {
		o.Below = 20
	}
	if o.Target <= 0 {
		o.Target = o.Below
	}
	if o.Examples <= 0 {
		o.Examples = 10
	}
	if o.PerCall <= 0 {
		o.PerCall = 5
	}
	if o.Rounds <= 0 {
		o.Rounds = 2 * ((o.Target + o.PerCall - 1) / o.PerCall)
	}
	if len(o.Temperatures) == 0 {
		o.Temperatures = []float64{0.7, 0.8, 0.9, 1.0}
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
}

// SynthStats says what the synthesize stage did.
type SynthStats struct {
	// LongTail is how many APIs were long-tail (with at least one real
	// example to show); Asked how many requests this run made.
	LongTail int `json:"long_tail"`
	Asked    int `json:"asked"`
	// Added is how many synthesized pairs this run kept; Total how many
	// the dataset holds.
	Added int `json:"added"`
	Total int `json:"total"`
	// Rejected counts what was dropped, by reason.
	Rejected map[string]int `json:"rejected"`
	Skipped  bool           `json:"skipped,omitempty"` // no model
}

// synthProvenance is what a synthesized pair records of its making.
type synthProvenance struct {
	Model       string   `json:"model"`
	Seed        int64    `json:"seed"`
	Temperature float64  `json:"temperature"`
	Round       int      `json:"round"`
	Examples    []string `json:"examples"` // the real examples' canonical arguments
}

// Synthesize asks the model for more pairs of the long-tail APIs, from
// up to Examples real kept pairs each. A pair whose request exists with
// the same answer (a duplicate) or another one (a conflict), or that
// fails the documentation check, is dropped with its reason.
func (e *Engine) Synthesize(ctx context.Context, opts SynthOptions) (*SynthStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	st := &SynthStats{Rejected: map[string]int{}}
	if e.Model == nil {
		st.Skipped = true
		return st, nil
	}
	started := time.Now()
	stats, err := e.Store.PairStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	real, kept := map[string]int{}, map[string]int{}
	for _, s := range stats {
		if s.Filter != FilterKept {
			continue
		}
		kept[s.Tool] += s.Count
		if s.Origin == OriginReal {
			real[s.Tool] += s.Count
		}
	}
	var tools []string
	for _, tool := range sortedKeys(real) {
		if real[tool] > 0 && real[tool] < opts.Below && kept[tool] < opts.Target && e.tool(tool) != nil {
			tools = append(tools, tool)
		}
	}
	st.LongTail = len(tools)
	bar := e.bar(len(tools), "synthesize long-tail APIs")
	defer bar.Finish()
	var mu sync.Mutex
	work := make(chan string)
	errc := make(chan error, opts.Workers)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tool := range work {
				asked, added, rejected, err := e.synthesizeAPI(ctx, tool, kept[tool], opts)
				mu.Lock()
				st.Asked += asked
				st.Added += added
				for k, n := range rejected {
					st.Rejected[k] += n
				}
				mu.Unlock()
				if err != nil {
					errc <- err
					return
				}
				bar.Add(1)
			}
		}()
	}
feed:
	for _, tool := range tools {
		select {
		case work <- tool:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	if err == nil {
		err = <-errc
	}
	for _, s := range stats {
		if s.Origin == OriginSynthesized {
			st.Total += s.Count
		}
	}
	st.Total += st.Added
	if err != nil {
		return st, fmt.Errorf("synthesize: %w", err)
	}
	e.stageDone(ctx, "synthesize", started)
	return st, nil
}

// synthesizeAPI tops one API up. Rounds already made by an earlier run
// are not made again (the stage's meta keeps how many were).
func (e *Engine) synthesizeAPI(ctx context.Context, tool string, have int, opts SynthOptions) (asked, added int, rejected map[string]int, err error) {
	rejected = map[string]int{}
	t := e.tool(tool)
	var examples []*Pair
	err = e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal, Tool: tool, Filters: []string{FilterKept}, Order: OrderMix, Seed: opts.Seed, Limit: opts.Examples}, func(p *Pair) error {
		examples = append(examples, p)
		return nil
	})
	if err != nil || len(examples) == 0 {
		return 0, 0, rejected, err
	}
	exText, exArgs := examplesText(t, examples)
	doc := e.document(t)
	metaKey := "synthesize:" + tool + ":rounds"
	start := 0
	if v, ok, err := e.Store.Meta(ctx, e.Dataset, metaKey); err != nil {
		return 0, 0, rejected, err
	} else if ok {
		start, _ = strconv.Atoi(v)
	}
	var judge *fidelity.Judge
	if !opts.NoDocCheck {
		judge = &fidelity.Judge{Model: e.Model, ModelName: e.judgeModel(), Seed: opts.Seed}
	}
	for round := start; round < opts.Rounds && have < opts.Target; round++ {
		temp := opts.Temperatures[round%len(opts.Temperatures)]
		seed := opts.Seed + int64(round)
		user := promptfile.Fill(promptSynthesize.Text, map[string]string{"document": doc, "examples": exText, "count": strconv.Itoa(opts.PerCall)})
		text, err := e.chat(ctx, e.ModelName, nil, user, temp, seed, 4096)
		asked++
		var rejects []*Reject
		var accepted []*Pair
		if err != nil {
			var bad *badAnswer
			if !errors.As(err, &bad) {
				return asked, added, rejected, err
			}
			rejected[bad.reason]++
			rejects = append(rejects, &Reject{Stage: "synthesize", Tool: tool, Body: clip(text, 4000), Reason: bad.reason, Detail: bad.msg})
		} else {
			prov, _ := json.Marshal(synthProvenance{Model: e.ModelName, Seed: seed, Temperature: temp, Round: round, Examples: exArgs})
			cands, bad := parseSynth(t, text)
			if bad != "" {
				rejected[RejectUnparseable]++
				rejects = append(rejects, &Reject{Stage: "synthesize", Tool: tool, Body: clip(text, 4000), Reason: RejectUnparseable, Detail: bad})
			}
			seen := map[string]bool{}
			for _, c := range cands {
				reason, detail, err := e.judgeSynth(ctx, t, c, seen, judge)
				if err != nil {
					return asked, added, rejected, err
				}
				if reason != "" {
					rejected[reason]++
					rejects = append(rejects, &Reject{Stage: "synthesize", Tool: tool, Args: c.Args, Body: string(c.Body), Error: c.Error, Reason: reason, Detail: detail})
					continue
				}
				if have+len(accepted) >= opts.Target {
					break
				}
				c.Provenance = prov
				accepted = append(accepted, c)
			}
		}
		taken, err := e.Store.AddPairs(ctx, e.Dataset, accepted)
		if err != nil {
			return asked, added, rejected, err
		}
		added += len(accepted) - len(taken)
		have += len(accepted) - len(taken)
		if err := e.Store.PutRejects(ctx, e.Dataset, rejects); err != nil {
			return asked, added, rejected, err
		}
		if err := e.Store.SetMeta(ctx, e.Dataset, metaKey, strconv.Itoa(round+1)); err != nil {
			return asked, added, rejected, err
		}
	}
	return asked, added, rejected, nil
}

// judgeSynth decides whether a synthesized pair is kept: not a duplicate
// of a pair of this batch or of the dataset, not a conflicting answer to
// an existing request, and following the documentation.
func (e *Engine) judgeSynth(ctx context.Context, t *toolenv.Tool, c *Pair, seen map[string]bool, judge *fidelity.Judge) (reason, detail string, err error) {
	if c.Class != string(upstream.ClassSuccess) && c.Class != string(upstream.ClassParameterChange) {
		return FilterClassPrefix + c.Class, "a synthesized answer of a class the filter drops (" + c.Rule + ")", nil
	}
	if seen[c.Args] {
		return RejectDuplicate, "the same request appears earlier in this answer", nil
	}
	seen[c.Args] = true
	old, ok, err := e.Store.GetPair(ctx, e.Dataset, c.Tool, c.Args)
	if err != nil {
		return "", "", err
	}
	if ok {
		if sameAnswer(old, c) {
			return RejectDuplicate, "the dataset holds this request with this answer (" + old.Origin + ")", nil
		}
		return RejectConflict, "the dataset holds this request with another answer (" + old.Origin + ")", nil
	}
	if judge != nil {
		v, err := e.askDoc(ctx, judge, c, 12000)
		if err != nil {
			return "", "", err
		}
		c.Doc = v
		if v.Eval == 0 {
			return RejectDocMismatch, clip(v.Reason, 300), nil
		}
	}
	return "", "", nil
}

func sameAnswer(a, b *Pair) bool {
	if a.Error != b.Error {
		return false
	}
	ca, err1 := toolenv.CanonicalizeJSON(a.Body)
	cb, err2 := toolenv.CanonicalizeJSON(b.Body)
	if err1 != nil || err2 != nil {
		return strings.TrimSpace(string(a.Body)) == strings.TrimSpace(string(b.Body))
	}
	return string(ca) == string(cb)
}

// examplesText is the real examples as the synthesis prompt shows them:
// a JSON list of {"request", "error", "response"}.
func examplesText(t *toolenv.Tool, exs []*Pair) (string, []string) {
	type ex struct {
		Request  json.RawMessage `json:"request"`
		Error    string          `json:"error"`
		Response json.RawMessage `json:"response"`
	}
	list := make([]ex, 0, len(exs))
	args := make([]string, 0, len(exs))
	for _, p := range exs {
		body := p.Body
		if len(body) == 0 {
			body = json.RawMessage(`""`)
		}
		list = append(list, ex{Request: json.RawMessage(p.Args), Error: p.Error, Response: json.RawMessage(clip(string(body), 4000))})
		args = append(args, p.Args)
	}
	b, err := toolenv.MarshalJSONNoHTML(list)
	if err != nil || !json.Valid(b) {
		// A clipped body is no longer JSON: show the examples unclipped.
		for i, p := range exs {
			if len(p.Body) > 0 {
				list[i].Response = p.Body
			}
		}
		b, _ = toolenv.MarshalJSONNoHTML(list)
	}
	out, err := indentJSON(b)
	if err != nil {
		return string(b), args
	}
	return string(out), args
}

// parseSynth reads the synthesized pairs of an answer; bad says what
// could not be read (the answer as a whole, or some items).
func parseSynth(t *toolenv.Tool, text string) (pairs []*Pair, bad string) {
	v, ok := firstJSON(text, '[')
	if !ok {
		return nil, "no JSON list of pairs in the answer"
	}
	list, _ := v.([]any)
	skipped := 0
	for _, item := range list {
		obj := dictOf(item)
		if obj == nil {
			skipped++
			continue
		}
		var args map[string]any
		switch r := obj["request"].(type) {
		case string:
			call, err := ParseCall(t, `{"tool_input": `+strconv.Quote(r)+`}`)
			if err != nil {
				skipped++
				continue
			}
			args = call
		default:
			if args = plain(r); args == nil {
				skipped++
				continue
			}
			mapped := make(map[string]any, len(args))
			for k, v := range args {
				mapped[paramName(t, k)] = v
			}
			args = mapped
		}
		canon, err := toolenv.Canonical(args)
		if err != nil {
			skipped++
			continue
		}
		errMsg, _ := obj["error"].(string)
		var body json.RawMessage
		if resp, ok := obj["response"]; ok && resp != nil {
			b, err := toolenv.MarshalJSONNoHTML(toPlain(resp))
			if err != nil {
				skipped++
				continue
			}
			body = b
		}
		if len(body) == 0 && errMsg == "" {
			skipped++
			continue
		}
		p := &Pair{Tool: t.ID, Args: string(canon), Origin: OriginSynthesized, Kind: OriginSynthesized, Body: body, Error: errMsg, Filter: FilterKept}
		obs := &upstream.Observation{Error: errMsg, Response: bodyText(body)}
		rule := upstream.Classify(obs)
		p.Status, p.Class, p.Rule = rule.Status, string(rule.Class), rule.Name
		pairs = append(pairs, p)
	}
	if skipped > 0 {
		bad = fmt.Sprintf("%d of %d items are not {\"request\", \"error\", \"response\"} pairs", skipped, len(list))
	}
	return pairs, bad
}
