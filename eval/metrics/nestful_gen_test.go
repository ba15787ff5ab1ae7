package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// nestfulGen makes adversarial NESTful samples: call sequences with
// labels or none, "$varN.x$" references (closed, unclosed, in lists),
// var_result calls, nested argument objects whose keys come in random
// orders, numbers written as ints, floats and exponents, unicode strings
// (quotes, escapes, non-BMP, lone surrogates, control characters),
// non-string names, arguments that are not objects, dummy calls, chat
// tags, and predictions that are not JSON at all. Gold sequences stay
// readable by the reference (it stops on unreadable gold).
type nestfulGen struct {
	r *rand.Rand
	// apis is the pool of API names (small, so that sets repeat them).
	apis []string
}

func newNestfulGen(seed uint64, apis int) *nestfulGen {
	g := &nestfulGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	pool := []string{"SkyScrapperSearchAirport", "filter_data", "retrieve_data", "f", "g", "Tripadvisor.Search", "var_tool", "émoji😀", "a(b", ""}
	for i := 0; i < apis; i++ {
		g.apis = append(g.apis, pool[i%len(pool)])
	}
	return g
}

func (g *nestfulGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// number writes a number literal of one of the spellings Python reads
// differently (int, float, exponent, big).
func (g *nestfulGen) number() string {
	return g.pick("7", "7.0", "7e0", "-0.0", "0", "1.5", "1.50", "100000.0", "1e5", "1e16", "10000000000000000.0",
		"123456789012345678901234567890", "0.1", "0.10000000000000001", "-3", "2.5e-7", "1E+5")
}

func (g *nestfulGen) str() string {
	return g.pick(`"New York"`, `"it's"`, `"say \"hi\""`, `"a\\b"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800"`, `"\u200b"`, `"\u007f"`,
		`"line\nbreak"`, `"7"`, `"True"`, `"None"`, `""`, `"$"`, `"x<|endoftext|>y"`, `"label"`, `"\t"`, `"ok"`, `"2024-08-15"`)
}

// object writes a JSON object with keys in a random order, sometimes
// with a key repeated.
func (g *nestfulGen) object(depth int) string {
	keys := []string{"a", "b", "c", "Z", "é"}
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	n := g.r.IntN(4)
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf("%q: %s", keys[i], g.value(depth+1, nil)))
	}
	if n > 0 && g.r.IntN(8) == 0 {
		parts = append(parts, fmt.Sprintf("%q: %s", keys[0], g.value(depth+1, nil)))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// value writes an argument value; refs are labels it may point at.
func (g *nestfulGen) value(depth int, refs []string) string {
	k := g.r.IntN(12)
	if depth > 2 {
		k %= 4
	}
	switch {
	case k < 2:
		return g.number()
	case k < 4:
		return g.str()
	case k == 4:
		return g.pick("true", "false", "null")
	case k == 5 && len(refs) > 0:
		ref := refs[g.r.IntN(len(refs))]
		return g.pick(`"$`+ref+`.out$"`, `"$`+ref+`.out"`, `"$`+ref+`$"`, `"`+ref+`"`, `"$`+ref+`.a.b$"`)
	case k == 6 && len(refs) > 0:
		return `["$` + refs[g.r.IntN(len(refs))] + `.items$", 1, {"x": "$var1.y$"}]`
	case k < 9:
		return g.object(depth)
	default:
		n := g.r.IntN(4)
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, g.value(depth+1, refs))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
}

// sequence writes a call sequence. gold sequences keep to what the
// reference can read.
func (g *nestfulGen) sequence(n int, gold, labels bool) string {
	var calls []string
	var refs []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%q", g.apis[g.r.IntN(len(g.apis))])
		if !gold && g.r.IntN(25) == 0 {
			name = g.pick("7", "null", "true", "1.0", `["x"]`)
		}
		argKey := "arguments"
		if g.r.IntN(15) == 0 {
			argKey = "parameters"
		}
		var args string
		switch {
		case !gold && g.r.IntN(20) == 0:
			args = fmt.Sprintf(", %q: %s", argKey, g.pick("null", "[]", `"x"`, "3"))
		case g.r.IntN(20) == 0:
			args = "" // no arguments at all
		default:
			keys := []string{"query", "data_source", "key_name", "value", "limit", "x"}
			g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			var parts []string
			for _, k := range keys[:g.r.IntN(4)] {
				parts = append(parts, fmt.Sprintf("%q: %s", k, g.value(0, refs)))
			}
			args = fmt.Sprintf(", %q: {%s}", argKey, strings.Join(parts, ", "))
		}
		label := ""
		if labels {
			l := fmt.Sprintf("var%d", i+1)
			if g.r.IntN(10) == 0 {
				l = g.pick("$var9$", "out", "var1", fmt.Sprintf("var%d", i+11))
			}
			label = fmt.Sprintf(`, "label": %q`, l)
			refs = append(refs, strings.Trim(l, "$"))
		}
		calls = append(calls, fmt.Sprintf(`{"name": %s%s%s}`, name, args, label))
		if !gold && g.r.IntN(30) == 0 {
			calls = append(calls, `{"name": "dummy", "arguments": {}}`)
		}
	}
	if len(refs) > 0 && g.r.IntN(3) == 0 {
		calls = append(calls, fmt.Sprintf(`{"name": "var_result", "arguments": {"r": "$%s$"}}`, refs[len(refs)-1]))
	}
	return "[" + strings.Join(calls, ", ") + "]"
}

