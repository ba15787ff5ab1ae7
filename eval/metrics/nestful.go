package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// NestfulSample is one sample as NESTful's scorer reads it: Gold is the
// text of the gold call sequence (its item["output"]) and Pred the model's
// output (item["generated_text"]), each the JSON of a list of calls
// {"name", "arguments", "label"}.
type NestfulSample struct {
	ID   string `json:"id,omitempty"`
	Gold string `json:"gold"`
	Pred string `json:"pred"`
}

// NestfulOptions choose a variant of the NESTful scorer. The zero value is
// the reference exactly; the other fields each correct one of its quirks
// (NestfulCorrected sets them all).
type NestfulOptions struct {
	// SkipGrounding is the reference parser's own skip_grounding: the
	// calls are scored as written, var_result included and references
	// left as labels. Off (the reference's default), the parser drops
	// var_result calls and rewrites "$varN.x$" to "$API.x$" (API being
	// the name of the call labelled varN) in the gold sequence, and in
	// the prediction when its text holds "label".
	SkipGrounding bool `json:"skip_grounding,omitempty"`
	// UnorderedObjects writes objects nested in argument values with
	// their keys sorted, so that {"a": 1, "b": 2} and {"b": 2, "a": 1}
	// agree. The reference writes them with Python's str, in the order
	// they were written, so the two differ.
	UnorderedObjects bool `json:"unordered_objects,omitempty"`
	// SingleLabelAsMultiLabel scores a set whose gold sequences hold a
	// single distinct label (one API name, one "arg = value") as a
	// multi-label problem of that one label. The reference hands
	// scikit-learn a one-column indicator matrix, which it takes for a
	// binary target and averages over the presence and the absence of
	// the label.
	SingleLabelAsMultiLabel bool `json:"single_label_as_multi_label,omitempty"`
	// ScalarPredictionAsParseError counts a prediction that is a JSON
	// number, true, false or null (and holds no "label") as one that
	// could not be parsed. The reference stops with a TypeError.
	ScalarPredictionAsParseError bool `json:"scalar_prediction_as_parse_error,omitempty"`
	// Parser is the reference's output parser that reads the prediction
	// (NestfulParsers: "granite", "llama", "hammer", "agent"); "" is
	// "granite".
	Parser string `json:"parser,omitempty"`
}

// The output parsers of IBM NESTful's src/output_parsers.py that
// NestfulOptions.Parser names, as its scorer.py picks them by model.
const (
	// NestfulParserGranite is parse_granite_3_1_output (scorer.py's
	// GRANITE_3_1_MODELS and QWEN_MODELS): the "<|tool_call|>" and
	// "<tool_call>" tags removed, json.loads of the rest, grounded when
	// the text holds "label".
	NestfulParserGranite = "granite"
	// NestfulParserLlama is parse_llama_3_output (LLAMA_MODELS): the
	// text stripped, one trailing "'" dropped, "[" and "]" added where
	// missing, json.loads, grounded when the text holds "label".
	NestfulParserLlama = "llama"
	// NestfulParserHammer is parse_Hammer2_0_7b ("Hammer2.0-7b"): every
	// "```" removed, the rest stripped and read with json.loads; an empty
	// or scalar value is a parse error; always grounded.
	NestfulParserHammer = "hammer"
	// NestfulParserAgent is parse_xLAM_1b_fc_r (the xLAM agent models):
	// the text stripped, xLAM's "[BEGIN OF ...]" markers removed, the
	// calls read from a JSON object's "tool_calls"; always grounded.
	NestfulParserAgent = "agent"
)

// NestfulParsers lists the parsers by name, with the reference function
// each one is.
var NestfulParsers = map[string]string{
	NestfulParserGranite: "parse_granite_3_1_output",
	NestfulParserLlama:   "parse_llama_3_output",
	NestfulParserHammer:  "parse_Hammer2_0_7b",
	NestfulParserAgent:   "parse_xLAM_1b_fc_r",
}

// nestfulModels is IBM NESTful's scorer.py model table, for the parsers
// toolenv has: the model names it dispatches on.
var nestfulModels = map[string]string{
	"granite-3.1-8b-instruct": NestfulParserGranite, "qwen-2.5-3B-instruct": NestfulParserGranite,
	"Llama-3.1-8B-Instruct": NestfulParserLlama, "llama-3-1-70b-instruct": NestfulParserLlama,
	"llama-3-1-405b-instruct-fp8": NestfulParserLlama, "Llama-3.2-11B-Vision-Instruct": NestfulParserLlama,
	"Llama-3.2-90B-Vision-Instruct": NestfulParserLlama,
	"Hammer2.0-7b":                  NestfulParserHammer,
	"xLAM-1b-fc-r":                  NestfulParserAgent, "xLAM-7b-fc-r": NestfulParserAgent, "xLAM-8x7b-r": NestfulParserAgent, "xLAM-8x22b-r": NestfulParserAgent,
}

