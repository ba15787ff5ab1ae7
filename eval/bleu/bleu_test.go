package bleu

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
)

// textSpec is a text of testdata/cases.json: a string, or a file of the
// shared data folder (all of it, or the string at a JSON pointer).
type textSpec struct {
	literal string
	File    string `json:"file"`
	Pointer string `json:"pointer"`
}

func (s *textSpec) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &s.literal)
	}
	type plain textSpec
	return json.Unmarshal(b, (*plain)(s))
}

// resolve returns the text; a shared file skips the test when the shared
// data folder is absent.
func (s textSpec) resolve(t *testing.T) string {
	t.Helper()
	if s.File == "" {
		return s.literal
	}
	raw, err := os.ReadFile(shareddata.Require(t, filepath.FromSlash(s.File)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pointer == "" {
		return string(raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(s.Pointer, "/")[1:] {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		switch x := v.(type) {
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i >= len(x) {
				t.Fatalf("%s: bad pointer %s", s.File, s.Pointer)
			}
			v = x[i]
		case map[string]any:
			v = x[part]
		}
	}
	str, ok := v.(string)
	if !ok {
		t.Fatalf("%s%s is not a string", s.File, s.Pointer)
	}
	return str
}

type pairSpec struct {
	References []textSpec `json:"references"`
	Hypothesis textSpec   `json:"hypothesis"`
}

type caseSpec struct {
	Name        string    `json:"name"`
	Tokenize    string    `json:"tokenize"`
	Weights     []float64 `json:"weights"`
	AutoReweigh bool      `json:"auto_reweigh"`
	pairSpec
	Pairs []pairSpec `json:"pairs"`
}

type reference struct {
	Case      string   `json:"case"`
	Kind      string   `json:"kind"`
	Smoothing string   `json:"smoothing"`
	BLEU      *float64 `json:"bleu"`
	Error     string   `json:"error"`
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestNLTKReference compares every value NLTK computed for
// testdata/cases.json (testdata/nltk_bleu.json, made by nltk_bleu.py)
// with this package's, to 1e-12.
func TestNLTKReference(t *testing.T) {
	var spec struct {
		Cases   []caseSpec `json:"cases"`
		Corpora []caseSpec `json:"corpora"`
		Errors  []caseSpec `json:"errors"`
	}
	readJSON(t, "cases.json", &spec)
	var ref struct {
		NLTK    string      `json:"nltk"`
		Results []reference `json:"results"`
	}
	readJSON(t, "nltk_bleu.json", &ref)
	cases := map[string]caseSpec{}
	for _, c := range append(spec.Cases, spec.Errors...) {
		cases["sentence/"+c.Name] = c
	}
	for _, c := range spec.Corpora {
		cases["corpus/"+c.Name] = c
	}
	if len(ref.Results) < 7*len(cases) {
		t.Fatalf("%d reference values for %d cases", len(ref.Results), len(cases))
	}
	for _, r := range ref.Results {
		t.Run(r.Kind+"/"+r.Case+"/"+r.Smoothing, func(t *testing.T) {
			c, ok := cases[r.Kind+"/"+r.Case]
			if !ok {
				t.Fatalf("no case %q in cases.json", r.Case)
			}
			sm, err := ParseSmoothing(r.Smoothing)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := ParseTokenizer(c.Tokenize)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Weights: c.Weights, Smoothing: sm, AutoReweigh: c.AutoReweigh}
			pairs := c.Pairs
			if r.Kind == "sentence" {
				pairs = []pairSpec{c.pairSpec}
			}
			var refs [][][]string
			var hyps [][]string
			for _, p := range pairs {
				var rs [][]string
				for _, x := range p.References {
					rs = append(rs, tok(x.resolve(t)))
				}
				refs = append(refs, rs)
				hyps = append(hyps, tok(p.Hypothesis.resolve(t)))
			}
			var got float64
			if r.Kind == "sentence" {
				got, err = Sentence(refs[0], hyps[0], opts)
			} else {
				got, err = Corpus(refs, hyps, opts)
			}
			if r.Error != "" {
				if err == nil {
					t.Fatalf("NLTK raised %s, got %v and no error", r.Error, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.BLEU == nil {
				t.Fatal("reference without a value")
			}
			if want := *r.BLEU; math.Abs(got-want) > 1e-12 {
				t.Errorf("BLEU = %.17g, NLTK %s gives %.17g (diff %.3g)", got, ref.NLTK, want, got-want)
			}
		})
	}
}

func TestZeroCountsAndLengths(t *testing.T) {
	w := Words
	for _, tc := range []struct {
		name      string
		ref, hyp  string
		smoothing Smoothing
		want      func(float64) bool
	}{
		{"no unigram match is exactly 0", "a b c d", "e f g h", Method1, func(b float64) bool { return b == 0 }},
		{"without smoothing a missing 4-gram is tiny, not 0", "a b c d e", "a b c x e", Method0, func(b float64) bool { return b > 0 && b < 1e-50 }},
		{"method1 lifts it", "a b c d e", "a b c x e", Method1, func(b float64) bool { return b > 0.1 && b < 1 }},
		{"identical is exactly 1", "a b c d e", "a b c d e", Method0, func(b float64) bool { return b == 1 }},
		{"empty hypothesis is 0", "a b c d", "", Method3, func(b float64) bool { return b == 0 }},
		{"a shorter hypothesis is penalised", "a b c d e f g h", "a b c d", Method0, func(b float64) bool { return math.Abs(b-math.Exp(1-8.0/4)) < 1e-15 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Sentence([][]string{w(tc.ref)}, w(tc.hyp), Options{Smoothing: tc.smoothing})
			if err != nil || !tc.want(got) {
				t.Errorf("BLEU = %v, err %v", got, err)
			}
		})
	}
	if _, err := Sentence(nil, Words("a"), Options{}); !errors.Is(err, ErrNoReference) {
		t.Errorf("no reference: err = %v", err)
	}
	if _, err := Corpus([][][]string{{Words("a")}}, nil, Options{}); err == nil {
		t.Error("mismatched corpus accepted")
	}
	if _, err := Sentence([][]string{Words("a")}, Words("a"), Options{Smoothing: 6}); err == nil {
		t.Error("method6 accepted")
	}
}

func TestFsum(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1},
		{[]float64{1e100, 1, -1e100, 1e-100, 1e50, -1, -1e50}, 1e-100},
		{[]float64{1, 1e-16, 1e-16}, 1.0000000000000002}, // naive summation gives 1
		{[]float64{1e308, 1e308, -1e308}, math.Inf(1)},   // Python raises OverflowError
		{[]float64{-0.5 * math.Log(0.3), math.Log(0.9), 1e-17}, -0.5*math.Log(0.3) + math.Log(0.9)},
		{[]float64{1, math.Inf(-1)}, math.Inf(-1)},
	} {
		if got := Fsum(tc.xs); got != tc.want {
			t.Errorf("Fsum(%v) = %.17g, want %.17g", tc.xs, got, tc.want)
		}
	}
}

func TestParseSmoothingAndTokenizer(t *testing.T) {
	for in, want := range map[string]Smoothing{"none": Method0, "method0": Method0, "Method3": Method3, "7": Method7, "method1": Method1} {
		if got, err := ParseSmoothing(in); err != nil || got != want {
			t.Errorf("ParseSmoothing(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "method6", "method8", "method", "laplace"} {
		if _, err := ParseSmoothing(bad); err == nil {
			t.Errorf("ParseSmoothing(%q) accepted", bad)
		}
	}
	if got := strings.Join(Chars("aé😀"), "|"); got != "a|é|😀" {
		t.Errorf("Chars = %q", got)
	}
	if got := strings.Join(Words(" a\u3000b\x1cc\u00a0d\u200be "), "|"); got != "a|b|c|d\u200be" {
		t.Errorf("Words = %q", got)
	}
	if _, err := ParseTokenizer("jieba"); err == nil {
		t.Error("unknown tokenizer accepted")
	}
}
