package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	toolenv "github.com/toolenv/toolenv"
	"golang.org/x/text/unicode/norm"
)

// SplitOptions size MirrorAPI-Bench. The defaults are the paper's
// (Table 1): 200 successful and 100 failed OOD pairs, 100 successful
// pairs in each ID set.
type SplitOptions struct {
	OODSuccess int
	OODFailure int
	// OODPerAPI is how many pairs one held-out API gives each OOD set
	// before the next API is held out; default 6 (the paper's 200 pairs
	// come from 38 APIs). When OODMaxAPIs stops the drawing of APIs short,
	// the held-out APIs give more each.
	OODPerAPI int
	// OODMaxAPIs bounds the share of APIs held out; default 0.2, so a
	// small dataset keeps most of its APIs for training.
	OODMaxAPIs float64
	IDSize     int
	Seed       int64
}

func (o *SplitOptions) defaults() {
	if o.OODSuccess == 0 {
		o.OODSuccess = 200
	}
	if o.OODFailure == 0 {
		o.OODFailure = 100
	}
	if o.OODPerAPI <= 0 {
		o.OODPerAPI = 6
	}
	if o.OODMaxAPIs <= 0 {
		o.OODMaxAPIs = 0.2
	}
	if o.IDSize == 0 {
		o.IDSize = 100
	}
}

// SplitStats describes the splits (the paper's Table 1).
type SplitStats struct {
	Splits []SplitRow `json:"splits"`
	// HeldOutAPIs are the OOD APIs.
	HeldOutAPIs []string `json:"held_out_apis"`
	// NearDuplicates is how many training pairs were dropped for being
	// near-duplicates of a test request; HeldOutUnused how many pairs of
	// held-out APIs are in no set.
	NearDuplicates int `json:"near_duplicates"`
	HeldOutUnused  int `json:"held_out_unused"`
	// Tercile bounds: the fewest examples per API in the high and medium
	// groups.
	HighFrom   int `json:"high_from"`
	MediumFrom int `json:"medium_from"`
}

// SplitRow is one split's size.
type SplitRow struct {
	Split      string `json:"split"`
	Samples    int    `json:"samples"`
	APIs       int    `json:"apis"`
	Categories int    `json:"categories"`
}

// Category is the category an API is counted in: its category
// (RapidAPI's, for ToolBench), else its group (the tool or database it
// belongs to), else its collection.
func Category(t *toolenv.Tool) string {
	switch {
	case t == nil:
		return ""
	case t.Category != "":
		return t.Category
	case t.Group != "":
		return t.Group
	}
	return t.Collection
}

type apiCount struct {
	tool    string
	ok, bad int // kept real successes and failures
	synth   int // kept synthesized pairs
}

