package structural

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// genWords draws n words from a vocabulary of size v, with repeats.
func genWords(r *rand.Rand, n, v int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", r.IntN(v))
	}
	return out
}

// TestTFIDFSumsAreDeterministic: the TF-IDF vector, cosine, covered and
// weightedJaccard give the same bits however often they are computed and
// whatever the order of the words they are given (a sum in a map's order
// changed its last digits from run to run, and so a score rounded at a
// boundary, or the order of two near-equal candidates), and they agree
// with the plain definitions.
func TestTFIDFSumsAreDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	c := newCorpus()
	for range 200 {
		c.add(genWords(r, 5+r.IntN(30), 300))
	}
	m := &Matcher{names: c}
	for trial := range 200 {
		a, b := genWords(r, 1+r.IntN(60), 300), genWords(r, 1+r.IntN(60), 300)
		va, vb := c.vector(a), c.vector(b)
		cos, cov, wj := cosine(va, vb), covered(va, vb), m.weightedJaccard(a, b)
		if got := cosine(vb, va); math.Float64bits(got) != math.Float64bits(cos) {
			t.Fatalf("trial %d: cosine(b, a) = %v, cosine(a, b) = %v", trial, got, cos)
		}
		if got := m.weightedJaccard(b, a); math.Float64bits(got) != math.Float64bits(wj) {
			t.Fatalf("trial %d: weightedJaccard(b, a) = %v, (a, b) = %v", trial, got, wj)
		}
		for range 10 {
			sa := append([]string(nil), a...)
			r.Shuffle(len(sa), func(i, j int) { sa[i], sa[j] = sa[j], sa[i] })
			sva := c.vector(sa)
			if got := cosine(sva, vb); math.Float64bits(got) != math.Float64bits(cos) {
				t.Fatalf("trial %d: cosine of the shuffled words = %v, of the words = %v", trial, got, cos)
			}
			if got := covered(sva, vb); math.Float64bits(got) != math.Float64bits(cov) {
				t.Fatalf("trial %d: covered of the shuffled words = %v, of the words = %v", trial, got, cov)
			}
			if got := m.weightedJaccard(sa, b); math.Float64bits(got) != math.Float64bits(wj) {
				t.Fatalf("trial %d: weightedJaccard of the shuffled words = %v, of the words = %v", trial, got, wj)
			}
		}
		// The definitions, summed in any order: equal up to rounding.
		ref := func(words []string) map[string]float64 {
			tf := map[string]float64{}
			for _, w := range words {
				tf[w]++
			}
			var norm float64
			for w, n := range tf {
				tf[w] = (1 + math.Log(n)) * c.idf(w)
				norm += tf[w] * tf[w]
			}
			for w := range tf {
				tf[w] /= math.Sqrt(norm)
			}
			return tf
		}
		ra, rb := ref(a), ref(b)
		var wantCos, wantCov, inter, union float64
		for w, x := range ra {
			wantCos += x * rb[w]
			if rb[w] > 0 {
				wantCov += x * x
			}
		}
		for w := range ra {
			union += c.idf(w)
			if _, ok := rb[w]; ok {
				inter += c.idf(w)
			}
		}
		for w := range rb {
			if _, ok := ra[w]; !ok {
				union += c.idf(w)
			}
		}
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"cosine", cos, wantCos}, {"covered", cov, wantCov}, {"weightedJaccard", wj, inter / union}} {
			if math.Abs(x.got-x.want) > 1e-12 {
				t.Fatalf("trial %d: %s = %v, want %v", trial, x.name, x.got, x.want)
			}
		}
		if len(va) != len(ra) {
			t.Fatalf("trial %d: the vector has %d words, the words %d distinct ones", trial, len(va), len(ra))
		}
	}
}

func TestSameDescription(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"The city name", "the CITY name", true},
		{"  The city name\n", "the city name", true},
		{"The city name", "The city names", false},
		{"The city name", "The town name", false},
		// folds across lengths: the Kelvin sign is a k
		{"\u212Aelvin degrees", "kelvin degrees", true},
		{"ſtate", "STATE", true},
		{"", "", true},
		{"", "x", false},
	}
	for _, tc := range tests {
		for _, profiled := range []bool{false, true} {
			a, b := &Field{Path: "x", Description: tc.a}, &Field{Path: "y", Description: tc.b}
			if profiled {
				ordered(map[string]*Field{"x": a}, []string{"x"})
				ordered(map[string]*Field{"y": b}, []string{"y"})
			}
			if got := sameDescription(a, b); got != tc.want {
				t.Errorf("sameDescription(%q, %q) profiled=%v = %v, want %v", tc.a, tc.b, profiled, got, tc.want)
			}
			if want := strings.EqualFold(strings.TrimSpace(tc.a), strings.TrimSpace(tc.b)); want != tc.want {
				t.Errorf("case %q, %q: strings.EqualFold says %v", tc.a, tc.b, want)
			}
		}
	}
}
