package bleu

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// DefaultWeights are NLTK's default weights: BLEU-4, uniform.
var DefaultWeights = []float64{0.25, 0.25, 0.25, 0.25}

// Options configure a BLEU computation. The zero value is NLTK's
// default: BLEU-4, no smoothing, no re-weighting.
type Options struct {
	// Weights are the weights of the 1-gram, 2-gram, ... precisions;
	// nil (or empty) means DefaultWeights.
	Weights []float64
	// Smoothing is the smoothing method; the zero value is method0 (none).
	Smoothing Smoothing
	// Epsilon is method1's count for a precision with no match; 0 means
	// NLTK's 0.1.
	Epsilon float64
	// K is method4's k; 0 means NLTK's 5.
	K int64
	// AutoReweigh is NLTK's auto_reweigh: when the hypotheses are shorter
	// than 4 tokens in all and the weights are the default ones, the
	// weights become uniform over the hypotheses' length.
	AutoReweigh bool
}

func (o Options) weights() []float64 {
	if len(o.Weights) == 0 {
		return DefaultWeights
	}
	return o.Weights
}

// ErrNoReference is returned for a hypothesis without references (NLTK
// raises a ValueError).
var ErrNoReference = errors.New("bleu: a hypothesis has no reference")

// Sentence returns NLTK's sentence_bleu(references, hypothesis, ...).
func Sentence(references [][]string, hypothesis []string, o Options) (float64, error) {
	return Corpus([][][]string{references}, [][]string{hypothesis}, o)
}

// Corpus returns NLTK's corpus_bleu(listOfReferences, hypotheses, ...):
// the clipped n-gram counts and the lengths are summed over the corpus
// before the precisions and the brevity penalty are computed.
func Corpus(listOfReferences [][][]string, hypotheses [][]string, o Options) (float64, error) {
	if len(listOfReferences) != len(hypotheses) {
		return 0, fmt.Errorf("bleu: %d hypotheses but %d lists of references (they must pair up)", len(hypotheses), len(listOfReferences))
	}
	if o.Smoothing < Method0 || o.Smoothing > Method7 || o.Smoothing == method6 {
		return 0, fmt.Errorf("bleu: unknown smoothing method %d", o.Smoothing)
	}
	weights := o.weights()
	maxN := len(weights)
	nums := make([]int64, maxN+1)
	dens := make([]int64, maxN+1)
	var hypLen, refLen int64
	var in interner
	var lastRefs [][]uint32
	var lastHyp []uint32
	for i, hyp := range hypotheses {
		refs := listOfReferences[i]
		if len(refs) == 0 {
			return 0, fmt.Errorf("%w (pair %d)", ErrNoReference, i)
		}
		h := in.ids(hyp)
		rs := make([][]uint32, len(refs))
		for j, r := range refs {
			rs[j] = in.ids(r)
		}
		for n := 1; n <= maxN; n++ {
			num, den := modifiedPrecision(rs, h, n, in.width())
			nums[n] += num
			dens[n] += den
		}
		hypLen += int64(len(hyp))
		refLen += closestRefLength(rs, len(hyp))
		lastRefs, lastHyp = rs, h
	}
	bp := brevityPenalty(refLen, hypLen)
	// No matching unigram: no matching n-gram of any order.
	if maxN == 0 || nums[1] == 0 {
		return 0, nil
	}
	p := make([]value, maxN)
	for n := 1; n <= maxN; n++ {
		p[n-1] = fraction(nums[n], dens[n])
	}
	p = o.smooth(p, lastRefs, lastHyp, hypLen, in.width())
	w := weights
	if o.AutoReweigh && hypLen < 4 && isDefault(weights) {
		w = make([]float64, hypLen)
		for i := range w {
			w[i] = 1 / float64(hypLen)
		}
	}
	terms := make([]float64, 0, len(p))
	for i := 0; i < len(w) && i < len(p); i++ {
		if p[i].positive() {
			terms = append(terms, w[i]*math.Log(p[i].float()))
		}
	}
	return bp * math.Exp(Fsum(terms)), nil
}

func isDefault(w []float64) bool {
	if len(w) != len(DefaultWeights) {
		return false
	}
	for i := range w {
		if w[i] != DefaultWeights[i] {
			return false
		}
	}
	return true
}

// closestRefLength is the length of the reference closest in length to
// the hypothesis, the shorter one on a tie.
func closestRefLength(refs [][]uint32, hypLen int) int64 {
	best := -1
	for _, r := range refs {
		l := len(r)
		if best < 0 {
			best = l
			continue
		}
		d, bd := abs(l-hypLen), abs(best-hypLen)
		if d < bd || (d == bd && l < best) {
			best = l
		}
	}
	return int64(best)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// brevityPenalty is 1 for a hypothesis longer than the reference, 0 for
// an empty one, else exp(1 - r/c).
func brevityPenalty(refLen, hypLen int64) float64 {
	switch {
	case hypLen > refLen:
		return 1
	case hypLen == 0:
		return 0
	}
	return math.Exp(1 - float64(refLen)/float64(hypLen))
}

// modifiedPrecision returns the numerator and denominator of the
// modified n-gram precision: hypothesis n-grams clipped to their largest
// count in any reference, over the hypothesis n-grams (at least 1).
func modifiedPrecision(refs [][]uint32, hyp []uint32, n int, width uint) (num, den int64) {
	if n*int(width) <= 64 {
		return clipped(refs, hyp, n, packKey(width))
	}
	return clipped(refs, hyp, n, stringKey)
}

func clipped[K comparable](refs [][]uint32, hyp []uint32, n int, key func([]uint32) K) (num, den int64) {
	if len(hyp) < n {
		return 0, 1
	}
	counts := make(map[K]int64, len(hyp)-n+1)
	for i := 0; i+n <= len(hyp); i++ {
		counts[key(hyp[i:i+n])]++
	}
	maxRef := make(map[K]int64, len(counts))
	for _, ref := range refs {
		if len(ref) < n {
			continue
		}
		rc := make(map[K]int64)
		for i := 0; i+n <= len(ref); i++ {
			k := key(ref[i : i+n])
			if _, ok := counts[k]; ok {
				rc[k]++
			}
		}
		for k, c := range rc {
			if c > maxRef[k] {
				maxRef[k] = c
			}
		}
	}
	var total int64
	for k, c := range counts {
		total += c
		num += min(c, maxRef[k])
	}
	return num, max(1, total)
}

// packKey packs an n-gram of ids of width bits into one integer.
func packKey(width uint) func([]uint32) uint64 {
	return func(g []uint32) uint64 {
		var k uint64
		for _, id := range g {
			k = k<<width | uint64(id)
		}
		return k
	}
}

func stringKey(g []uint32) string {
	b := make([]byte, 0, 4*len(g))
	for _, id := range g {
		b = append(b, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	}
	return string(b)
}

// interner numbers tokens: n-grams are compared as tuples of ids.
type interner struct {
	m map[string]uint32
}

func (in *interner) ids(toks []string) []uint32 {
	if in.m == nil {
		in.m = map[string]uint32{}
	}
	out := make([]uint32, len(toks))
	for i, t := range toks {
		id, ok := in.m[t]
		if !ok {
			id = uint32(len(in.m))
			in.m[t] = id
		}
		out[i] = id
	}
	return out
}

// width is the number of bits an id needs (at least 1).
func (in *interner) width() uint {
	return uint(max(1, bits.Len32(uint32(len(in.m)))))
}
