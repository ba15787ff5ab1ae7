package score

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// NestfulSet is a named set of samples, scored together.
type NestfulSet struct {
	Name    string
	Samples []metrics.NestfulSample
	// Where says where each sample is in the file ("line 7",
	// "sets[2] (edge), samples[5]"), for errors.
	Where []string
}

const nestfulHint = `a NESTful record is {"id", "gold", "pred"} (or NESTful's own "output" and "generated_text"), each the JSON text of a list of {"name", "arguments", "label"} calls, or the list itself`

// ReadNestful reads the samples of a file in one of these forms:
//
//   - the fixture's: {"sets": [{"name", "samples": [{"id", "gold", "pred"}]}]};
//   - JSON Lines, or a JSON array, of records {"id", "gold", "pred"}, with
//     NESTful's own field names "output" and "generated_text" accepted
//     for gold and pred, and an optional "set" grouping records into sets
//     (else one set named after the file).
//
// gold and pred are the text of a JSON list of calls, as NESTful's scorer
// reads them; a JSON value in their place is written as Python's
// json.dumps writes it. An error names the record (line or index) and
// what is wrong with it.
func ReadNestful(path string) ([]NestfulSet, error) {
	obj, recs, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if obj != nil {
		if sets, ok := obj.Get("sets"); ok {
			return readNestfulFixture(path, sets)
		}
	}
	def := filepath.Base(path)
	var out []NestfulSet
	at := map[string]int{}
	for _, r := range recs {
		s, err := nestfulSample(path, r, fmt.Sprintf("%s:%d", def, r.n))
		if err != nil {
			return nil, err
		}
		name, ok, err := r.str(path, "set")
		if err != nil {
			return nil, err
		}
		if !ok {
			name = def
		}
		i, seen := at[name]
		if !seen {
			i = len(out)
			at[name] = i
			out = append(out, NestfulSet{Name: name})
		}
		out[i].Samples = append(out[i].Samples, s)
		out[i].Where = append(out[i].Where, r.where)
	}
	if len(out) == 0 {
		return nil, badInput(path, "", nestfulHint, "no records")
	}
	return out, nil
}

func readNestfulFixture(path string, sets any) ([]NestfulSet, error) {
	list, ok := sets.([]any)
	if !ok {
		return nil, badInput(path, "", `"sets" is a list of {"name", "samples"}`, `"sets" must be a list, not %s`, jsonKind(sets))
	}
	out := make([]NestfulSet, 0, len(list))
	for i, sv := range list {
		where := fmt.Sprintf("sets[%d]", i)
		sd, ok := sv.(pyfmt.Dict)
		if !ok {
			return nil, badInput(path, where, `each set is {"name", "samples"}`, "a set must be an object, not %s", jsonKind(sv))
		}
		set := NestfulSet{Name: fmt.Sprintf("set %d", i+1)}
		if n, ok := sd.Get("name"); ok {
			if s, ok := n.(string); ok {
				set.Name = s
			}
		}
		samples, ok := sd.Get("samples")
		sl, isList := samples.([]any)
		if !ok || !isList {
			return nil, badInput(path, where+" ("+set.Name+")", `each set is {"name", "samples"}`, `"samples" must be a list of records`)
		}
		for j, x := range sl {
			d, ok := x.(pyfmt.Dict)
			r := record{v: d, where: fmt.Sprintf("%s (%s), samples[%d]", where, set.Name, j), n: j + 1}
			if !ok {
				return nil, badInput(path, r.where, nestfulHint, "a sample must be an object, not %s", jsonKind(x))
			}
			s, err := nestfulSample(path, r, fmt.Sprintf("%s:%d", set.Name, j+1))
			if err != nil {
				return nil, err
			}
			set.Samples = append(set.Samples, s)
			set.Where = append(set.Where, r.where)
		}
		out = append(out, set)
	}
	return out, nil
}

// nestfulSample reads one record; defID names it when it has no "id".
func nestfulSample(path string, r record, defID string) (metrics.NestfulSample, error) {
	s := metrics.NestfulSample{ID: defID}
	if id, ok := r.v.Get("id"); ok && id != nil {
		s.ID = pyfmt.Str(id)
	}
	text := func(names ...string) (string, error) {
		v, name, ok := r.field(names...)
		if !ok {
			return "", badInput(path, r.where, nestfulHint, "no %q", names[0])
		}
		if t, ok := v.(string); ok {
			return t, nil
		}
		if v == nil {
			return "", badInput(path, r.where, nestfulHint, "%q is null", name)
		}
		return pyfmt.Dumps(v), nil
	}
	var err error
	if s.Gold, err = text("gold", "output"); err != nil {
		return s, err
	}
	if s.Pred, err = text("pred", "generated_text"); err != nil {
		return s, err
	}
	return s, nil
}

// NestfulReport is what ScoreNestful found.
type NestfulReport struct {
	Metric string `json:"metric"`
	Input  string `json:"input"`
	// Variant is "reference" or the corrections applied.
	Variant string                 `json:"variant"`
	Options metrics.NestfulOptions `json:"options"`
	Sets    []NestfulSetReport     `json:"sets"`
	// Agreement compares with NESTful's own output, when given.
	Agreement *NestfulAgreement `json:"agreement,omitempty"`
}

// NestfulSetReport is one set's scores: the set as a whole, and each
// sample alone (as NESTful's scorer gives them when run on one sample).
type NestfulSetReport struct {
	Name    string `json:"name"`
	Samples int    `json:"samples"`
	// Result is calculate_scores of the set; Error says why there is
	// none (the reference stops).
	Result    *metrics.NestfulResult `json:"result,omitempty"`
	Error     string                 `json:"error,omitempty"`
	PerSample []NestfulSampleReport  `json:"per_sample"`
}

// NestfulSampleReport is one sample scored alone.
type NestfulSampleReport struct {
	ID     string                 `json:"id"`
	Result *metrics.NestfulResult `json:"result,omitempty"`
	Error  string                 `json:"error,omitempty"`
}

// ScoreNestful scores every set as a whole and every sample alone. A
// sample the reference stops on (unreadable gold, a scalar prediction)
// is an error naming it: the file must be fixed, or the correction that
// covers it chosen. A set or sample whose scores are undefined (no gold
// label at all) is reported as such. Progress goes to w (nil: nowhere).
func ScoreNestful(ctx context.Context, input string, sets []NestfulSet, opt metrics.NestfulOptions, w io.Writer) (*NestfulReport, error) {
	total := 0
	for _, s := range sets {
		total += len(s.Samples)
	}
	bar := progress.New(w, total, "nestful")
	defer bar.Finish()
	rep := &NestfulReport{Metric: "nestful", Input: input, Variant: opt.Variant(), Options: opt}
	for _, set := range sets {
		sr := NestfulSetReport{Name: set.Name, Samples: len(set.Samples)}
		res, err := metrics.Nestful(set.Samples, opt)
		if err := stopErr(input, set, 0, err); err != nil {
			return nil, err
		}
		if err != nil {
			sr.Error = err.Error()
		} else {
			sr.Result = &res
		}
		for i, s := range set.Samples {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			one, err := metrics.Nestful([]metrics.NestfulSample{s}, opt)
			if err := stopErr(input, set, i, err); err != nil {
				return nil, err
			}
			ps := NestfulSampleReport{ID: s.ID}
			if err != nil {
				ps.Error = err.Error()
			} else {
				ps.Result = &one
			}
			sr.PerSample = append(sr.PerSample, ps)
			bar.Add(1)
		}
		rep.Sets = append(rep.Sets, sr)
	}
	return rep, nil
}

// stopErr returns the errors that stop the scoring: a sample the
// reference cannot score, named by where it is in the input (offset is
// the index in the set of the first sample scored).
func stopErr(input string, set NestfulSet, offset int, err error) error {
	var se *metrics.NestfulSampleError
	if !errors.As(err, &se) {
		return nil
	}
	where := "set " + set.Name
	if i := offset + se.Index; i < len(set.Where) {
		where = set.Where[i]
	}
	return badInput(input, where, "", "%v", err)
}

// NestfulAgreement is how a scoring compares with the output of NESTful's
// own scorer on the same file.
type NestfulAgreement struct {
	Reference string `json:"reference"`
	// Sets and Samples count those whose every figure (intent and slot
	// P/R/F1, partial and full match, parse errors; or the error) equals
	// the reference's to Tolerance.
	Sets      Fraction `json:"sets"`
	Samples   Fraction `json:"samples"`
	Tolerance float64  `json:"tolerance"`
	// Unmatched names the first sets and samples that differ.
	Unmatched []string `json:"unmatched,omitempty"`
}

// CompareNestfulReference compares a report with NESTful's own output for
// the same file, in the fixture's reference.json format ({"sets": {name:
// {"aggregate": {...}, "per": {id: {...}}}}}, each entry {"intent": [p,
// r, f1], "slot": [...], "partial", "full", "parse_errors"} or {"error"}).
func CompareNestfulReference(rep *NestfulReport, path string) (*NestfulAgreement, error) {
	obj, _, err := readFile(path)
	if err != nil {
		return nil, err
	}
	setsV, ok := obj.Get("sets")
	refSets, isDict := setsV.(pyfmt.Dict)
	if !ok || !isDict {
		return nil, badInput(path, "", `the reference is {"sets": {name: {"aggregate", "per"}}}`, `no "sets" object`)
	}
	a := &NestfulAgreement{Reference: path, Tolerance: 1e-9}
	for _, s := range rep.Sets {
		a.Sets.Total++
		want, ok := refSets.Get(s.Name)
		if !ok {
			a.Unmatched = append(a.Unmatched, "set "+s.Name+": not in the reference")
			a.Samples.Total += len(s.PerSample)
			continue
		}
		wd, _ := want.(pyfmt.Dict)
		agg, _ := wd.Get("aggregate")
		if nestfulEqual(s.Result, s.Error, agg, a.Tolerance) {
			a.Sets.N++
		} else {
			a.Unmatched = append(a.Unmatched, "set "+s.Name)
		}
		per, _ := wd.Get("per")
		pd, _ := per.(pyfmt.Dict)
		for _, p := range s.PerSample {
			a.Samples.Total++
			w, ok := pd.Get(p.ID)
			if ok && nestfulEqual(p.Result, p.Error, w, a.Tolerance) {
				a.Samples.N++
			} else if len(a.Unmatched) < 50 {
				a.Unmatched = append(a.Unmatched, "sample "+s.Name+" "+p.ID)
			}
		}
	}
	return a, nil
}

// nestfulEqual compares a result (or its error) with a reference entry.
func nestfulEqual(r *metrics.NestfulResult, errText string, want any, tol float64) bool {
	w, ok := want.(pyfmt.Dict)
	if !ok {
		return false
	}
	if e, ok := w.Get("error"); ok {
		es, _ := e.(string)
		return r == nil && es != "" && strings.Contains(errText, es[strings.Index(es, ":")+1:])
	}
	if r == nil {
		return false
	}
	num := func(v any) float64 {
		switch x := v.(type) {
		case json.Number:
			f, _ := x.Float64()
			return f
		case float64:
			return x
		}
		return math.Inf(1)
	}
	same := func(g float64, v any) bool {
		x := num(v)
		if math.IsNaN(g) || math.IsNaN(x) {
			return math.IsNaN(g) && math.IsNaN(x)
		}
		return math.Abs(g-x) <= tol
	}
	triple := func(g metrics.PRF, key string) bool {
		v, _ := w.Get(key)
		l, ok := v.([]any)
		return ok && len(l) == 3 && same(g.Precision, l[0]) && same(g.Recall, l[1]) && same(g.F1, l[2])
	}
	partial, _ := w.Get("partial")
	full, _ := w.Get("full")
	pe, _ := w.Get("parse_errors")
	return triple(r.Intent, "intent") && triple(r.Slot, "slot") && same(r.PartialMatch, partial) && same(r.FullMatch, full) &&
		(pe == nil || num(pe) == float64(r.ParseErrors))
}

// NestfulFileOptions say how ScoreNestfulFile scores a file.
type NestfulFileOptions struct {
	// Options are the scorer's (the parser, the corrections).
	Options metrics.NestfulOptions
	// Parser and Model choose the parser as the reference does
	// (metrics.ResolveNestfulParser); both "" keeps Options.Parser.
	Parser, Model string
	// Corrected applies the three corrections of the reference's quirks.
	Corrected bool
	// Reference, when not "", is NESTful's own output for the file (the
	// fixture's reference.json format), compared with.
	Reference string
}

// ScoreNestfulFile reads a file of NESTful samples (ReadNestful), scores
// it (ScoreNestful) with the parser and corrections opt chooses, and
// compares the scores with NESTful's own output when opt names it.
// Progress goes to w (nil: nowhere). A parser or model the reference
// does not have is a StatusInvalidArguments error.
func ScoreNestfulFile(ctx context.Context, path string, opt NestfulFileOptions, w io.Writer) (*NestfulReport, error) {
	o := opt.Options
	if opt.Parser != "" || opt.Model != "" {
		p, err := metrics.ResolveNestfulParser(opt.Parser, opt.Model)
		if err != nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "name a parser of granite, llama, hammer, agent (--parser), or a model NESTful's scorer.py knows (--model-name)", "%v", err)
		}
		o.Parser = p
	}
	if opt.Corrected {
		o.UnorderedObjects, o.SingleLabelAsMultiLabel, o.ScalarPredictionAsParseError = true, true, true
	}
	sets, err := ReadNestful(path)
	if err != nil {
		return nil, err
	}
	rep, err := ScoreNestful(ctx, path, sets, o, w)
	if err != nil {
		return nil, err
	}
	if opt.Reference != "" {
		if rep.Agreement, err = CompareNestfulReference(rep, opt.Reference); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