// nestfulOtherModels are scorer.py's models whose parsers toolenv does
// not have, with the parser each gets there.
var nestfulOtherModels = map[string]string{
	"Granite-20B-FunctionCalling": "parse_granite_20b_function_calling_output",
	"llama-3-70b-instruct":        "parse_llama_3_70b_instruct", "llama-3-1-405b-instruct": "parse_llama_3_70b_instruct",
	"Mistral-7B-Instruct-v0.3": "parse_mistral_7b_instruct_v0_3", "mixtral_8x7b_instruct_v01": "parse_mistral_7b_instruct_v0_3",
	"Mixtral-8x22B-Instruct-v0.1": "parse_mistral_7b_instruct_v0_3",
	"Hermes-2-Pro-Mistral-7B":     "parse_hermes_2_pro_mistral_7B",
	"ToolAce-8b":                  "parse_ToolAce",
	"granite-3.0-8b-instruct":     "parse_granite_3_output", "granite-3.0-8b-instruct-FT": "parse_granite_3_output",
	"DeepSeek-V3": "parse_deepseek_output", "DeepSeek-R1": "parse_deepseek_output",
}

// ResolveNestfulParser chooses the parser as the reference does: the one
// named (granite, llama, hammer, agent), else the one its scorer.py picks
// for the model (NestfulParserFor), else Granite's (the parser NESTful's
// published scores were computed with for the Granite and Qwen models,
// and toolenv's default).
func ResolveNestfulParser(parser, model string) (string, error) {
	if parser != "" {
		if _, ok := NestfulParsers[parser]; !ok {
			return "", fmt.Errorf("nestful: no parser %q: name one of granite, llama, hammer, agent", parser)
		}
		return parser, nil
	}
	if model != "" {
		return NestfulParserFor(model)
	}
	return NestfulParserGranite, nil
}

// NestfulParserFor is the parser IBM NESTful's scorer.py runs for a model
// it knows by name (its model table); an error names the reference
// parser of a model whose parser toolenv does not have, or says the
// model is not in the table (where the reference raises "model not
// handled").
func NestfulParserFor(model string) (string, error) {
	if p, ok := nestfulModels[model]; ok {
		return p, nil
	}
	if fn, ok := nestfulOtherModels[model]; ok {
		return "", fmt.Errorf("nestful: NESTful's scorer reads %s's outputs with %s, which toolenv does not reproduce; choose a parser of granite, llama, hammer or agent", model, fn)
	}
	return "", fmt.Errorf("nestful: NESTful's scorer does not know the model %q (it raises \"model not handled\"); name the parser instead: granite, llama, hammer or agent", model)
}

// ParserFunc is the reference function of the parser the options choose.
func (o NestfulOptions) ParserFunc() string {
	if f, ok := NestfulParsers[o.Parser]; ok {
		return f
	}
	return NestfulParsers[NestfulParserGranite]
}

// NestfulCorrected is the reference with every quirk corrected but its
// grounding, which is NESTful's design.
var NestfulCorrected = NestfulOptions{UnorderedObjects: true, SingleLabelAsMultiLabel: true, ScalarPredictionAsParseError: true}

// Variant names the options as a report prints them: "reference", or the
// corrections in force. The parser is not a variant: each is the
// reference's own (ParserFunc names it).
func (o NestfulOptions) Variant() string {
	var parts []string
	if o.SkipGrounding {
		parts = append(parts, "skip-grounding")
	}
	if o.UnorderedObjects {
		parts = append(parts, "unordered-objects")
	}
	if o.SingleLabelAsMultiLabel {
		parts = append(parts, "single-label-as-multi-label")
	}
	if o.ScalarPredictionAsParseError {
		parts = append(parts, "scalar-prediction-as-parse-error")
	}
	if len(parts) == 0 {
		return "reference"
	}
	return strings.Join(parts, ",")
}

