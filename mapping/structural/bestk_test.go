package structural

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// sortedK is what candidates did before bestK: sort every doc (score
// descending, then index) and keep the first k.
func sortedK(docs []int, score []float64, k int) []int {
	list := slices.Clone(docs)
	sort.Slice(list, func(a, b int) bool {
		if score[list[a]] != score[list[b]] {
			return score[list[a]] > score[list[b]]
		}
		return list[a] < list[b]
	})
	if len(list) > k {
		list = list[:k]
	}
	if k <= 0 {
		list = list[:0]
	}
	return list
}

// TestBestKIsSortedK: bestK keeps the same docs in the same order as
// sorting all of them, ties (common: many tools share a word's weight)
// going to the lower index.
func TestBestKIsSortedK(t *testing.T) {
	tests := []struct {
		name  string
		docs  []int
		score []float64
		k     int
		want  []int
	}{
		{"none", nil, nil, 3, []int{}},
		{"fewer than k", []int{2, 0}, []float64{0.5, 0, 0.9}, 3, []int{2, 0}},
		{"ties to the lower index", []int{3, 1, 2, 0}, []float64{1, 1, 1, 1}, 2, []int{0, 1}},
		{"k zero", []int{0, 1}, []float64{1, 2}, 0, []int{}},
		{"best first", []int{0, 1, 2, 3, 4}, []float64{0.1, 0.5, 0.3, 0.5, 0.9}, 3, []int{4, 1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bestK(tt.docs, tt.score, tt.k); !slices.Equal(got, tt.want) {
				t.Fatalf("bestK = %v, want %v", got, tt.want)
			}
		})
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 2000; i++ {
		n := rng.IntN(60)
		score := make([]float64, n)
		for j := range score {
			score[j] = float64(rng.IntN(8)) / 4 // few values: many ties
		}
		docs := rng.Perm(n)[:rng.IntN(n+1)]
		k := rng.IntN(12)
		if got, want := bestK(docs, score, k), sortedK(docs, score, k); !slices.Equal(got, want) {
			t.Fatalf("bestK(%v, %v, %d) = %v, want %v", docs, score, k, got, want)
		}
	}
}
