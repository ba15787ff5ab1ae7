package bleu

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Smoothing is one of NLTK's SmoothingFunction methods.
type Smoothing int

// The smoothing methods. method6 is not offered (see the package doc).
const (
	// Method0 is no smoothing: a precision with no match counts as the
	// smallest normal float, which makes BLEU all but 0.
	Method0 Smoothing = iota
	// Method1 adds Epsilon to a numerator of 0.
	Method1
	// Method2 adds 1 to the numerator and the denominator of every
	// precision but the unigrams' (Lin and Och 2004).
	Method2
	// Method3 is NIST's geometric sequence: the k-th precision with no
	// match becomes 1/(2^k · its denominator).
	Method3
	// Method4 scales method3's counts by K/ln(hypothesis length).
	Method4
	// Method5 averages each precision with its neighbours (n−1, n+1).
	Method5
	method6
	// Method7 is method4, then method5.
	Method7
)

// ParseSmoothing reads a method name: "none" or "method0" … "method7"
// (without method6), or its number.
func ParseSmoothing(s string) (Smoothing, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "none" {
		return Method0, nil
	}
	t = strings.TrimPrefix(t, "method")
	if len(t) == 1 && t[0] >= '0' && t[0] <= '7' && t[0] != '6' {
		return Smoothing(t[0] - '0'), nil
	}
	return 0, fmt.Errorf("unknown BLEU smoothing %q: want none or method0, method1, method2, method3, method4, method5, method7 (NLTK's SmoothingFunction)", s)
}

// String returns the method's NLTK name.
func (s Smoothing) String() string { return fmt.Sprintf("method%d", int(s)) }

// smallestNormal is Python's sys.float_info.min.
const smallestNormal = 0x1p-1022

// value is a precision as NLTK holds it: a fractions.Fraction — the
// numerator and denominator it was counted with (_normalize=False), or
// the exact result of Fraction arithmetic — or a float once a smoothing
// method made it one.
type value struct {
	isFloat  bool
	f        float64
	num, den int64    // a counted Fraction, when rat is nil
	rat      *big.Rat // a Fraction that arithmetic produced
}

func fraction(num, den int64) value { return value{num: num, den: den} }

func float(f float64) value { return value{isFloat: true, f: f} }

// float is float(p): Python divides the integers with correct rounding,
// as Go's float64 division does for integers below 2^53.
func (v value) float() float64 {
	switch {
	case v.isFloat:
		return v.f
	case v.rat != nil:
		f, _ := v.rat.Float64()
		return f
	}
	return float64(v.num) / float64(v.den)
}

func (v value) positive() bool {
	switch {
	case v.isFloat:
		return v.f > 0
	case v.rat != nil:
		return v.rat.Sign() > 0
	}
	return v.num > 0
}

func (v value) exact() *big.Rat {
	if v.rat != nil {
		return v.rat
	}
	return big.NewRat(v.num, v.den)
}

// add is a + b with Python's rules: exact for two Fractions, else float.
func add(a, b value) value {
	if a.isFloat || b.isFloat {
		return float(a.float() + b.float())
	}
	return value{rat: new(big.Rat).Add(a.exact(), b.exact())}
}

func div(a value, k int64) value {
	if a.isFloat {
		return float(a.f / float64(k))
	}
	return value{rat: new(big.Rat).Quo(a.exact(), big.NewRat(k, 1))}
}

// smooth applies the smoothing method to the precisions p. refs and hyp
// are the corpus's last pair, which NLTK's corpus_bleu passes on (method5
// reads them); hypLen is the corpus's hypothesis length.
func (o Options) smooth(p []value, refs [][]uint32, hyp []uint32, hypLen int64, width uint) []value {
	switch o.Smoothing {
	case Method1:
		eps := o.Epsilon
		if eps == 0 {
			eps = 0.1
		}
		for i, v := range p {
			if v.num == 0 {
				p[i] = float((float64(v.num) + eps) / float64(v.den))
			}
		}
	case Method2:
		for i := 1; i < len(p); i++ {
			p[i] = fraction(p[i].num+1, p[i].den+1)
		}
	case Method3:
		k := int64(1)
		for i, v := range p {
			if v.num == 0 {
				p[i] = float(1 / float64(pow2(k)*v.den))
				k++
			}
		}
	case Method4:
		o.method4(p, hypLen)
	case Method5:
		method5(p, refs, hyp, width)
	case Method7:
		o.method4(p, hypLen)
		method5(p, refs, hyp, width)
	default:
		for i, v := range p {
			if v.num == 0 {
				p[i] = float(smallestNormal)
			}
		}
	}
	return p
}

func pow2(k int64) int64 { return int64(1) << k }

func (o Options) method4(p []value, hypLen int64) {
	k := o.K
	if k == 0 {
		k = 5
	}
	inc := int64(1)
	for i, v := range p {
		if !v.isFloat && v.rat == nil && v.num == 0 && hypLen > 1 {
			numerator := 1 / (float64(pow2(inc)*k) / math.Log(float64(hypLen)))
			p[i] = float(numerator / float64(v.den))
			inc++
		}
	}
}

// method5 averages each precision with the previous (smoothed) one and
// the next; the one after the last is the 5-gram precision of the last
// pair, whatever the weights.
func method5(p []value, refs [][]uint32, hyp []uint32, width uint) {
	plus := append(append([]value(nil), p...), fraction(modifiedPrecision(refs, hyp, 5, width)))
	prev := add(p[0], fraction(1, 1))
	for i := range p {
		p[i] = div(add(add(prev, p[i]), plus[i+1]), 3)
		prev = p[i]
	}
}
