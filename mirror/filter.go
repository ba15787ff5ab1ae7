package mirror

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/eval/fidelity"
)

// FilterOptions configure the filter stage.
type FilterOptions struct {
	// KeepFailures is how many parameter-related failures are kept so
	// that a simulator learns to refuse bad calls; default 10,000, the
	// paper's "around 10,000"; negative keeps none. They are spread over
	// the APIs as evenly as their counts allow (each API gets an equal
	// share, the share of an API with fewer going to the others) and
	// chosen within an API by a seeded hash.
	KeepFailures int
	// Seed seeds the choice of failures.
	Seed int64
	// NoDocCheck skips the documentation-following check even when a
	// model is set.
	NoDocCheck bool
	// DocUnparsedDrop drops pairs whose check answered nothing readable
	// (by default they are kept and counted).
	DocUnparsedDrop bool
	// DocMaxChars clips the response shown to the check; default 12,000.
	DocMaxChars int
	// Workers is how many checks are asked at once; default 4.
	Workers int
}

func (o *FilterOptions) defaults() {
	if o.KeepFailures == 0 {
		o.KeepFailures = 10000
	}
	if o.DocMaxChars <= 0 {
		o.DocMaxChars = 12000
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
}

// FilterStats says what the filter stage decided.
type FilterStats struct {
	// Real is the number of real pairs filtered; Kept how many passed.
	Real int `json:"real"`
	Kept int `json:"kept"`
	// KeptFailures is how many of the kept pairs are parameter-related
	// failures.
	KeptFailures int `json:"kept_failures"`
	// Dropped counts the dropped pairs by reason.
	Dropped map[string]int `json:"dropped"`
	// DocAsked is how many documentation checks this run asked;
	// DocFollows, DocNot and DocUnparsed count every verdict held.
	DocAsked    int  `json:"doc_asked"`
	DocFollows  int  `json:"doc_follows"`
	DocNot      int  `json:"doc_not"`
	DocUnparsed int  `json:"doc_unparsed"`
	DocChecked  bool `json:"doc_checked"`
}

// failureMark marks a parameter-related failure until the bound is
// applied; it never survives the stage.
const failureMark = "~failure"

// Filter decides which real pairs are kept, from scratch each run (the
// documentation verdicts, which cost a model request each, are kept
// between runs).
func (e *Engine) Filter(ctx context.Context, opts FilterOptions) (*FilterStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	started := time.Now()
	st := &FilterStats{Dropped: map[string]int{}}
	if err := e.Store.ResetPairs(ctx, e.Dataset, OriginReal, "filter"); err != nil {
		return nil, err
	}
	// Pass 1: Appendix D's rules.
	failures := map[string]int{}
	stats, err := e.Store.PairStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	real := 0
	for _, s := range stats {
		if s.Origin == OriginReal {
			real += s.Count
		}
	}
	bar := e.bar(real, "filter: Appendix D rules")
	w := e.updater(ctx)
	err = e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal}, func(p *Pair) error {
		st.Real++
		verdict, detail := baseVerdict(p)
		if verdict == failureMark {
			failures[p.Tool]++
		}
		bar.Add(1)
		return w.add(PairUpdate{Tool: p.Tool, Args: p.Args, Filter: Ptr(verdict), FilterDetail: Ptr(detail)})
	})
	if err == nil {
		err = w.flush()
	}
	bar.Finish()
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	// Pass 2: the bounded set of parameter-related failures.
	quota := spread(failures, opts.KeepFailures)
	if err := e.boundFailures(ctx, quota, opts.Seed); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	// Pass 3: the documentation-following check.
	if e.Model != nil && !opts.NoDocCheck {
		st.DocChecked = true
		n, err := e.docCheck(ctx, opts)
		st.DocAsked = n
		if err != nil {
			return st, fmt.Errorf("filter: documentation check: %w", err)
		}
	}
	w = e.updater(ctx)
	err = e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal, NoBody: true}, func(p *Pair) error {
		if p.Doc != nil {
			switch p.Doc.Eval {
			case 1:
				st.DocFollows++
			case 0:
				st.DocNot++
			default:
				st.DocUnparsed++
			}
		}
		if p.Filter == FilterKept && p.Doc != nil && st.DocChecked {
			switch {
			case p.Doc.Eval == 0:
				p.Filter = FilterDocMismatch
				if err := w.add(PairUpdate{Tool: p.Tool, Args: p.Args, Filter: Ptr(FilterDocMismatch), FilterDetail: Ptr(clip(p.Doc.Reason, 300))}); err != nil {
					return err
				}
			case p.Doc.Eval < 0 && opts.DocUnparsedDrop:
				p.Filter = FilterDocUnparsed
				if err := w.add(PairUpdate{Tool: p.Tool, Args: p.Args, Filter: Ptr(FilterDocUnparsed)}); err != nil {
					return err
				}
			}
		}
		if p.Filter == FilterKept {
			st.Kept++
			if !p.OK() {
				st.KeptFailures++
			}
		} else {
			st.Dropped[p.Filter]++
		}
		return nil
	})
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		return st, fmt.Errorf("filter: %w", err)
	}
	e.stageDone(ctx, "filter", started)
	return st, nil
}