// sample makes one sample: a gold sequence and a prediction that is the
// gold one, a perturbation of it, another sequence, or not calls at all.
func (g *nestfulGen) sample(id int) NestfulSample {
	labels := g.r.IntN(3) > 0
	gold := g.sequence(g.r.IntN(5), true, labels)
	var pred string
	switch k := g.r.IntN(20); {
	case k < 5:
		pred = gold
	case k < 7:
		pred = strings.ReplaceAll(gold, `, "label": "var`, `, "label": "var1`) // relabelled
	case k < 9:
		pred = strings.ReplaceAll(gold, `$"`, `"`) // references left open
	case k == 9:
		pred = "<tool_call>" + gold
	case k == 10:
		pred = g.pick(`not json`, `7`, `null`, `true`, `"calls"`, `{"name": "f", "arguments": {}}`, `[`, `[1, "x", null]`, `{"label": 1}`, `[{"name": "f", "label": null}]`, `[{"name": "f", "arguments": {}, "label": 3}]`)
	default:
		pred = g.sequence(g.r.IntN(5), false, g.r.IntN(2) == 0)
	}
	return NestfulSample{ID: fmt.Sprintf("gen:%d", id), Gold: gold, Pred: pred}
}

func (g *nestfulGen) set(n int) []NestfulSample {
	out := make([]NestfulSample, n)
	for i := range out {
		out[i] = g.sample(i)
	}
	return out
}

// scalarPrediction reports whether the reference would stop on s's
// prediction: a JSON scalar with no "label" in its text.
func scalarPrediction(s NestfulSample) bool {
	v, err := pyfmt.Loads(s.Pred)
	if err != nil || strings.Contains(s.Pred, "label") {
		return false
	}
	_, err = pyIter(v)
	return err != nil
}

