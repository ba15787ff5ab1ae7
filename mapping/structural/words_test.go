package structural

import (
	"math/rand/v2"
	"testing"

	"github.com/toolenv/toolenv/mapping/terms"
)

// TestWordSetsCompareAsMaps: the word sets (sorted by hash, then word)
// give the word-set figures that sets of strings give, and words whose
// hashes collide still count as different words.
func TestWordSetsCompareAsMaps(t *testing.T) {
	collide := []wordKey{{1, "a"}, {1, "b"}, {2, "c"}}
	if got := commonSorted(collide, []wordKey{{1, "b"}}); got != 1 {
		t.Fatalf("commonSorted over a collision = %d, want 1", got)
	}
	if got := containment([]wordKey{{1, "z"}, {1, "a"}}, collide); got != 0.5 {
		t.Fatalf("containment over a collision = %v, want 0.5", got)
	}
	vocab := []string{"user", "id", "identifier", "name", "city", "get", "list", "code", "state", "a", "b", "ü"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() []string {
		ws := make([]string, rng.IntN(6))
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return ws
	}
	for i := 0; i < 5000; i++ {
		a, b := pick(), pick()
		if got, want := jaccard(wordSet(a), wordSet(b)), terms.Jaccard(a, b); got != want {
			t.Fatalf("jaccard(%q, %q) = %v, want %v", a, b, got, want)
		}
		mb := wordMap(b)
		n := 0
		for _, w := range a {
			if mb[w] {
				n++
			}
		}
		want := 0.0
		if len(a) > 0 && len(b) > 0 {
			want = float64(n) / float64(len(a))
		}
		if got := containment(wordKeys(a), wordSet(b)); got != want {
			t.Fatalf("containment(%q, %q) = %v, want %v", a, b, got, want)
		}
	}
}
