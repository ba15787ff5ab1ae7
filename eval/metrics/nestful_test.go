package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/internal/shareddata"
)

// nestfulSet is one set of ../shared/fixtures/reference-metrics/nestful/
// cases.json.
type nestfulSet struct {
	Name    string
	Samples []NestfulSample
}

// readNestfulFixture reads cases.json and reference.json as Python wrote
// them (reference.json holds NaN, which only json.loads reads).
func readNestfulFixture(t *testing.T) ([]nestfulSet, pyfmt.Dict) {
	t.Helper()
	dir := shareddata.RequireFixture(t, "reference-metrics", "nestful")
	load := func(name string) pyfmt.Dict {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		v, err := pyfmt.Loads(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v.(pyfmt.Dict)
	}
	cases, ref := load("cases.json"), load("reference.json")
	sets, _ := cases.Get("sets")
	var out []nestfulSet
	for _, s := range sets.([]any) {
		d := s.(pyfmt.Dict)
		name, _ := d.Get("name")
		set := nestfulSet{Name: name.(string)}
		samples, _ := d.Get("samples")
		for _, x := range samples.([]any) {
			sd := x.(pyfmt.Dict)
			id, _ := sd.Get("id")
			g, _ := sd.Get("gold")
			p, _ := sd.Get("pred")
			set.Samples = append(set.Samples, NestfulSample{ID: id.(string), Gold: g.(string), Pred: p.(string)})
		}
		out = append(out, set)
	}
	refSets, _ := ref.Get("sets")
	return out, refSets.(pyfmt.Dict)
}

func pyFloat(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			t.Fatalf("number %s: %v", x, err)
		}
		return f
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

// sameFloat is equality to 1e-9, NaN equal to NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9
}

// nestfulDiff compares a result (or error) with one entry of
// reference.json ("aggregate" or one of "per") and returns what differs.
func nestfulDiff(t *testing.T, got NestfulResult, gotErr error, want pyfmt.Dict) []string {
	t.Helper()
	if e, ok := want.Get("error"); ok {
		var ue *NestfulUndefinedError
		if !errors.As(gotErr, &ue) || ue.Python() != e.(string) {
			return []string{"want error " + e.(string) + ", got " + errString(gotErr)}
		}
		return nil
	}
	if gotErr != nil {
		return []string{"unexpected error: " + gotErr.Error()}
	}
	var diffs []string
	check := func(what string, g float64, w any) {
		if wf := pyFloat(t, w); !sameFloat(g, wf) {
			diffs = append(diffs, what+": got "+pyfmt.Float(g)+", want "+pyfmt.Float(wf))
		}
	}
	triple := func(what string, g PRF, key string) {
		w, _ := want.Get(key)
		ws := w.([]any)
		check(what+".p", g.Precision, ws[0])
		check(what+".r", g.Recall, ws[1])
		check(what+".f1", g.F1, ws[2])
	}
	triple("intent", got.Intent, "intent")
	triple("slot", got.Slot, "slot")
	w, _ := want.Get("partial")
	check("partial", got.PartialMatch, w)
	w, _ = want.Get("full")
	check("full", got.FullMatch, w)
	w, _ = want.Get("per_sample_acc")
	if ws := w.([]any); len(ws) != len(got.PerSample) {
		diffs = append(diffs, "per_sample_acc length differs")
	} else {
		for i := range ws {
			check("per_sample_acc", got.PerSample[i], ws[i])
		}
	}
	w, _ = want.Get("parse_errors")
	if pe, _ := w.(json.Number).Int64(); int(pe) != got.ParseErrors {
		diffs = append(diffs, "parse_errors differ")
	}
	w, _ = want.Get("rounded")
	printed := got.Printed()
	for _, it := range w.(pyfmt.Dict) {
		if printed[it.Key] != it.Value.(string) {
			diffs = append(diffs, it.Key+" printed "+printed[it.Key]+", want "+it.Value.(string))
		}
	}
	return diffs
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// TestNestfulMatchesReference holds Nestful to what NESTful's own
// calculate_scores returned (reference.json) on every set of cases.json
// and on every sample scored alone, to 1e-9, errors included.
func TestNestfulMatchesReference(t *testing.T) {
	sets, ref := readNestfulFixture(t)
	total, equal := 0, 0
	for _, set := range sets {
		t.Run(set.Name, func(t *testing.T) {
			r, ok := ref.Get(set.Name)
			if !ok {
				t.Fatalf("no reference for set %s", set.Name)
			}
			rd := r.(pyfmt.Dict)
			agg, _ := rd.Get("aggregate")
			got, err := Nestful(set.Samples, NestfulOptions{})
			if d := nestfulDiff(t, got, err, agg.(pyfmt.Dict)); len(d) > 0 {
				t.Errorf("aggregate: %v", d)
			}
			per, _ := rd.Get("per")
			pd := per.(pyfmt.Dict)
			bad := 0
			for _, s := range set.Samples {
				w, ok := pd.Get(s.ID)
				if !ok {
					t.Fatalf("no reference for sample %s", s.ID)
				}
				total++
				got, err := Nestful([]NestfulSample{s}, NestfulOptions{})
				if d := nestfulDiff(t, got, err, w.(pyfmt.Dict)); len(d) > 0 {
					bad++
					if bad <= 5 {
						t.Errorf("sample %s: %v\n gold %s\n pred %s", s.ID, d, s.Gold, s.Pred)
					}
					continue
				}
				equal++
			}
			if bad > 5 {
				t.Errorf("%d more samples differ", bad-5)
			}
		})
	}
	t.Logf("%d of %d samples equal to the reference", equal, total)
}

// TestReferenceArithmetic pins the summations to what numpy and Python
// print (numpy 1.24, Python 3.11): a naive sum differs in the last bit,
// which a figure printed with three places can turn on.
func TestReferenceArithmetic(t *testing.T) {
	long := make([]float64, 0, 157)
	for i := 0; i < 10; i++ {
		long = append(long, 0.1)
	}
	for i := 0; i < 7; i++ {
		long = append(long, 0.7)
	}
	for i := 0; i < 140; i++ {
		long = append(long, 1.0/3)
	}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"np.mean of 8", npMean([]float64{0.8, 1.0, 0.6666666666666666, 1.0, 0.8333333333333334, 1.0, 1.0, 1.0}), 0.9125000000000001},
		{"np.mean of 157 (pairwise halves)", npMean(long), 0.33481953290870486},
		{"statistics.mean", statisticsMean([]float64{0.1, 0.2, 0.3}), 0.2},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if !math.IsNaN(statisticsMean([]float64{1, math.NaN()})) {
		t.Error("statistics.mean with a NaN is not NaN")
	}
}