// NestfulResult holds what NESTful's calculate_scores returns for a set
// of samples, at full precision.
type NestfulResult struct {
	// Intent and Slot are compute_score_sklearn's macro-averaged
	// precision, recall and F1.
	Intent PRF `json:"intent"`
	Slot   PRF `json:"slot"`
	// PartialMatch is accuracy_combined: the mean over samples of
	// PerSample. It is NaN when a sample has no call on either side
	// (scikit-learn's accuracy of two empty lists).
	PartialMatch float64 `json:"-"`
	// FullMatch is percentage_times_full_score: the fraction of samples
	// whose PerSample is 1.
	FullMatch float64 `json:"full_match"`
	// PerSample is each sample's accuracy over its aligned calls.
	PerSample []float64 `json:"-"`
	Samples   int       `json:"samples"`
	// ParseErrors is num_pred_examples_w_parsing_errors: the samples
	// whose prediction could not (wholly) be read.
	ParseErrors int `json:"parse_errors"`
	// Counts are the reference's four num_errors_parsing counters.
	Counts NestfulParseCounts `json:"parse_error_counts"`
}

// NestfulParseCounts are the reference's num_errors_parsing_pred_intent,
// _gold_intent, _pred_slot and _gold_slot.
type NestfulParseCounts struct {
	PredIntent int `json:"pred_intent"`
	GoldIntent int `json:"gold_intent"`
	PredSlot   int `json:"pred_slot"`
	GoldSlot   int `json:"gold_slot"`
}

