package mirror

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/internal/promptfile"
)

// Funnel steps, in order.
const (
	StepGenerated   = "generated"
	StepCalled      = "called"
	StepKept        = "kept"
	StepSynthesized = "synthesized"
	StepExplained   = "explained"
	StepExported    = "exported"
)

// FunnelStep is one bar of the funnel.
type FunnelStep struct {
	Step  string `json:"step"`
	Count int    `json:"count"`
	// What says what is counted.
	What string `json:"what"`
}

// Summary is every count the report and the dataset card show, read
// from the store. It holds no time, so that it is the same for the same
// data.
type Summary struct {
	Dataset string       `json:"dataset"`
	Funnel  []FunnelStep `json:"funnel"`

	Requests         int            `json:"requests"`
	RequestsByOrigin map[string]int `json:"requests_by_origin"`
	RequestsByKind   map[string]int `json:"requests_by_kind"`
	Pending          int            `json:"pending"`

	Real        int            `json:"real"`
	RealOK      int            `json:"real_ok"`
	RealByClass map[string]int `json:"real_by_class"`

	Kept         int            `json:"kept"`
	KeptFailures int            `json:"kept_failures"`
	Dropped      map[string]int `json:"dropped"`
	// DroppedByRule counts the dropped real pairs by reason and the
	// classifier rule behind it ("appendix_d:not_found http_404_410").
	DroppedByRule map[string]int `json:"dropped_by_rule"`
	Unfiltered    int            `json:"unfiltered"`
	Doc           DocCounts      `json:"doc"`

	Synthesized int `json:"synthesized"`
	// Rejected counts what the model-facing stages dropped, by stage and
	// reason ("synthesize/duplicate").
	Rejected map[string]int `json:"rejected"`

	Rationales        int            `json:"rationales"`
	RationalesDropped map[string]int `json:"rationales_dropped"`

	Splits []SplitRow `json:"splits"`
	// SplitInfo is what the split stage recorded (held-out APIs, terciles).
	SplitInfo *SplitStats `json:"split_info,omitempty"`

	Export *ExportStats `json:"export,omitempty"`

	Categories []CategoryRow `json:"categories"`
	APIs       []APIRow      `json:"apis"`

	Prompts []promptfile.Prompt `json:"prompts"`
}

// DocCounts counts documentation verdicts of real pairs.
type DocCounts struct {
	Follows  int `json:"follows"`
	Not      int `json:"not"`
	Unparsed int `json:"unparsed"`
}

// CategoryRow is the counts of one category.
type CategoryRow struct {
	Category   string `json:"category"`
	APIs       int    `json:"apis"`
	Requests   int    `json:"requests"`
	Real       int    `json:"real"`
	RealOK     int    `json:"real_ok"`
	Kept       int    `json:"kept"`
	Synth      int    `json:"synthesized"`
	Train      int    `json:"train"`
	Test       int    `json:"test"`
	Rationales int    `json:"rationales"`
}

// APIRow is the counts of one API.
type APIRow struct {
	Tool     string `json:"tool"`
	Category string `json:"category"`
	Requests int    `json:"requests"`
	Real     int    `json:"real"`
	RealOK   int    `json:"real_ok"`
	Kept     int    `json:"kept"`
	Synth    int    `json:"synthesized"`
	Train    int    `json:"train"`
	Test     int    `json:"test"`
	// Split is "ood" for a held-out API, else its ID group (high,
	// medium, low) once split.
	Group string `json:"group,omitempty"`
}

