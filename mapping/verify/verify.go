package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Caller calls a tool with arguments. Pipeline makes one of an
// environment's pipeline.
type Caller interface {
	Call(ctx context.Context, tool *toolenv.Tool, args map[string]any) *toolenv.Result
}

// Pipeline is a Caller over a pipeline (toolenv.Handler) and the
// collections its tools belong to.
type Pipeline struct {
	Handler toolenv.Handler
	// Collection returns a loaded collection by name.
	Collection func(name string) *toolenv.Collection
}

// Call calls tool through the pipeline, as the Go front-end does.
func (p Pipeline) Call(ctx context.Context, tool *toolenv.Tool, args map[string]any) *toolenv.Result {
	return p.Handler.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: p.Collection(tool.Collection), Args: args, Frontend: "go", RequestID: "verify"})
}

// Options configure Between. The zero value uses the defaults.
type Options struct {
	// Samples is how many argument sets each probed tool is called with;
	// default 5.
	Samples int
	// Margin: candidates scoring within Margin of a tool's best are
	// ambiguous and probed; default 0.05.
	Margin float64
	// Floor is the lowest structural score a candidate is probed at;
	// default 0.35.
	Floor float64
	// MinScore is the lowest score a mapping is accepted at (a probed
	// agreement raises the score); default 0.55.
	MinScore float64
	// Harvest is how many tools that need no arguments are called first
	// for values; default 300.
	Harvest int
	// All probes every tool's best candidates, not only the undecided.
	All bool
	// Seed makes the sampled arguments; the same seed, the same calls.
	Seed uint64
}

func (o *Options) defaults() {
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.Margin <= 0 {
		o.Margin = 0.05
	}
	if o.Floor <= 0 {
		o.Floor = 0.35
	}
	if o.MinScore <= 0 {
		o.MinScore = 0.55
	}
	if o.Harvest <= 0 {
		o.Harvest = 300
	}
}

// Evidence says what decided a mapping.
type Evidence string

// The evidence of a mapping.
const (
	// Structure: the documentation alone (one clear best candidate).
	Structure Evidence = "structure"
	// Probe: calls of both tools agreed (it chose among candidates the
	// documentation could not tell apart, or accepted a weak one).
	Probe Evidence = "probe"
)

// The outcomes of probing one pair.
const (
	Agree        = "agree"
	Disagree     = "disagree"
	Inconclusive = "inconclusive"
)

// Verdict is the outcome of probing one candidate pair.
type Verdict struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	Score float64 `json:"structural_score"`
	// Calls are the argument sets tried; Agree and Disagree count the
	// calls whose answers were the same or differed; Failed those where
	// the source itself failed or the stand-in was unreachable.
	Calls    int `json:"calls"`
	Agree    int `json:"agree"`
	Disagree int `json:"disagree"`
	Failed   int `json:"failed"`
	// Distinct is how many different answers the source gave: agreement
	// on one answer for every argument (nothing found) proves little.
	Distinct int    `json:"distinct_answers"`
	Outcome  string `json:"outcome"`
	// Example shows one disagreement: the arguments and both answers.
	Example string `json:"example,omitempty"`
}

// Unmapped is a source tool left without a stand-in, and why.
type Unmapped struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Result is what Between decided.
type Result struct {
	// Mappings are one-to-one, sorted by From.
	Mappings []*mapping.Mapping `json:"mappings"`
	// Evidence says, by source tool ID, what decided its mapping.
	Evidence map[string]Evidence `json:"evidence"`
	Unmapped []Unmapped          `json:"unmapped,omitempty"`
	Verdicts []*Verdict          `json:"verdicts,omitempty"`
	// Calls counts every call made (harvest and probes); Values the
	// distinct values harvested from answers.
	Calls  int `json:"calls"`
	Values int `json:"values"`
}

// Count returns how many mappings were decided by e.
func (r *Result) Count(e Evidence) int {
	n := 0
	for _, mp := range r.Mappings {
		if r.Evidence[mp.From] == e {
			n++
		}
	}
	return n
}