// MarshalJSON writes the result with PartialMatch and PerSample, a NaN
// as null (JSON has no NaN).
func (r NestfulResult) MarshalJSON() ([]byte, error) {
	type plain NestfulResult
	per := make([]*float64, len(r.PerSample))
	for i := range r.PerSample {
		per[i] = finite(r.PerSample[i])
	}
	return json.Marshal(struct {
		plain
		PartialMatch *float64   `json:"partial_match"`
		PerSample    []*float64 `json:"per_sample,omitempty"`
	}{plain(r), finite(r.PartialMatch), per})
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Printed returns the figures as calculate_scores returns them, each
// written with "{:.3f}" (p_intent, r_intent, f1_intent, p_slot, r_slot,
// f1_slot, accuracy_combined, percentage_times_full_score).
func (r NestfulResult) Printed() map[string]string {
	return map[string]string{
		"p_intent": pyFormat3(r.Intent.Precision), "r_intent": pyFormat3(r.Intent.Recall), "f1_intent": pyFormat3(r.Intent.F1),
		"p_slot": pyFormat3(r.Slot.Precision), "r_slot": pyFormat3(r.Slot.Recall), "f1_slot": pyFormat3(r.Slot.F1),
		"accuracy_combined":           pyFormat3(r.PartialMatch),
		"percentage_times_full_score": pyFormat3(r.FullMatch),
	}
}

// NestfulUndefinedError is returned when a metric has no gold label at
// all: no gold call names an API (intent), or no gold call has an
// argument (slot). scikit-learn then raises "ValueError: unknown is not
// supported" and the reference scorer stops; there is no score.
type NestfulUndefinedError struct {
	// Metric is "intent" or "slot".
	Metric string
}

// Error says which metric is undefined and why.
func (e *NestfulUndefinedError) Error() string {
	what := "no gold call names an API"
	if e.Metric == "slot" {
		what = "no gold call has an argument"
	}
	return fmt.Sprintf("nestful: %s scores are undefined: %s (scikit-learn raises %q and NESTful's scorer stops); add samples whose gold calls have them", e.Metric, what, e.Python())
}

// Python is the exception the reference scorer raises.
func (e *NestfulUndefinedError) Python() string { return "ValueError: unknown is not supported" }

// NestfulSampleError is a sample the reference scorer would stop on: a
// gold sequence it cannot read, or a prediction it cannot iterate.
type NestfulSampleError struct {
	// Index is the sample's position (from 0), ID its id if it has one.
	Index int
	ID    string
	// Side is "gold" or "prediction".
	Side string
	// Err says what is wrong, as Python's exception.
	Err error
}

// Error names the sample and says what is wrong and how to fix it.
func (e *NestfulSampleError) Error() string {
	name := fmt.Sprintf("sample %d", e.Index+1)
	if e.ID != "" {
		name += " (" + e.ID + ")"
	}
	hint := "the gold sequence must be a JSON list of {\"name\", \"arguments\", \"label\"} objects"
	if e.Side == "prediction" {
		hint = "NESTful's scorer stops on a prediction that is a JSON number, boolean or null; fix the record, or count it as a parse error with the scalar-prediction-as-parse-error correction"
	}
	return fmt.Sprintf("nestful: %s: %s: %v; %s", name, e.Side, e.Err, hint)
}

// Unwrap returns what is wrong.
func (e *NestfulSampleError) Unwrap() error { return e.Err }

// Nestful scores samples as NESTful's calculate_scores does (IBM NESTful,
// src/scorer.py, with the parse_granite_3_1_output parser it runs and
// compute_score_sklearn and post_process_api_with_args of src/utils.py,
// under scikit-learn 1.2.1), to the last bit where the arithmetic allows:
//
//   - reading: each side is read with Python's json.loads; the parser
//     then drops var_result calls and rewrites references "$varN.x$" to
//     the name of the API labelled varN ("grounding"), always in the gold
//     sequence and in the prediction only when its text holds "label";
//     a prediction that cannot be read or grounded scores no calls and
//     counts as a parse error;
//   - intent: per sample the list of str(name) of its calls (a
//     prediction {"name": "dummy", "arguments": {}} skipped); a
//     MultiLabelBinarizer fitted on the gold lists; precision, recall and
//     F1 per gold label averaged (macro; a label never predicted has
//     precision 0). With a single gold label scikit-learn sees a binary
//     target and averages over its presence and absence instead;
//   - slot: per sample one row per API named on either side (Python dict
//     keys, so 1 and 1.0 are one API), the labels "arg = str(value)" of
//     the last call to it (a predicted "$ref" missing its closing '$'
//     gets one), scored as intents;
//   - sequence match: each call written "name(arg = value, ...)" with the
//     items sorted (a predicted call whose arguments are not an object as
//     "name({})"); lists of different lengths aligned by NESTful's
//     align_lists on the names; the fraction of equal positions is the
//     sample's accuracy (NaN for two empty lists), their exact mean the
//     partial match and the share of 1s the full match.
//
// A set whose gold sequences hold no API or no argument at all has no
// score: the error is a *NestfulUndefinedError. A gold sequence the
// reference cannot read, or a prediction it cannot iterate, is a
// *NestfulSampleError naming the sample. opt selects corrections of the
// reference's quirks; its zero value is the reference.
func Nestful(samples []NestfulSample, opt NestfulOptions) (NestfulResult, error) {
	res := NestfulResult{Samples: len(samples)}
	if len(samples) == 0 {
		return res, errors.New("nestful: no samples to score")
	}
	var goldIntent, predIntent, goldSlot, predSlot [][]string
	full := 0
	for i, s := range samples {
		ps, err := nestfulParse(s, opt)
		if err != nil {
			se := err.(*NestfulSampleError)
			se.Index, se.ID = i, s.ID
			return res, se
		}
		predErr := ps.predErr
		if predErr {
			res.Counts.PredIntent++ // counted by the parser
		}
		gold := reloadAll(ps.gold)
		pred := reloadAll(ps.pred)

		// Intent.
		var gi, pi []string
		for k, f := range pred {
			if ps.pred[k] == nestfulDummy {
				continue
			}
			if name, err := pyGetItem(f.v, "name"); f.err == nil && err == nil {
				pi = append(pi, pyStr(name))
			} else {
				res.Counts.PredIntent++
				predErr = true
			}
		}
		for _, f := range gold {
			if name, err := pyGetItem(f.v, "name"); f.err == nil && err == nil {
				gi = append(gi, pyStr(name))
			} else {
				res.Counts.GoldIntent++
			}
		}
		goldIntent = append(goldIntent, gi)
		predIntent = append(predIntent, pi)

		// Slot.
		pm := newSlotMap()
		for k, f := range pred {
			if ps.pred[k] == nestfulDummy {
				continue
			}
			if !pm.add(f, true, opt) {
				res.Counts.PredSlot++
				predErr = true
			}
		}
		gm := newSlotMap()
		for _, f := range gold {
			if !gm.add(f, false, opt) {
				res.Counts.GoldSlot++
			}
		}
		for _, key := range unionKeys(pm.order, gm.order) {
			predSlot = append(predSlot, pm.rows[key])
			goldSlot = append(goldSlot, gm.rows[key])
		}
		if predErr {
			res.ParseErrors++
		}

		// Sequence match.
		gs := make([]string, 0, len(gold))
		for _, f := range gold {
			c, err := callString(f, false, opt)
			if err != nil {
				return res, &NestfulSampleError{Index: i, ID: s.ID, Side: "gold", Err: err}
			}
			gs = append(gs, c)
		}
		var pss []string
		for _, f := range pred {
			if c, err := callString(f, true, opt); err == nil {
				pss = append(pss, c)
			}
		}
		acc := accuracyScore(postProcess(gs, pss))
		if acc == 1 {
			full++
		}
		res.PerSample = append(res.PerSample, acc)
	}
	var err error
	if res.Intent, err = sklearnMacro(goldIntent, predIntent, opt.SingleLabelAsMultiLabel); err != nil {
		return res, &NestfulUndefinedError{Metric: "intent"}
	}
	if res.Slot, err = sklearnMacro(goldSlot, predSlot, opt.SingleLabelAsMultiLabel); err != nil {
		return res, &NestfulUndefinedError{Metric: "slot"}
	}
	res.PartialMatch = statisticsMean(res.PerSample)
	res.FullMatch = float64(full) / float64(len(samples))
	return res, nil
}

// nestfulDummy is the placeholder call the reference skips in intents and
// slots (as json.dumps writes it).
const nestfulDummy = `{"name": "dummy", "arguments": {}}`

type parsedSample struct {
	// gold and pred are the calls as json.dumps wrote them
	// (gold_func_calls and pred_func_calls).
	gold, pred []string
	predErr    bool
}

// pyStrip is Python's str.strip(): Unicode whitespace and the separators
// U+001C-U+001F.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}

// nestfulParsePred reads the prediction with one of the parsers other
// than Granite's: the calls as json.dumps writes them, or a parse error.
func nestfulParsePred(pred string, opt NestfulOptions) ([]string, bool) {
	var v any
	var err error
	grounded := true
	switch opt.Parser {
	case NestfulParserLlama:
		t := pyStrip(pred)
		t = strings.TrimSuffix(t, "'")
		if !strings.HasPrefix(t, "[") {
			t = "[" + t
		}
		if !strings.HasSuffix(t, "]") {
			t += "]"
		}
		if v, err = pyfmt.Loads(t); err != nil {
			return nil, false
		}
		grounded = strings.Contains(pred, "label")
	case NestfulParserHammer:
		if v, err = pyfmt.Loads(pyStrip(strings.ReplaceAll(pred, "```", ""))); err != nil {
			return nil, false
		}
		// assert len(pred_dict_list) > 0
		switch x := v.(type) {
		case []any:
			if len(x) == 0 {
				return nil, false
			}
		case pyfmt.Dict:
			if len(x) == 0 {
				return nil, false
			}
		case string:
			if x == "" {
				return nil, false
			}
		default:
			return nil, false
		}
	case NestfulParserAgent:
		t := pyStrip(pred)
		for _, m := range []string{"[BEGIN OF ANSWER]", "[BEGIN OF FUNCTION CALLS]", "[BEGIN OF FUNCTION CALL]", "[BEGIN OF ACTIONS]", "[BEGIN OF ACTION]"} {
			t = strings.ReplaceAll(t, m, "")
		}
		d, err := pyfmt.Loads(pyStrip(t))
		if err != nil {
			return nil, false
		}
		obj, ok := d.(pyfmt.Dict)
		if !ok {
			return nil, false // "tool_calls" in a list, str or number, then indexing it by a string
		}
		if v, ok = obj.Get("tool_calls"); !ok {
			return nil, false
		}
	}
	var list []any
	switch {
	case opt.SkipGrounding:
		list, err = pyIter(v)
	case grounded:
		list, err = ground(v)
	default:
		list, err = pyIter(v)
	}
	if err != nil {
		return nil, false
	}
	return dumpsAll(list), true
}

// nestfulParse is the parser's reading of a sample: its own of the gold
// sequence and, for the prediction, parse_granite_3_1_output or the parser
// opt names.
func nestfulParse(s NestfulSample, opt NestfulOptions) (parsedSample, error) {
	var ps parsedSample
	gv, err := pyfmt.Loads(s.Gold)
	if err != nil {
		return ps, &NestfulSampleError{Side: "gold", Err: fmt.Errorf("JSONDecodeError: %w", err)}
	}
	var gl []any
	if opt.SkipGrounding {
		gl, err = pyIter(gv)
	} else {
		gl, err = ground(gv)
	}
	if err != nil {
		return ps, &NestfulSampleError{Side: "gold", Err: err}
	}
	ps.gold = dumpsAll(gl)

	if opt.Parser != "" && opt.Parser != NestfulParserGranite {
		calls, ok := nestfulParsePred(s.Pred, opt)
		ps.pred, ps.predErr = calls, !ok
		return ps, nil
	}
	text := strings.ReplaceAll(strings.ReplaceAll(s.Pred, "<|tool_call|>", ""), "<tool_call>", "")
	pv, err := pyfmt.Loads(text)
	if err != nil {
		ps.predErr = true
		return ps, nil
	}
	var pl []any
	switch {
	case opt.SkipGrounding:
		pl, err = pyIter(pv)
	case strings.Contains(text, "label"):
		pl, err = ground(pv)
	default:
		pl, err = pyIter(pv)
		if err != nil && !opt.ScalarPredictionAsParseError {
			// The reference keeps the scalar as its list of calls and
			// fails iterating it in calculate_scores.
			return ps, &NestfulSampleError{Side: "prediction", Err: err}
		}
	}
	if err != nil {
		ps.predErr = true
		return ps, nil
	}
	ps.pred = dumpsAll(pl)
	return ps, nil
}

// ground is ground_seq_nested_repsonse.
func ground(v any) ([]any, error) {
	items, err := pyIter(v)
	if err != nil {
		return nil, err
	}
	type labelAPI struct {
		label string
		api   any
	}
	var labels []labelAPI
	at := map[string]int{}
	for _, api := range items {
		name, err := pyGetItem(api, "name")
		if err != nil {
			return nil, err
		}
		if name == "varResult" || name == "var_result" {
			continue
		}
		l, ok := api.(pyfmt.Dict).Get("label")
		if !ok {
			continue
		}
		ls, ok := l.(string)
		if !ok {
			return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'replace'", pyTypeName(l))
		}
		lbl := strings.ReplaceAll(ls, "$", "")
		if n, seen := at[lbl]; seen {
			labels[n].api = name
		} else {
			at[lbl] = len(labels)
			labels = append(labels, labelAPI{lbl, name})
		}
	}
	replace := func(s string, l labelAPI) (string, error) {
		a, ok := l.api.(string)
		if !ok {
			return "", fmt.Errorf("TypeError: replace() argument 2 must be str, not %s", pyTypeName(l.api))
		}
		return strings.ReplaceAll(s, l.label, a), nil
	}
	var out []any
	for _, api := range items {
		d := api.(pyfmt.Dict)
		name, _ := d.Get("name")
		if name == "var_result" {
			continue
		}
		var args any = pyfmt.Dict{}
		if a, ok := d.Get("arguments"); ok {
			args = a
		} else if p, ok := d.Get("parameters"); ok {
			args = p
		}
		ad, err := pyItems(args)
		if err != nil {
			return nil, err
		}
		temp := make(pyfmt.Dict, 0, len(ad))
		for _, it := range ad {
			sv := it.Value
			for _, l := range labels {
				switch x := sv.(type) {
				case string:
					if labelInSlot(l.label, x) {
						if sv, err = replace(x, l); err != nil {
							return nil, err
						}
					}
				case []any:
					nv := make([]any, len(x))
					for k, e := range x {
						if es, ok := e.(string); ok && labelInSlot(l.label, es) {
							if e, err = replace(es, l); err != nil {
								return nil, err
							}
						}
						// A dict item is checked through its json.dumps,
						// which never starts with "$var": left as it is.
						nv[k] = e
					}
					sv = nv
				}
			}
			temp = append(temp, pyfmt.Item{Key: it.Key, Value: sv})
		}
		out = append(out, pyfmt.Dict{{Key: "name", Value: name}, {Key: "arguments", Value: temp}})
	}
	return out, nil
}

// labelInSlot is the grounding's check_label_in_slot: "$varN.x..." whose
// part before the first '.' is label once its '$' are gone.
func labelInSlot(label, v string) bool {
	if !strings.HasPrefix(v, "$var") || !strings.Contains(v, ".") {
		return false
	}
	head, _, _ := strings.Cut(v, ".")
	return strings.ReplaceAll(head, "$", "") == label
}

func dumpsAll(items []any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = pyfmt.Dumps(it)
	}
	return out
}