// Summary reads the dataset's counts from the store.
func (e *Engine) Summary(ctx context.Context) (*Summary, error) {
	s := &Summary{Dataset: e.Dataset, RequestsByOrigin: map[string]int{}, RequestsByKind: map[string]int{}, RealByClass: map[string]int{},
		Dropped: map[string]int{}, DroppedByRule: map[string]int{}, Rejected: map[string]int{}, RationalesDropped: map[string]int{}, Prompts: Prompts()}
	apis := map[string]*APIRow{}
	api := func(tool string) *APIRow {
		a := apis[tool]
		if a == nil {
			a = &APIRow{Tool: tool, Category: Category(e.tool(tool))}
			if a.Category == "" {
				a.Category = "(not loaded)"
			}
			apis[tool] = a
		}
		return a
	}
	err := e.Store.EachRequest(ctx, e.Dataset, RequestQuery{}, func(r *Request) error {
		s.Requests++
		s.RequestsByOrigin[r.Origin]++
		kind := r.Kind
		if i := strings.IndexByte(kind, ':'); i >= 0 {
			kind = kind[:i]
		}
		s.RequestsByKind[kind]++
		api(r.Tool).Requests++
		return nil
	})
	if err != nil {
		return nil, err
	}
	stats, err := e.Store.PairStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	splits := map[string]*SplitRow{}
	splitCats := map[string]map[string]bool{}
	splitAPIs := map[string]map[string]bool{}
	for _, st := range stats {
		a := api(st.Tool)
		if st.Origin == OriginReal {
			s.Real += st.Count
			a.Real += st.Count
			s.RealByClass[st.Class] += st.Count
			if st.OK {
				s.RealOK += st.Count
				a.RealOK += st.Count
			}
			if st.DocEval != nil {
				switch *st.DocEval {
				case 1:
					s.Doc.Follows += st.Count
				case 0:
					s.Doc.Not += st.Count
				default:
					s.Doc.Unparsed += st.Count
				}
			}
			switch st.Filter {
			case FilterKept:
				s.Kept += st.Count
				a.Kept += st.Count
				if !st.OK {
					s.KeptFailures += st.Count
				}
			case "":
				s.Unfiltered += st.Count
			default:
				s.Dropped[st.Filter] += st.Count
				s.DroppedByRule[st.Filter+" "+st.Rule] += st.Count
			}
		} else if st.Filter == FilterKept {
			s.Synthesized += st.Count
			a.Synth += st.Count
		}
		if st.Rationale {
			s.Rationales += st.Count
		}
		switch st.Split {
		case "", SplitNone:
		default:
			r := splits[st.Split]
			if r == nil {
				r = &SplitRow{Split: st.Split}
				splits[st.Split] = r
				splitCats[st.Split] = map[string]bool{}
				splitAPIs[st.Split] = map[string]bool{}
			}
			r.Samples += st.Count
			splitCats[st.Split][a.Category] = true
			splitAPIs[st.Split][st.Tool] = true
			if st.Split == SplitTrain {
				a.Train += st.Count
			} else if isTest(st.Split) {
				a.Test += st.Count
			}
		}
	}
	s.Pending = s.Requests - s.Real
	if s.Pending < 0 {
		s.Pending = 0
	}
	for _, name := range append([]string{SplitTrain}, append(append([]string(nil), TestSplits...), SplitHeldOut, SplitNearDuplicate)...) {
		if r := splits[name]; r != nil {
			r.APIs, r.Categories = len(splitAPIs[name]), len(splitCats[name])
			s.Splits = append(s.Splits, *r)
		}
	}
	if raw, ok, err := e.Store.Meta(ctx, e.Dataset, "split"); err == nil && ok {
		var si SplitStats
		if json.Unmarshal([]byte(raw), &si) == nil {
			s.SplitInfo = &si
			for _, t := range si.HeldOutAPIs {
				api(t).Group = "ood"
			}
		}
	}
	rej, err := e.Store.RejectStats(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	for _, r := range rej {
		s.Rejected[r.Stage+"/"+r.Reason] += r.Count
	}
	err = e.Store.EachRationale(ctx, e.Dataset, func(r *Rationale) error {
		if r.Verdict != FilterKept {
			s.RationalesDropped[r.Verdict]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if raw, ok, err := e.Store.Meta(ctx, e.Dataset, "export"); err == nil && ok {
		var ex ExportStats
		if json.Unmarshal([]byte(raw), &ex) == nil {
			s.Export = &ex
		}
	}
	exported := 0
	if s.Export != nil {
		exported = s.Export.SFT + s.Export.CoT
	}
	s.Funnel = []FunnelStep{
		{StepGenerated, s.Requests, "requests written (distinct per API)"},
		{StepCalled, s.Real, "requests the real API answered"},
		{StepKept, s.Kept, "real pairs the filter kept"},
		{StepSynthesized, s.Synthesized, "synthesized pairs kept"},
		{StepExplained, s.Rationales, "pairs with a kept rationale"},
		{StepExported, exported, "training samples written (SFT + CoT)"},
	}
	cats := map[string]*CategoryRow{}
	for _, tool := range sortedKeys(apis) {
		a := apis[tool]
		s.APIs = append(s.APIs, *a)
		c := cats[a.Category]
		if c == nil {
			c = &CategoryRow{Category: a.Category}
			cats[a.Category] = c
		}
		c.APIs++
		c.Requests += a.Requests
		c.Real += a.Real
		c.RealOK += a.RealOK
		c.Kept += a.Kept
		c.Synth += a.Synth
		c.Train += a.Train
		c.Test += a.Test
	}
	for _, st := range stats {
		if st.Rationale {
			cats[api(st.Tool).Category].Rationales += st.Count
		}
	}
	for _, k := range sortedKeys(cats) {
		s.Categories = append(s.Categories, *cats[k])
	}
	sort.SliceStable(s.Categories, func(i, j int) bool { return s.Categories[i].Real > s.Categories[j].Real })
	return s, nil
}

func isTest(split string) bool {
	for _, t := range TestSplits {
		if t == split {
			return true
		}
	}
	return false
}
