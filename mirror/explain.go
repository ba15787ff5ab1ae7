package mirror

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/toolbench"
)

// ExplainOptions configure the explain stage.
type ExplainOptions struct {
	// Success and Failure are how many successful and failed training
	// pairs get a rationale; defaults 43,597 and 2,000, the paper's
	// samples (all of them when the training set is smaller).
	Success, Failure int
	// MaxTokens is the length filter on the CoT sample's output (the
	// rationale with the response); default 2,560, the paper's. Tokens
	// are counted by ApproxTokens.
	MaxTokens int
	// LeakRun is the shortest run of the response's characters a
	// rationale may not repeat; default 40. Text the request or the
	// documentation holds does not count.
	LeakRun int
	// Temperature of the requests; default 1 (the paper's o1-preview
	// accepts no other).
	Temperature *float64
	// MaxPromptChars clips the response shown to the model; default
	// 12,000.
	MaxPromptChars int
	Seed           int64
	// Workers is how many requests are in flight; default 4.
	Workers int
}

func (o *ExplainOptions) defaults() {
	if o.Success == 0 {
		o.Success = 43597
	}
	if o.Failure == 0 {
		o.Failure = 2000
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 2560
	}
	if o.LeakRun <= 0 {
		o.LeakRun = 40
	}
	if o.Temperature == nil {
		o.Temperature = Ptr(1.0)
	}
	if o.MaxPromptChars <= 0 {
		o.MaxPromptChars = 12000
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
}

// ExplainStats says what the explain stage did.
type ExplainStats struct {
	// Sampled is how many training pairs the sample holds (successes,
	// failures); Asked how many requests this run made.
	SampledSuccess int `json:"sampled_success"`
	SampledFailure int `json:"sampled_failure"`
	Asked          int `json:"asked"`
	// Kept is how many rationales of the sample passed; Dropped counts
	// the others by reason.
	Kept    int            `json:"kept"`
	Dropped map[string]int `json:"dropped"`
	Skipped bool           `json:"skipped,omitempty"` // no model
}

// Explain asks the API Simulation prompt (Table 9) for rationales of a
// seeded sample of the training pairs. Pairs that have a rationale (from
// an earlier, interrupted run) are not asked again.
func (e *Engine) Explain(ctx context.Context, opts ExplainOptions) (*ExplainStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	st := &ExplainStats{Dropped: map[string]int{}}
	if e.Model == nil {
		st.Skipped = true
		return st, nil
	}
	started := time.Now()
	q := PairQuery{Splits: []string{SplitTrain}, Order: OrderMix, Seed: opts.Seed + 1}
	// Pick the sample (and see what is left to ask).
	var todo []PairKey
	pick := q
	pick.NoBody = true
	err := e.Store.EachPair(ctx, e.Dataset, pick, func(p *Pair) error {
		switch {
		case p.OK() && st.SampledSuccess < opts.Success:
			st.SampledSuccess++
		case !p.OK() && st.SampledFailure < opts.Failure:
			st.SampledFailure++
		default:
			if st.SampledSuccess >= opts.Success && st.SampledFailure >= opts.Failure {
				return errStop
			}
			return nil
		}
		todo = append(todo, p.Key())
		return nil
	})
	if err != nil && err != errStop {
		return st, fmt.Errorf("explain: %w", err)
	}
	has, err := e.Store.HasRationale(ctx, e.Dataset, todo)
	if err != nil {
		return st, fmt.Errorf("explain: %w", err)
	}
	want := map[PairKey]bool{}
	for _, k := range todo {
		if !has[k] {
			want[k] = true
		}
	}
	todo = nil
	bar := e.bar(len(want), "explain: rationales")
	if len(want) > 0 {
		st.Asked, err = e.explainPairs(ctx, q, want, opts, bar)
	}
	bar.Finish()
	if err != nil {
		return st, fmt.Errorf("explain: %w", err)
	}
	// Count the sample's verdicts.
	sampled := 0
	err = e.Store.EachRationale(ctx, e.Dataset, func(r *Rationale) error {
		sampled++
		if r.Verdict == FilterKept {
			st.Kept++
		} else {
			st.Dropped[r.Verdict]++
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("explain: %w", err)
	}
	e.stageDone(ctx, "explain", started)
	return st, nil
}

// explainPairs asks for the rationales of the pairs in want (streamed in
// q's order), n at a time, and stores each.
func (e *Engine) explainPairs(ctx context.Context, q PairQuery, want map[PairKey]bool, opts ExplainOptions, bar interface{ Add(int) }) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *Pair)
	var mu sync.Mutex
	var batch []*Rationale
	var firstErr error
	asked := 0
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	flush := func(force bool) error {
		mu.Lock()
		defer mu.Unlock()
		if len(batch) == 0 || (!force && len(batch) < 64) {
			return nil
		}
		err := e.Store.PutRationales(context.WithoutCancel(ctx), e.Dataset, batch)
		batch = batch[:0]
		return err
	}
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				r, err := e.explainOne(ctx, p, opts)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					continue
				}
				mu.Lock()
				batch = append(batch, r)
				asked++
				mu.Unlock()
				bar.Add(1)
				if err := flush(false); err != nil {
					fail(err)
				}
			}
		}()
	}
	rerr := e.Store.EachPair(ctx, e.Dataset, q, func(p *Pair) error {
		if !want[p.Key()] {
			return nil
		}
		delete(want, p.Key())
		select {
		case work <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(want) == 0 {
			return errStop
		}
		return nil
	})
	close(work)
	wg.Wait()
	if err := flush(true); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return asked, firstErr
	}
	if rerr != nil && rerr != errStop {
		return asked, rerr
	}
	return asked, nil
}