// reloaded is a call the parser wrote, read again as the scorer reads
// it: json.loads of its text with every "<|endoftext|>" removed.
type reloaded struct {
	v   any
	err error
}

func reloadAll(calls []string) []reloaded {
	out := make([]reloaded, len(calls))
	for i, f := range calls {
		out[i].v, out[i].err = pyfmt.Loads(strings.TrimSpace(strings.ReplaceAll(f, "<|endoftext|>", "")))
	}
	return out
}

// slotMap is the scorer's pred_api_map / gold_api_map: per API (a Python
// dict key) the labels of its last call, in first-seen order.
type slotMap struct {
	rows  map[string][]string
	order []string
}

func newSlotMap() *slotMap { return &slotMap{rows: map[string][]string{}} }

// add adds a call's row, reporting false where the reference counts a
// parse error (the row may then be left empty, as the reference leaves
// it).
func (m *slotMap) add(f reloaded, predicted bool, opt NestfulOptions) bool {
	if f.err != nil {
		return false
	}
	name, err := pyGetItem(f.v, "name")
	if err != nil {
		return false
	}
	key, err := pyHashKey(name)
	if err != nil {
		return false
	}
	if _, ok := m.rows[key]; !ok {
		m.order = append(m.order, key)
	}
	m.rows[key] = []string{}
	args, err := pyGetItem(f.v, "arguments")
	if err != nil {
		return false
	}
	items, err := pyItems(args)
	if err != nil {
		return false
	}
	row := make([]string, 0, len(items))
	for _, it := range items {
		row = append(row, it.Key+" = "+argValue(it.Value, predicted, opt))
	}
	m.rows[key] = row
	return true
}

