package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/toolenv/toolenv/mapping/terms"
)

// Hash is the deterministic offline embedder. The zero value uses 512
// dimensions.
type Hash struct {
	// Dims is the vector size; 0 means 512.
	Dims int
}

func (h Hash) dims() int {
	if h.Dims <= 0 {
		return 512
	}
	return h.Dims
}

// Name identifies the embedder and its version: vectors of different
// names must not be compared.
func (h Hash) Name() string { return fmt.Sprintf("hash-v1-%d", h.dims()) }

// Feature weights: whole words count most, word pairs give some order,
// character trigrams tolerate spelling.
const (
	wWord    = 1.0
	wBigram  = 0.5
	wTrigram = 0.25
)

// Embed returns one L2-normalised vector per text. It never fails.
func (h Hash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h Hash) vector(text string) []float32 {
	n := h.dims()
	acc := map[string]float64{}
	words := terms.Text(text)
	for i, w := range words {
		acc["w:"+w] += wWord
		if i > 0 {
			acc["b:"+words[i-1]+" "+w] += wBigram
		}
	}
	for _, raw := range terms.Split(text) {
		padded := "^" + raw + "$"
		rs := []rune(padded)
		for j := 0; j+3 <= len(rs); j++ {
			acc["t:"+string(rs[j:j+3])] += wTrigram
		}
	}
	// Features are summed in sorted order: several land in one
	// dimension, and floating-point sums in map order differ in their
	// last bits from one call to the next.
	v := make([]float64, n)
	for _, f := range slices.Sorted(maps.Keys(acc)) {
		tf := acc[f]
		hs := fnv.New64a()
		hs.Write([]byte(f))
		x := hs.Sum64()
		idx := int(x % uint64(n))
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[idx] += sign * (1 + math.Log(tf+1))
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, n)
	if norm == 0 {
		// An empty text still needs a unit vector; it is equally far
		// from everything.
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// String describes the embedder for reports.
func (h Hash) String() string {
	return strings.Join([]string{h.Name(), "(offline, deterministic)"}, " ")
}