// baseVerdict applies Appendix D's rules and toolenv's own to a real pair.
func baseVerdict(p *Pair) (verdict, detail string) {
	switch toolenv.Source(p.Source) {
	case toolenv.SourceSimulator, toolenv.SourceSynthesizer, toolenv.SourceCache:
		return FilterNotReal, "answered by the " + p.Source + ", not the real API"
	}
	if p.OK() && !utf8.Valid(p.Body) {
		return FilterBinary, "the response was not UTF-8"
	}
	if p.OK() && binary(p.Body) {
		return FilterBinary, "the response is not text"
	}
	if p.OK() && toolenv.Source(p.Source) == toolenv.SourceUpstream && strings.ContainsRune(bodyText(p.Body), utf8.RuneError) {
		// The upstream backend turns bytes that are not UTF-8 into
		// U+FFFD: the text is not what the API sent. (A live
		// collection's U+FFFD is its data's own and is kept.)
		return FilterBinary, "the response was not UTF-8: U+FFFD stands for bytes the API sent"
	}
	switch p.Class {
	case string(upstream.ClassSuccess):
		if p.OK() {
			return FilterKept, ""
		}
		return FilterClassPrefix + string(upstream.ClassOther), "status " + string(p.Status)
	case string(upstream.ClassParameterChange):
		return failureMark, p.Rule
	case "":
		return FilterClassPrefix + string(upstream.ClassOther), "unclassified"
	}
	return FilterClassPrefix + p.Class, p.Rule
}

// spread shares total among the keys of counts as evenly as the counts
// allow (water filling); deterministic.
func spread(counts map[string]int, total int) map[string]int {
	out := make(map[string]int, len(counts))
	if total <= 0 {
		return out
	}
	keys := sortedKeys(counts)
	sort.SliceStable(keys, func(i, j int) bool { return counts[keys[i]] < counts[keys[j]] })
	left := total
	for i, k := range keys {
		share := left / (len(keys) - i)
		if i < left%(len(keys)-i) {
			share++
		}
		n := min(counts[k], share)
		out[k] = n
		left -= n
	}
	// Hand out what integer division left over, one each, in key order.
	for _, k := range sortedKeys(counts) {
		if left <= 0 {
			break
		}
		if out[k] < counts[k] {
			out[k]++
			left--
		}
	}
	return out
}

// boundFailures keeps quota[tool] of each tool's marked failures, those
// whose seeded hash is smallest, and drops the others.
func (e *Engine) boundFailures(ctx context.Context, quota map[string]int, seed int64) error {
	type cand struct {
		args string
		h    int64
	}
	w := e.updater(ctx)
	var tool string
	var cands []cand
	decide := func() error {
		sort.Slice(cands, func(i, j int) bool {
			if cands[i].h != cands[j].h {
				return cands[i].h < cands[j].h
			}
			return cands[i].args < cands[j].args
		})
		for i, c := range cands {
			verdict, detail := FilterKept, ""
			if i >= quota[tool] {
				verdict, detail = FilterOverBound, fmt.Sprintf("this API's share of the kept failures is %d", quota[tool])
			}
			if err := w.add(PairUpdate{Tool: tool, Args: c.args, Filter: Ptr(verdict), FilterDetail: Ptr(detail)}); err != nil {
				return err
			}
		}
		cands = cands[:0]
		return nil
	}
	mix := seedHash(seed, "failures")
	err := e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal, Filters: []string{failureMark}, NoBody: true}, func(p *Pair) error {
		if p.Tool != tool {
			if err := decide(); err != nil {
				return err
			}
			tool = p.Tool
		}
		cands = append(cands, cand{args: p.Args, h: Hash(p.Tool, p.Args) ^ mix})
		return nil
	})
	if err == nil {
		err = decide()
	}
	if err == nil {
		err = w.flush()
	}
	return err
}