// argValue is str(val) of an argument, with the scorer's repair of a
// predicted "$ref" that lacks its closing '$'.
func argValue(v any, predicted bool, opt NestfulOptions) string {
	if s, ok := v.(string); ok {
		if predicted && strings.HasPrefix(s, "$") && !strings.HasSuffix(s, "$") {
			return s + "$"
		}
		return s
	}
	if opt.UnorderedObjects {
		v = sortedKeys(v)
	}
	return pyStr(v)
}

// callString writes a call as "name(a = 1, b = x)". A gold call must be
// an object with a name and an object of arguments (the reference stops
// otherwise); a predicted one that is not an object with a name is
// skipped (an error here), and one whose arguments are not an object is
// written "name({})".
func callString(f reloaded, predicted bool, opt NestfulOptions) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	name, err := pyGetItem(f.v, "name")
	if err != nil {
		return "", err
	}
	args, err := pyGetItem(f.v, "arguments")
	var items pyfmt.Dict
	if err == nil {
		items, err = pyItems(args)
	}
	if err != nil {
		if predicted {
			return pyStr(name) + "({})", nil
		}
		return "", err
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		parts = append(parts, it.Key+" = "+argValue(it.Value, predicted, opt))
	}
	sort.Strings(parts)
	return pyStr(name) + "(" + strings.Join(parts, ", ") + ")", nil
}

// postProcess is post_process_api_with_args: lists of different lengths
// are aligned on their names (the text before the first '(') by
// align_lists, blanks filling the gaps. As in the reference, a call whose
// name is empty is taken for a blank when the lists are rebuilt, so the
// calls after it shift.
func postProcess(gold, pred []string) ([]string, []string) {
	if len(gold) == len(pred) {
		return gold, pred
	}
	name := func(s string) string { n, _, _ := strings.Cut(s, "("); return n }
	gn, pn := make([]string, len(gold)), make([]string, len(pred))
	for i, s := range gold {
		gn[i] = name(s)
	}
	for i, s := range pred {
		pn[i] = name(s)
	}
	var ag, ap []string
	for i, j := 0, 0; i < len(gn) || j < len(pn); {
		switch {
		case i < len(gn) && j < len(pn) && gn[i] == pn[j]:
			ag, ap = append(ag, gn[i]), append(ap, pn[j])
			i, j = i+1, j+1
		case i < len(gn):
			ag, ap = append(ag, gn[i]), append(ap, "")
			i++
		default:
			ag, ap = append(ag, ""), append(ap, pn[j])
			j++
		}
	}
	rebuild := func(names, calls []string) []string {
		out := make([]string, 0, len(names))
		for _, n := range names {
			if n == "" {
				out = append(out, "")
				continue
			}
			out = append(out, calls[0])
			calls = calls[1:]
		}
		return out
	}
	return rebuild(ag, gold), rebuild(ap, pred)
}