// Split assigns every kept pair to the training set or a test set, from
// scratch each run: the same kept pairs and options give the same split.
func (e *Engine) Split(ctx context.Context, opts SplitOptions) (*SplitStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	started := time.Now()
	if err := e.Store.ResetPairs(ctx, e.Dataset, "", "split"); err != nil {
		return nil, err
	}
	stats, err := e.Store.PairStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	byTool := map[string]*apiCount{}
	for _, s := range stats {
		if s.Filter != FilterKept {
			continue
		}
		c := byTool[s.Tool]
		if c == nil {
			c = &apiCount{tool: s.Tool}
			byTool[s.Tool] = c
		}
		switch {
		case s.Origin != OriginReal:
			c.synth += s.Count
		case s.OK:
			c.ok += s.Count
		default:
			c.bad += s.Count
		}
	}
	apis := sortedKeys(byTool)
	order := append([]string(nil), apis...)
	mix := seedHash(opts.Seed, "ood")
	sort.Slice(order, func(i, j int) bool {
		hi, hj := Hash(order[i], "")^mix, Hash(order[j], "")^mix
		if hi != hj {
			return hi < hj
		}
		return order[i] < order[j]
	})

	// OOD: whole APIs held out, in seeded order, until both sets are
	// full or the bound on held-out APIs is reached.
	type plan struct {
		split     string // for ID APIs: the ID set; "" for training only
		heldOut   bool
		succ, bad int // pairs to draw into the test sets
	}
	plans := map[string]*plan{}
	maxOOD := int(float64(len(apis)) * opts.OODMaxAPIs)
	needS, needF := max(opts.OODSuccess, 0), max(opts.OODFailure, 0)
	st := &SplitStats{}
	for _, api := range order {
		if (needS == 0 && needF == 0) || len(st.HeldOutAPIs) >= maxOOD {
			break
		}
		c := byTool[api]
		s := min(c.ok, opts.OODPerAPI, needS)
		f := min(c.bad, opts.OODPerAPI, needF)
		if s == 0 && f == 0 {
			continue
		}
		plans[api] = &plan{heldOut: true, succ: s, bad: f}
		st.HeldOutAPIs = append(st.HeldOutAPIs, api)
		needS -= s
		needF -= f
	}
	// If the bound on held-out APIs stopped the draw short, the held-out
	// APIs give more pairs each, round-robin.
	for _, kind := range []string{"succ", "bad"} {
		for more := true; more && ((kind == "succ" && needS > 0) || (kind == "bad" && needF > 0)); {
			more = false
			for _, api := range st.HeldOutAPIs {
				c, p := byTool[api], plans[api]
				switch {
				case kind == "succ" && needS > 0 && p.succ < c.ok:
					p.succ++
					needS--
					more = true
				case kind == "bad" && needF > 0 && p.bad < c.bad:
					p.bad++
					needF--
					more = true
				}
			}
		}
	}
	sort.Strings(st.HeldOutAPIs)

	// ID: the training APIs by terciles of their examples.
	var train []string
	for _, api := range apis {
		if plans[api] == nil {
			train = append(train, api)
		}
	}
	total := func(a string) int { c := byTool[a]; return c.ok + c.bad + c.synth }
	sort.SliceStable(train, func(i, j int) bool {
		if total(train[i]) != total(train[j]) {
			return total(train[i]) > total(train[j])
		}
		return Hash(train[i], "")^mix < Hash(train[j], "")^mix
	})
	third := (len(train) + 2) / 3
	groups := [][]string{}
	for i := 0; i < len(train); i += third {
		groups = append(groups, train[i:min(i+third, len(train))])
	}
	idSplits := []string{SplitIDHigh, SplitIDMedium, SplitIDLow}
	for g, names := range groups {
		if g == 1 && len(names) > 0 {
			st.HighFrom = total(groups[0][len(groups[0])-1])
			st.MediumFrom = total(names[len(names)-1])
		}
		if g >= len(idSplits) {
			break
		}
		// Round-robin in seeded order: one pair per API per round (so the
		// set spreads over as many APIs as it can), an API always keeping
		// one training example.
		seeded := append([]string(nil), names...)
		sort.Slice(seeded, func(i, j int) bool { return Hash(seeded[i], idSplits[g])^mix < Hash(seeded[j], idSplits[g])^mix })
		for _, api := range seeded {
			plans[api] = &plan{split: idSplits[g]}
		}
		need := max(opts.IDSize, 0)
		for round := 0; need > 0; round++ {
			progressed := false
			for _, api := range seeded {
				if need == 0 {
					break
				}
				c, p := byTool[api], plans[api]
				if p.succ < c.ok && total(api)-p.succ > 1 {
					p.succ++
					need--
					progressed = true
				}
			}
			if !progressed {
				break
			}
		}
	}

	// Assign, one API at a time.
	w := e.updater(ctx)
	var tool string
	var pairs []*Pair
	counts := map[string]*SplitRow{}
	cats := map[string]map[string]bool{}
	apisOf := map[string]map[string]bool{}
	assign := func() error {
		if len(pairs) == 0 {
			return nil
		}
		p := plans[tool]
		if p == nil {
			p = &plan{}
		}
		tmix := seedHash(opts.Seed, "pick")
		sort.Slice(pairs, func(i, j int) bool {
			hi, hj := Hash(pairs[i].Tool, pairs[i].Args)^tmix, Hash(pairs[j].Tool, pairs[j].Args)^tmix
			if hi != hj {
				return hi < hj
			}
			return pairs[i].Args < pairs[j].Args
		})
		dest := make([]string, len(pairs))
		succ, bad := 0, 0
		test := map[string]bool{}
		for i, q := range pairs {
			switch {
			case q.Origin != OriginReal:
				continue
			case q.OK() && succ < p.succ:
				succ++
				dest[i] = SplitOODSuccess
				if !p.heldOut {
					dest[i] = p.split
				}
			case !q.OK() && p.heldOut && bad < p.bad:
				bad++
				dest[i] = SplitOODFailure
			default:
				continue
			}
			test[nearKey(e.tool(tool), q.Args)] = true
		}
		for i, q := range pairs {
			if dest[i] != "" {
				continue
			}
			switch {
			case p.heldOut:
				dest[i] = SplitHeldOut
				st.HeldOutUnused++
			case test[nearKey(e.tool(tool), q.Args)]:
				dest[i] = SplitNearDuplicate
				st.NearDuplicates++
			default:
				dest[i] = SplitTrain
			}
		}
		cat := Category(e.tool(tool))
		for i, q := range pairs {
			d := dest[i]
			if counts[d] == nil {
				counts[d] = &SplitRow{Split: d}
				cats[d] = map[string]bool{}
				apisOf[d] = map[string]bool{}
			}
			counts[d].Samples++
			cats[d][cat] = true
			apisOf[d][tool] = true
			if err := w.add(PairUpdate{Tool: q.Tool, Args: q.Args, Split: Ptr(d)}); err != nil {
				return err
			}
		}
		pairs = pairs[:0]
		return nil
	}
	kept := 0
	for _, c := range byTool {
		kept += c.ok + c.bad + c.synth
	}
	bar := e.bar(kept, "split: MirrorAPI-Bench")
	defer bar.Finish()
	err = e.Store.EachPair(ctx, e.Dataset, PairQuery{Filters: []string{FilterKept}, NoBody: true}, func(p *Pair) error {
		if p.Tool != tool {
			if err := assign(); err != nil {
				return err
			}
			tool = p.Tool
		}
		p.Body = nil // not needed; keeps memory to one API's requests
		pairs = append(pairs, p)
		bar.Add(1)
		return nil
	})
	if err == nil {
		err = assign()
	}
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		return nil, fmt.Errorf("split: %w", err)
	}
	for _, name := range append([]string{SplitTrain}, TestSplits...) {
		row := SplitRow{Split: name}
		if c := counts[name]; c != nil {
			row = *c
			row.APIs = len(apisOf[name])
			row.Categories = len(cats[name])
		}
		st.Splits = append(st.Splits, row)
	}
	raw, _ := json.Marshal(st)
	if err := e.Store.SetMeta(ctx, e.Dataset, "split", string(raw)); err != nil {
		return st, err
	}
	e.stageDone(ctx, "split", started)
	return st, nil
}