// explainOne asks for one pair's rationale and judges it.
func (e *Engine) explainOne(ctx context.Context, p *Pair, opts ExplainOptions) (*Rationale, error) {
	t := e.tool(p.Tool)
	if t == nil {
		return nil, fmt.Errorf("pair of %s: the tool is not loaded (load its collection)", p.Tool)
	}
	args, err := decodeArgs(p.Args)
	if err != nil {
		return nil, err
	}
	doc := toolbench.DocOf(t)
	request := RequestText(t, args)
	response := ResponseText(p.Body, p.Error)
	user := promptfile.Fill(promptAPISimulation.Text, map[string]string{
		"api_name":            t.TitleOrName(),
		"api_description":     doc.APIDescription,
		"required_parameters": pyfmt.Repr(paramList(doc.RequiredParameters)),
		"optional_parameters": pyfmt.Repr(paramList(doc.OptionalParameters)),
		"tool_name":           t.GroupOrCollection(),
		"tool_description":    doc.ToolDescription,
		"api_request":         request,
		"api_response":        clip(response, opts.MaxPromptChars),
	})
	model := e.explainModel()
	r := &Rationale{Tool: p.Tool, Args: p.Args, Model: model}
	text, err := e.chat(ctx, model, nil, user, *opts.Temperature, opts.Seed, 4096)
	if err != nil {
		var bad *badAnswer
		if !errors.As(err, &bad) {
			return nil, err
		}
		r.Text = text
		r.Verdict = RationaleEmpty
		if bad.reason == RejectRefused {
			r.Verdict = RationaleRefused
		}
		r.Detail = bad.msg
		return r, nil
	}
	r.Text = strings.TrimSpace(text)
	out := CoTOutput(r.Text, p.Body, p.Error)
	r.Tokens = ApproxTokens(out)
	switch {
	case r.Tokens > opts.MaxTokens:
		r.Verdict, r.Detail = RationaleTooLong, fmt.Sprintf("%d tokens (approximately) over the limit of %d", r.Tokens, opts.MaxTokens)
	default:
		if run, ok := Leak(r.Text, response, request+"\n"+e.document(t), opts.LeakRun); ok {
			r.Verdict, r.Detail = RationaleLeak, fmt.Sprintf("repeats the response verbatim: %q", clip(run, 120))
		} else {
			r.Verdict = FilterKept
		}
	}
	return r, nil
}

// paramList is a list of parameter docs as Python's str() shows them.
func paramList(ps []toolbench.ParamDoc) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = pyfmt.Dict{{Key: "name", Value: p.Name}, {Key: "type", Value: p.Type}, {Key: "description", Value: p.Description}, {Key: "default", Value: p.Default}}
	}
	return out
}

// Leak reports whether rationale repeats a run of at least run bytes of
// response verbatim (white space collapsed), not counting runs that also
// occur in known (the request and the documentation, which the rationale
// may quote). A response shorter than 16 bytes cannot leak: it is too
// short to be told from an ordinary phrase. It returns the repeated run.
// It costs one pass over each text (a rolling hash of the windows).
func Leak(rationale, response, known string, run int) (string, bool) {
	resp := collapse(response)
	if len(resp) < 16 {
		return "", false
	}
	k := min(run, len(resp))
	rat := collapse(rationale)
	if len(rat) < k {
		return "", false
	}
	inResp := make(map[uint64]bool, len(resp)-k+1)
	windows(resp, k, func(h uint64, _ int) { inResp[h] = true })
	windows(collapse(known), k, func(h uint64, _ int) { delete(inResp, h) })
	found := ""
	windows(rat, k, func(h uint64, i int) {
		if found == "" && inResp[h] && strings.Contains(resp, rat[i:i+k]) {
			found = rat[i : i+k]
		}
	})
	return found, found != ""
}

// windows calls fn with the rolling hash of every k-byte window of s and
// its offset.
func windows(s string, k int, fn func(h uint64, i int)) {
	if len(s) < k || k <= 0 {
		return
	}
	const base = 1099511628211
	var h, pow uint64 = 0, 1
	for i := 0; i < k; i++ {
		h = h*base + uint64(s[i])
		if i > 0 {
			pow *= base
		}
	}
	fn(h, 0)
	for i := k; i < len(s); i++ {
		h = (h-uint64(s[i-k])*pow)*base + uint64(s[i])
		fn(h, i-k+1)
	}
}

// collapse trims s and collapses runs of white space to one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