// Between maps the tools of collection a onto those of collection b
// one-to-one with m (built over both), probing through c the tools the
// documentation does not decide (see the package documentation). The
// tools of a must be callable (the primary up); a probe answers nothing
// about a tool a call could not reach.
func Between(ctx context.Context, c Caller, m *structural.Matcher, a, b string, opts Options) (*Result, error) {
	opts.defaults()
	ranked, err := m.Ranked(ctx, a, b, opts.Floor)
	if err != nil {
		return nil, err
	}
	res := &Result{Evidence: map[string]Evidence{}}
	var sources []*toolenv.Tool
	for _, p := range m.Profiles() {
		if p.Tool.Collection == a {
			sources = append(sources, p.Tool)
		}
	}
	sort.Slice(sources, func(i, j int) bool { return sources[i].ID < sources[j].ID })
	s := newSampler(opts.Seed)
	// Values first: what the tools that need no arguments answer.
	harvested := 0
	for _, t := range sources {
		if harvested >= opts.Harvest {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if args := s.args(t, 1); len(args) == 1 && len(args[0]) == 0 {
			harvested++
			res.Calls++
			if r := c.Call(ctx, t, map[string]any{}); r.Status == toolenv.StatusOK {
				s.harvest(r.Body)
			}
		}
	}
	type candidate struct {
		mp       *mapping.Mapping
		score    float64 // after the probes
		evidence Evidence
	}
	var pool []candidate
	dropped := map[string][]string{} // source → why each candidate went
	for _, src := range sources {
		list := ranked[src.ID]
		if len(list) == 0 {
			continue
		}
		best := list[0].Score
		ambiguous := len(list) > 1 && best-list[1].Score < opts.Margin
		if !opts.All && !ambiguous && best >= opts.MinScore {
			for _, mp := range list {
				pool = append(pool, candidate{mp, mp.Score, Structure})
			}
			continue
		}
		n := 1
		for n < len(list) && n < maxProbed && best-list[n].Score < opts.Margin {
			n++
		}
		if best < opts.MinScore {
			n = max(n, min(3, len(list)))
		}
		samples, answers, calls, err := sourceCalls(ctx, c, s, src, opts.Samples)
		res.Calls += calls
		if err != nil {
			return nil, err
		}
		agreed := false
		for i, mp := range list {
			// Past the undecided ones, a tool none of whose candidates
			// agreed yet goes on down its list, up to maxProbed.
			if i >= n && (agreed || i >= maxProbed) {
				pool = append(pool, candidate{mp, mp.Score, Structure})
				continue
			}
			to := m.Profile(mp.To)
			if to == nil {
				continue
			}
			v := probe(ctx, c, src, to.Tool, mp, samples, answers)
			res.Calls += v.Calls
			res.Verdicts = append(res.Verdicts, v)
			switch v.Outcome {
			case Agree:
				agreed = true
				mp = mp.Clone()
				mp.Signals["structural"] = mp.Score
				mp.Signals["probe_agree"] = float64(v.Agree)
				mp.Score = round3(max(opts.MinScore, mp.Score+(1-mp.Score)/2))
				mp.Reasoning += fmt.Sprintf("; probed: %d call(s) with %d different answers, all the same from both", v.Agree, v.Distinct)
				pool = append(pool, candidate{mp, mp.Score, Probe})
			case Disagree:
				dropped[src.ID] = append(dropped[src.ID], fmt.Sprintf("%s (%s)", mp.To, v.Example))
			default:
				pool = append(pool, candidate{mp, mp.Score, Structure})
			}
		}
	}
	// One to one, best first.
	sort.SliceStable(pool, func(i, j int) bool {
		if pool[i].score != pool[j].score {
			return pool[i].score > pool[j].score
		}
		if pool[i].evidence != pool[j].evidence {
			return pool[i].evidence == Probe
		}
		return pool[i].mp.Key() < pool[j].mp.Key()
	})
	usedFrom, usedTo := map[string]bool{}, map[string]bool{}
	takenBy := map[string]string{}
	for _, cd := range pool {
		if cd.score < opts.MinScore || usedFrom[cd.mp.From] || usedTo[cd.mp.To] {
			continue
		}
		usedFrom[cd.mp.From], usedTo[cd.mp.To] = true, true
		takenBy[cd.mp.To] = cd.mp.From
		res.Mappings = append(res.Mappings, cd.mp)
		res.Evidence[cd.mp.From] = cd.evidence
	}
	sort.Slice(res.Mappings, func(i, j int) bool { return res.Mappings[i].From < res.Mappings[j].From })
	verdicts := map[string]*Verdict{}
	for _, v := range res.Verdicts {
		verdicts[v.From+"\x00"+v.To] = v
	}
	for _, src := range sources {
		if usedFrom[src.ID] {
			continue
		}
		res.Unmapped = append(res.Unmapped, Unmapped{Tool: src.ID, Reason: whyUnmapped(ranked[src.ID], dropped[src.ID], takenBy, verdicts, opts)})
	}
	res.Values = s.size()
	return res, ctx.Err()
}

// maxProbed is how far down its list of candidates a tool is probed
// while none agrees.
const maxProbed = 12

// sourceCalls calls the source tool with up to three times n sampled
// argument sets, until n calls gave at least two different answers, and
// returns n of them (one per different answer first) with their answers,
// and how many calls it made. Every answer feeds the sampler.
func sourceCalls(ctx context.Context, c Caller, s *sampler, src *toolenv.Tool, n int) ([]map[string]any, []*toolenv.Result, int, error) {
	all := s.args(src, 3*n)
	var args []map[string]any
	var answers []*toolenv.Result
	distinct := map[string]bool{}
	for _, a := range all {
		if len(args) >= n && len(distinct) >= 2 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, len(args), err
		}
		r := c.Call(ctx, src, a)
		args, answers = append(args, a), append(answers, r)
		if r.Status == toolenv.StatusOK {
			s.harvest(r.Body)
			k, _ := answerKey(r.Body)
			distinct[k] = true
		}
	}
	calls := len(args)
	if len(args) <= n {
		return args, answers, calls, nil
	}
	// Keep n: the first call of each different answer, then the rest in
	// order.
	var keep []int
	taken := map[int]bool{}
	seen := map[string]bool{}
	for i, r := range answers {
		k, _ := answerKey(r.Body)
		if r.Status == toolenv.StatusOK && !seen[k] && len(keep) < n {
			seen[k] = true
			keep = append(keep, i)
			taken[i] = true
		}
	}
	for i := range answers {
		if len(keep) >= n {
			break
		}
		if !taken[i] {
			keep = append(keep, i)
		}
	}
	sort.Ints(keep)
	outArgs := make([]map[string]any, len(keep))
	outAnswers := make([]*toolenv.Result, len(keep))
	for j, i := range keep {
		outArgs[j], outAnswers[j] = args[i], answers[i]
	}
	return outArgs, outAnswers, calls, nil
}