// accuracyScore is scikit-learn's accuracy_score of two lists of strings:
// the fraction of equal positions; NaN for two empty lists (the mean of
// nothing); 0 when the lengths differ (the reference catches the error).
func accuracyScore(gold, pred []string) float64 {
	if len(gold) != len(pred) {
		return 0
	}
	if len(gold) == 0 {
		return math.NaN()
	}
	eq := 0
	for i := range gold {
		if gold[i] == pred[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(gold))
}

// sklearnMacro is compute_score_sklearn: a MultiLabelBinarizer fitted on
// the gold label lists (predicted labels it does not know are dropped),
// then scikit-learn 1.2.1's precision, recall and F1 with
// average="macro". With two or more classes the target is a multi-label
// indicator matrix and every class is averaged; with one, unless
// singleAsMulti, scikit-learn reads the one-column matrix as a binary
// target and averages over the values present in it (the label's absence
// and presence). With none it raises, and so does this.
func sklearnMacro(gold, pred [][]string, singleAsMulti bool) (PRF, error) {
	classSet := map[string]bool{}
	for _, g := range gold {
		for _, l := range g {
			classSet[l] = true
		}
	}
	if len(classSet) == 0 {
		return PRF{}, errors.New("unknown is not supported")
	}
	classes := make([]string, 0, len(classSet))
	for l := range classSet {
		classes = append(classes, l)
	}
	sort.Strings(classes)
	type counts struct{ tp, pred, gold float64 }
	var per []counts
	if len(classes) == 1 && !singleAsMulti {
		c := classes[0]
		yt := make([]bool, len(gold))
		yp := make([]bool, len(gold))
		for i := range gold {
			yt[i] = slices.Contains(gold[i], c)
			yp[i] = i < len(pred) && slices.Contains(pred[i], c)
		}
		for _, v := range []bool{false, true} {
			if !slices.Contains(yt, v) && !slices.Contains(yp, v) {
				continue
			}
			var k counts
			for i := range yt {
				if yt[i] == v && yp[i] == v {
					k.tp++
				}
				if yp[i] == v {
					k.pred++
				}
				if yt[i] == v {
					k.gold++
				}
			}
			per = append(per, k)
		}
	} else {
		index := make(map[string]int, len(classes))
		for i, c := range classes {
			index[c] = i
		}
		per = make([]counts, len(classes))
		row := func(labels []string) map[int]bool {
			m := map[int]bool{}
			for _, l := range labels {
				if j, ok := index[l]; ok {
					m[j] = true
				}
			}
			return m
		}
		for i := range gold {
			g := row(gold[i])
			var p map[int]bool
			if i < len(pred) {
				p = row(pred[i])
			}
			for j := range g {
				per[j].gold++
				if p[j] {
					per[j].tp++
				}
			}
			for j := range p {
				per[j].pred++
			}
		}
	}
	ps, rs, fs := make([]float64, len(per)), make([]float64, len(per)), make([]float64, len(per))
	for j, k := range per {
		if k.pred > 0 {
			ps[j] = k.tp / k.pred
		}
		if k.gold > 0 {
			rs[j] = k.tp / k.gold
		}
		denom := ps[j] + rs[j]
		if denom == 0 {
			denom = 1
		}
		fs[j] = 2 * ps[j] * rs[j] / denom
	}
	return PRF{npMean(ps), npMean(rs), npMean(fs)}, nil
}

func unionKeys(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string{}, a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// NestfulScores scores toolenv's call sequences (gold[i] against pred[i])
// with Nestful: each sequence is written as the JSON NESTful reads,
// [{"name", "arguments", "label"}], arguments without any as {} and
// object keys sorted (Go maps keep no order, so this is the
// UnorderedObjects reading whatever opt says).
func NestfulScores(gold, pred [][]toolenv.GoldCall, opt NestfulOptions) (NestfulResult, error) {
	samples := make([]NestfulSample, len(gold))
	for i := range gold {
		var p []toolenv.GoldCall
		if i < len(pred) {
			p = pred[i]
		}
		samples[i] = NestfulSample{Gold: nestfulJSON(gold[i]), Pred: nestfulJSON(p)}
	}
	return Nestful(samples, opt)
}

func nestfulJSON(calls []toolenv.GoldCall) string {
	type call struct {
		Name  string         `json:"name"`
		Args  map[string]any `json:"arguments"`
		Label string         `json:"label,omitempty"`
	}
	out := make([]call, len(calls))
	for i, c := range calls {
		out[i] = call{c.Name, c.Args, c.Label}
		if out[i].Args == nil {
			out[i].Args = map[string]any{}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		// An argument value encoding/json cannot write (it came from
		// Go code, not from JSON): score it as no calls.
		return "[]"
	}
	return string(b)
}