// TestNestfulGeneratedInvariants runs generated sets and checks what the
// reference implies of any input: it never panics; it fails only as the
// reference stops (undefined scores, a scalar prediction), naming the
// sample; scores lie in [0, 1]; the order of samples and of the
// top-level arguments does not change a score; a sample predicted
// exactly scores 1 where nothing else interferes; and each correction
// changes only what it is about.
func TestNestfulGeneratedInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		g := newNestfulGen(seed, 1+int(seed%7))
		set := g.set(1 + int(seed%9)*4)
		res, err := Nestful(set, NestfulOptions{})
		var se *NestfulSampleError
		var ue *NestfulUndefinedError
		switch {
		case errors.As(err, &se):
			if se.Side != "prediction" || !scalarPrediction(set[se.Index]) {
				t.Fatalf("seed %d: %v", seed, err)
			}
			// The correction scores it as a parse error instead.
			if _, err := Nestful(set, NestfulOptions{ScalarPredictionAsParseError: true}); errors.As(err, &se) {
				t.Fatalf("seed %d: scalar prediction still stops the corrected scorer: %v", seed, err)
			}
			continue
		case errors.As(err, &ue):
			continue
		case err != nil:
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, x := range []float64{res.Intent.Precision, res.Intent.Recall, res.Intent.F1, res.Slot.Precision, res.Slot.Recall, res.Slot.F1, res.FullMatch} {
			if x < 0 || x > 1 || math.IsNaN(x) {
				t.Fatalf("seed %d: score out of range: %+v", seed, res)
			}
		}
		if !math.IsNaN(res.PartialMatch) && (res.PartialMatch < 0 || res.PartialMatch > 1) {
			t.Fatalf("seed %d: partial %v", seed, res.PartialMatch)
		}
		// Order of samples.
		shuffled := append([]NestfulSample(nil), set...)
		g.r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		res2, err := Nestful(shuffled, NestfulOptions{})
		if err != nil || !sameResult(res, res2) {
			t.Fatalf("seed %d: shuffling the samples changed the scores: %+v vs %+v (%v)", seed, res, res2, err)
		}
		// Order of top-level arguments.
		reordered := make([]NestfulSample, len(set))
		for i, s := range set {
			reordered[i] = NestfulSample{ID: s.ID, Gold: reverseArgs(s.Gold), Pred: reverseArgs(s.Pred)}
		}
		res3, err := Nestful(reordered, NestfulOptions{})
		if err != nil || !sameResult(res, res3) {
			t.Fatalf("seed %d: reordering top-level arguments changed the scores: %+v vs %+v (%v)", seed, res, res3, err)
		}
	}
}

// TestNestfulExactPredictionScoresOne: a prediction equal to its gold
// sequence (no open references, no dummy call) scores 1 on every metric
// whenever the metric is defined, under the reference and every
// correction.
func TestNestfulExactPredictionScoresOne(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		g := newNestfulGen(seed, 1+int(seed%5))
		var set []NestfulSample
		for i := 0; i < 1+int(seed%6); i++ {
			gold := g.sequence(1+g.r.IntN(4), true, g.r.IntN(2) == 0)
			if openRef(gold) || bareCall(gold) {
				continue
			}
			set = append(set, NestfulSample{Gold: gold, Pred: gold})
		}
		if len(set) == 0 {
			continue
		}
		for _, opt := range []NestfulOptions{{}, NestfulCorrected, {SkipGrounding: true}} {
			res, err := Nestful(set, opt)
			var ue *NestfulUndefinedError
			if errors.As(err, &ue) {
				continue
			}
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, opt.Variant(), err)
			}
			if res.Intent != (PRF{1, 1, 1}) || res.Slot != (PRF{1, 1, 1}) || res.FullMatch != 1 || res.PartialMatch != 1 {
				t.Fatalf("seed %d %s: exact prediction scored %+v\n%v", seed, opt.Variant(), res, set)
			}
		}
	}
}

// openRef reports whether a sequence holds a string that starts with '$'
// and does not end with one: the scorer closes such a string in the
// prediction only, so an exact copy does not match.
func openRef(seq string) bool {
	v, err := pyfmt.Loads(seq)
	if err != nil {
		return true
	}
	found := false
	var walk func(any)
	walk = func(x any) {
		switch y := x.(type) {
		case string:
			if strings.HasPrefix(y, "$") && !strings.HasSuffix(y, "$") {
				found = true
			}
		case []any:
			for _, e := range y {
				walk(e)
			}
		case pyfmt.Dict:
			for _, it := range y {
				walk(it.Value)
			}
		}
	}
	walk(v)
	return found
}

// bareCall reports whether a sequence has a call without "arguments":
// grounding gives it {}, but an ungrounded prediction (no "label" in it)
// keeps it bare and the scorer writes it "name({})".
func bareCall(seq string) bool {
	v, err := pyfmt.Loads(seq)
	if err != nil {
		return true
	}
	for _, c := range v.([]any) {
		if _, ok := c.(pyfmt.Dict).Get("arguments"); !ok {
			return true
		}
	}
	return false
}