// nearKey is the near-duplicate key of a request: its arguments with
// strings Unicode-normalized (NFKC), lower-cased, spaces collapsed and
// punctuation trimmed at both ends; empty values, nulls and values equal
// to the parameter's documented default left out. Two requests of one
// API with the same key are near-duplicates.
func nearKey(t *toolenv.Tool, canon string) string {
	args, err := decodeArgs(canon)
	if err != nil {
		return canon
	}
	out := map[string]any{}
	for k, v := range args {
		v = nearValue(v)
		if v == nil || v == "" {
			continue
		}
		if t != nil && t.Input != nil {
			if p := t.Input.Prop(k); p != nil && p.Default != nil {
				if dc, err := toolenv.Canonical(nearValue(p.Default)); err == nil {
					if vc, err := toolenv.Canonical(v); err == nil && string(dc) == string(vc) {
						continue
					}
				}
			}
		}
		out[k] = v
	}
	c, err := toolenv.Canonical(out)
	if err != nil {
		return canon
	}
	return string(c)
}

func nearValue(v any) any {
	switch x := v.(type) {
	case string:
		s := strings.ToLower(norm.NFKC.String(x))
		s = strings.Join(strings.Fields(s), " ")
		return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nearValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = nearValue(e)
		}
		return out
	case float64:
		return json.Number(fmt.Sprint(x))
	}
	return v
}