// whyUnmapped says why a source tool got no stand-in: its candidates
// that answered differently (two shown), those that went to other tools,
// and those too weak that the probes could not confirm.
func whyUnmapped(list []*mapping.Mapping, dropped []string, takenBy map[string]string, verdicts map[string]*Verdict, opts Options) string {
	if len(list) == 0 {
		return fmt.Sprintf("no candidate scored %.2f or more: the documentation shares too little", opts.Floor)
	}
	var why []string
	if len(dropped) > 0 {
		s := fmt.Sprintf("%d candidate(s) answered differently: %s", len(dropped), strings.Join(dropped[:min(2, len(dropped))], "; "))
		if len(dropped) > 2 {
			s += "; …"
		}
		why = append(why, s)
	}
	var taken, weak []string
	for _, mp := range list {
		v := verdicts[mp.From+"\x00"+mp.To]
		if v != nil && v.Outcome == Disagree {
			continue
		}
		if by, ok := takenBy[mp.To]; ok {
			taken = append(taken, fmt.Sprintf("%s (%.2f) to %s", mp.To, mp.Score, by))
		} else if mp.Score < opts.MinScore {
			if v != nil {
				weak = append(weak, fmt.Sprintf("%s scored %.2f < %.2f and %d probe(s) were inconclusive (%d different answer(s))", mp.To, mp.Score, opts.MinScore, v.Calls, v.Distinct))
			} else {
				weak = append(weak, fmt.Sprintf("%s scored %.2f < %.2f", mp.To, mp.Score, opts.MinScore))
			}
		}
	}
	if len(taken) > 0 {
		why = append(why, "went to better matches: "+strings.Join(taken[:min(3, len(taken))], ", "))
	}
	if len(weak) > 0 {
		why = append(why, strings.Join(weak[:min(2, len(weak))], "; "))
	}
	if len(why) == 0 {
		return "no candidate was accepted"
	}
	return strings.Join(why, "; ")
}

// probe calls to with each sample translated through mp and compares its
// answers with the source's.
func probe(ctx context.Context, c Caller, from, to *toolenv.Tool, mp *mapping.Mapping, samples []map[string]any, answers []*toolenv.Result) *Verdict {
	v := &Verdict{From: mp.From, To: mp.To, Score: mp.Score}
	distinct := map[string]bool{}
	for i, args := range samples {
		src := answers[i]
		if src.Status != toolenv.StatusOK {
			v.Failed++
			continue
		}
		k, _ := answerKey(src.Body)
		distinct[k] = true
		tr, err := mapping.TranslateFrom(mp, args, from, to)
		if err != nil {
			v.Disagree++
			if v.Example == "" {
				v.Example = fmt.Sprintf("%s cannot take %s: %v", mp.To, short(args), err)
			}
			continue
		}
		v.Calls++
		got := c.Call(ctx, to, tr.Args)
		switch {
		case transient(got.Status):
			v.Failed++
		case got.Status != toolenv.StatusOK:
			v.Disagree++
			if v.Example == "" {
				v.Example = fmt.Sprintf("%s → %s answered %s while the source answered", short(args), mp.To, got.Status)
			}
		default:
			body, _, err := mapping.TranslateResponse(mp, got.Body)
			if err != nil {
				body = got.Body
			}
			if sameAnswer(src.Body, body) {
				v.Agree++
			} else {
				v.Disagree++
				if v.Example == "" {
					v.Example = fmt.Sprintf("%s: %s vs %s", short(args), shortBody(src.Body), shortBody(body))
				}
			}
		}
	}
	v.Distinct = len(distinct)
	constant := len(samples) == 1 && len(samples[0]) == 0 // a call with no arguments is all the tool does
	switch {
	case v.Disagree > 0:
		v.Outcome = Disagree
	case v.Agree > 0 && (v.Distinct >= 2 || constant):
		v.Outcome = Agree
	default:
		v.Outcome = Inconclusive
	}
	return v
}

// transient reports whether a status says nothing of the tool's answer
// (it could not be reached).
func transient(s toolenv.Status) bool {
	switch s {
	case toolenv.StatusUnavailable, toolenv.StatusTimeout, toolenv.StatusRateLimited:
		return true
	}
	return false
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shortBody(b)
}

func shortBody(b []byte) string {
	const n = 120
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }
