package simulate

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// ExampleSource gives recorded calls of a tool: the pool few-shot examples
// (simulator) and neighbour values (synthesizer) are chosen from.
// store.Store implements it: its entries hold the canonical JSON of the
// arguments and the response.
type ExampleSource interface {
	// Examples returns up to limit successful recorded calls of the tool
	// with ID toolID.
	Examples(ctx context.Context, toolID string, limit int) ([]*store.Entry, error)
}

var _ ExampleSource = (store.Store)(nil)

// example is one candidate few-shot example.
type example struct {
	args  map[string]any
	canon string // canonical JSON of args
	body  json.RawMessage
	err   string
	score float64
}

// gatherExamples collects the candidates for a call: the documentation's
// examples first, then up to pool recorded calls from src, without
// duplicate arguments. A failing source is reported and skipped.
func gatherExamples(ctx context.Context, doc *toolenv.Tool, toolID string, src ExampleSource, pool int) ([]example, error) {
	var out []example
	seen := map[string]bool{}
	for _, e := range doc.Examples {
		if len(e.Response) == 0 && e.Error == "" {
			continue
		}
		c, err := toolenv.Canonical(e.Args)
		if err != nil || seen[string(c)] {
			continue
		}
		seen[string(c)] = true
		out = append(out, example{args: e.Args, canon: string(c), body: e.Response, err: e.Error})
	}
	if src == nil || pool <= 0 {
		return out, nil
	}
	entries, err := src.Examples(ctx, toolID, pool)
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		if seen[e.Args] || e.Status != toolenv.StatusOK {
			continue
		}
		var args map[string]any
		if err := toolenv.DecodeJSON([]byte(e.Args), &args); err != nil {
			continue
		}
		seen[e.Args] = true
		out = append(out, example{args: args, canon: e.Args, body: e.Body, err: e.Error})
	}
	return out, nil
}

// rankExamples scores every candidate by its similarity to args and sorts
// them, most similar first; ties go to the shorter, then the smaller
// canonical arguments, so the order is deterministic.
func rankExamples(cands []example, args map[string]any) {
	for i := range cands {
		cands[i].score = similarity(args, cands[i].args)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if len(a.body) != len(b.body) {
			return len(a.body) < len(b.body)
		}
		return a.canon < b.canon
	})
}

// chooseExamples picks the few-shot examples: the k most similar
// candidates, then, as StableToolBench does with its 5 examples, the
// least similar dropped one by one while the rendered examples exceed
// budget characters (keeping at least one). Candidates whose own
// rendering exceeds the budget are passed over first, so that one huge
// response cannot crowd out every other example.
func chooseExamples(cands []example, args map[string]any, k, budget int, size func([]example) int) []example {
	if k <= 0 || len(cands) == 0 {
		return nil
	}
	rankExamples(cands, args)
	var fit []example
	for _, c := range cands {
		if len(fit) == k {
			break
		}
		if budget <= 0 || size([]example{c}) <= budget {
			fit = append(fit, c)
		}
	}
	for len(fit) > 1 && budget > 0 && size(fit) > budget {
		fit = fit[:len(fit)-1]
	}
	return fit
}

// similarity scores how alike two argument sets are, from 0 to 1: 40% the
// overlap of their parameter names, 60% how alike the values of the
// shared parameters are (equal values 1; numbers by relative distance;
// text by word overlap).
func similarity(a, b map[string]any) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	shared, union := 0, len(a)
	var vals float64
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			continue
		}
		shared++
		vals += valueSimilarity(va, vb)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			union++
		}
	}
	if shared == 0 {
		return 0
	}
	return 0.4*float64(shared)/float64(union) + 0.6*vals/float64(shared)
}

// valueSimilarity compares two argument values, from 0 to 1.
func valueSimilarity(a, b any) float64 {
	sa, sb := argText(a), argText(b)
	if sa == sb {
		return 1
	}
	if fa, errA := strconv.ParseFloat(sa, 64); errA == nil {
		if fb, errB := strconv.ParseFloat(sb, 64); errB == nil {
			m := math.Max(math.Abs(fa), math.Abs(fb))
			if m == 0 {
				return 1
			}
			return math.Max(0, 1-math.Abs(fa-fb)/m)
		}
	}
	return jaccard(words(sa), words(sb))
}

// argText renders an argument value for comparison.
func argText(v any) string {
	switch x := v.(type) {
	case string:
		return strings.ToLower(strings.TrimSpace(x))
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	return strings.ToLower(string(encodeJSON(ordered(v))))
}

// words splits text into lower-case runs of letters and digits.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
