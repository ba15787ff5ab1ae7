package bleu

import "math"

// Fsum returns the correctly rounded sum of xs, as Python's math.fsum
// computes it (Shewchuk's algorithm with CPython's final half-even
// correction). Infinities and NaNs give their IEEE sum.
func Fsum(xs []float64) float64 {
	var partials []float64
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			var s float64
			for _, y := range xs {
				s += y
			}
			return s
		}
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = partials[:i]
		if math.IsInf(x, 0) {
			// Intermediate overflow (Python raises OverflowError).
			return x
		}
		if x != 0 {
			partials = append(partials, x)
		}
	}
	n := len(partials)
	if n == 0 {
		return 0
	}
	n--
	hi := partials[n]
	var lo float64
	for n > 0 {
		x := hi
		n--
		y := partials[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Make half-even rounding work across several partials.
	if n > 0 && (lo < 0 && partials[n-1] < 0 || lo > 0 && partials[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}