func sameResult(a, b NestfulResult) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return a.Intent == b.Intent && a.Slot == b.Slot && same(a.PartialMatch, b.PartialMatch) && a.FullMatch == b.FullMatch && a.ParseErrors == b.ParseErrors
}

// reverseArgs reverses the order of every call's top-level arguments in a
// sequence that reads as one; other text is returned as it is.
func reverseArgs(seq string) string {
	v, err := pyfmt.Loads(seq)
	if err != nil {
		return seq
	}
	calls, ok := v.([]any)
	if !ok {
		return seq
	}
	for _, c := range calls {
		d, ok := c.(pyfmt.Dict)
		if !ok {
			continue
		}
		for i, it := range d {
			if a, ok := it.Value.(pyfmt.Dict); ok && (it.Key == "arguments" || it.Key == "parameters") {
				r := make(pyfmt.Dict, len(a))
				for k := range a {
					r[k] = a[len(a)-1-k]
				}
				d[i].Value = r
			}
		}
	}
	return pyfmt.Dumps(calls)
}

// TestNestfulCorrections pins what each correction changes, on inputs
// built for it.
func TestNestfulCorrections(t *testing.T) {
	nested := []NestfulSample{{
		Gold: `[{"name": "f", "arguments": {"x": {"a": 1, "b": 2}}}, {"name": "g", "arguments": {"y": 1}}]`,
		Pred: `[{"name": "f", "arguments": {"x": {"b": 2, "a": 1}}}, {"name": "g", "arguments": {"y": 1}}]`,
	}}
	single := []NestfulSample{
		{Gold: `[{"name": "f", "arguments": {"x": 1}}]`, Pred: `[{"name": "f", "arguments": {"x": 1}}]`},
		{Gold: `[{"name": "f", "arguments": {"x": 1}}]`, Pred: `[]`},
	}
	tests := []struct {
		name    string
		samples []NestfulSample
		opt     NestfulOptions
		check   func(NestfulResult) bool
	}{
		{"nested order counts in the reference", nested, NestfulOptions{}, func(r NestfulResult) bool { return r.FullMatch == 0 && r.Slot.F1 < 1 }},
		{"nested order ignored when unordered", nested, NestfulOptions{UnorderedObjects: true}, func(r NestfulResult) bool { return r.FullMatch == 1 && r.Slot.F1 == 1 }},
		// One gold label f, predicted in one sample of two: scikit-learn
		// averages class 0 (absent: predicted once, never true: p 0,
		// r 0) and class 1 (present: p 1, r 1/2, F1 2/3), as the
		// reference prints (0.500, 0.250, 0.333).
		{"single label as binary", single, NestfulOptions{}, func(r NestfulResult) bool {
			return r.Intent.Precision == 0.5 && r.Intent.Recall == 0.25 && near(r.Intent.F1, 1.0/3)
		}},
		{"single label as multi-label", single, NestfulOptions{SingleLabelAsMultiLabel: true}, func(r NestfulResult) bool {
			return r.Intent.Precision == 1 && r.Intent.Recall == 0.5 && near(r.Intent.F1, 2.0/3)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Nestful(tt.samples, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(r) {
				t.Errorf("%s: %+v", tt.opt.Variant(), r)
			}
		})
	}
	// A scalar prediction stops the reference; the correction counts a
	// parse error.
	scalar := []NestfulSample{{Gold: `[{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]`, Pred: `null`}}
	var se *NestfulSampleError
	if _, err := Nestful(scalar, NestfulOptions{}); !errors.As(err, &se) || se.Side != "prediction" || !strings.Contains(err.Error(), "NoneType") {
		t.Errorf("scalar prediction: %v", err)
	}
	if r, err := Nestful(scalar, NestfulOptions{ScalarPredictionAsParseError: true}); err != nil || r.ParseErrors != 1 || r.Intent.Recall != 0 {
		t.Errorf("scalar prediction corrected: %+v, %v", r, err)
	}
	// Grounding: var_result is dropped and references become API names;
	// skipped, the labels must agree.
	relabelled := []NestfulSample{{
		Gold: `[{"name": "f", "arguments": {"q": 1}, "label": "var1"}, {"name": "g", "arguments": {"y": "$var1.out$"}, "label": "var2"}, {"name": "var_result", "arguments": {"r": "$var2$"}}]`,
		Pred: `[{"name": "f", "arguments": {"q": 1}, "label": "var7"}, {"name": "g", "arguments": {"y": "$var7.out$"}, "label": "var8"}]`,
	}}
	if r, err := Nestful(relabelled, NestfulOptions{}); err != nil || r.FullMatch != 1 {
		t.Errorf("grounded relabelling: %+v, %v", r, err)
	}
	if r, err := Nestful(relabelled, NestfulOptions{SkipGrounding: true}); err != nil || r.FullMatch != 0 {
		t.Errorf("relabelling without grounding: %+v, %v", r, err)
	}
}

// TestNestfulBadInput: what the reference stops on is an error naming the
// sample and the side, never a panic.
func TestNestfulBadInput(t *testing.T) {
	tests := []struct {
		gold, pred, want string
	}{
		{`not json`, `[]`, "sample 1 (x): gold: JSONDecodeError"},
		{`[{"arguments": {}}]`, `[]`, "KeyError: 'name'"},
		{`[{"name": "f", "arguments": null}]`, `[]`, "AttributeError: 'NoneType' object has no attribute 'items'"},
		{`[{"name": "f", "arguments": {}, "label": 1}]`, `[]`, "AttributeError: 'int' object"},
		{`[{"name": 1, "arguments": {}, "label": "var1"}, {"name": "g", "arguments": {"a": "$var1.x$"}}]`, `[]`, "replace() argument 2 must be str"},
		{`7`, `[]`, "'int' object is not iterable"},
		{`[{"name": "f", "arguments": {}}]`, `7`, "prediction: TypeError: 'int' object is not iterable"},
	}
	for _, tt := range tests {
		_, err := Nestful([]NestfulSample{{ID: "x", Gold: tt.gold, Pred: tt.pred}}, NestfulOptions{})
		var se *NestfulSampleError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("gold %s pred %s: %v, want %q", tt.gold, tt.pred, err, tt.want)
		}
	}
	if _, err := Nestful(nil, NestfulOptions{}); err == nil {
		t.Error("no samples accepted")
	}
	var ue *NestfulUndefinedError
	if _, err := Nestful([]NestfulSample{{Gold: `[]`, Pred: `[]`}}, NestfulOptions{}); !errors.As(err, &ue) || ue.Metric != "intent" {
		t.Errorf("no gold API: %v", err)
	}
	if _, err := Nestful([]NestfulSample{{Gold: `[{"name": "f", "arguments": {}}]`, Pred: `[]`}}, NestfulOptions{}); !errors.As(err, &ue) || ue.Metric != "slot" {
		t.Errorf("no gold argument: %v", err)
	}
}

// FuzzNestful: any pair of texts is scored or refused with one of the
// documented errors, never a panic, with scores in range.
func FuzzNestful(f *testing.F) {
	g := newNestfulGen(7, 4)
	for i := 0; i < 12; i++ {
		s := g.sample(i)
		f.Add(s.Gold, s.Pred)
	}
	f.Fuzz(func(t *testing.T, gold, pred string) {
		r, err := Nestful([]NestfulSample{{Gold: gold, Pred: pred}}, NestfulOptions{})
		if err != nil {
			var se *NestfulSampleError
			var ue *NestfulUndefinedError
			if !errors.As(err, &se) && !errors.As(err, &ue) {
				t.Fatalf("undocumented error: %v", err)
			}
			return
		}
		for _, x := range []float64{r.Intent.F1, r.Slot.F1, r.FullMatch} {
			if x < 0 || x > 1 {
				t.Fatalf("score out of range: %+v", r)
			}
		}
	})
}