// docCheck asks the documentation-following check of every kept real
// pair that has no verdict yet, and returns how many it asked.
func (e *Engine) docCheck(ctx context.Context, opts FilterOptions) (int, error) {
	judge := &fidelity.Judge{Model: e.Model, ModelName: e.judgeModel(), Seed: opts.Seed}
	var todo int
	if err := e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal, Filters: []string{FilterKept}, NoDoc: true, NoBody: true}, func(*Pair) error {
		todo++
		return nil
	}); err != nil {
		return 0, err
	}
	if todo == 0 {
		return 0, nil
	}
	bar := e.bar(todo, "filter: documentation check")
	defer bar.Finish()
	asked, err := e.parallel(ctx, opts.Workers, PairQuery{Origin: OriginReal, Filters: []string{FilterKept}, NoDoc: true}, func(ctx context.Context, p *Pair) (*PairUpdate, error) {
		defer bar.Add(1)
		v, err := e.askDoc(ctx, judge, p, opts.DocMaxChars)
		if err != nil {
			return nil, err
		}
		return &PairUpdate{Tool: p.Tool, Args: p.Args, Doc: v}, nil
	})
	return asked, err
}

// askDoc asks the documentation-following check about one pair. An
// endpoint failure is an error; an unreadable verdict is Eval -1.
func (e *Engine) askDoc(ctx context.Context, judge *fidelity.Judge, p *Pair, maxChars int) (*DocCheck, error) {
	t := e.tool(p.Tool)
	if t == nil {
		return nil, fmt.Errorf("pair of %s: the tool is not loaded (load its collection)", p.Tool)
	}
	args, err := decodeArgs(p.Args)
	if err != nil {
		return nil, err
	}
	v := judge.FollowsDoc(ctx, t, args, clip(fidelity.Envelope(p.Body, p.Error), maxChars))
	if v.Error != "" {
		return nil, fmt.Errorf("%s (what was checked is stored: run the command again to resume)", v.Error)
	}
	d := &DocCheck{Eval: -1, Raw: clip(v.Raw, 2000), Reason: v.Reason, Model: judge.ModelName}
	if v.Parsed {
		d.Eval = 0
		if v.Follows {
			d.Eval = 1
		}
	}
	return d, nil
}

// parallel runs fn over the pairs q selects with n workers, writing the
// updates fn returns in batches. It stops at the first error (what was
// finished is written) and returns how many pairs fn finished.
func (e *Engine) parallel(ctx context.Context, n int, q PairQuery, fn func(context.Context, *Pair) (*PairUpdate, error)) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *Pair)
	ups := make(chan PairUpdate, n)
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				u, err := fn(ctx, p)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					continue
				}
				if u != nil {
					ups <- *u
				}
			}
		}()
	}
	done := make(chan struct{})
	count := 0
	var werr error
	go func() {
		defer close(done)
		w := e.updater(context.WithoutCancel(ctx))
		for u := range ups {
			count++
			if err := w.add(u); err != nil && werr == nil {
				werr = err
			}
		}
		if err := w.flush(); err != nil && werr == nil {
			werr = err
		}
	}()
	rerr := e.Store.EachPair(ctx, e.Dataset, q, func(p *Pair) error {
		select {
		case work <- p:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(work)
	wg.Wait()
	close(ups)
	<-done
	switch {
	case werr != nil:
		return count, werr
	case firstErr != nil:
		return count, firstErr
	case rerr != nil:
		return count, rerr
	}
	return count, nil
}

// updater batches pair updates.
type updater struct {
	e     *Engine
	ctx   context.Context
	batch []PairUpdate
}

func (e *Engine) updater(ctx context.Context) *updater { return &updater{e: e, ctx: ctx} }

func (u *updater) add(up PairUpdate) error {
	u.batch = append(u.batch, up)
	if len(u.batch) >= 512 {
		return u.flush()
	}
	return nil
}

func (u *updater) flush() error {
	if len(u.batch) == 0 {
		return nil
	}
	err := u.e.Store.UpdatePairs(u.ctx, u.e.Dataset, u.batch)
	u.batch = u.batch[:0]
	return err
}
