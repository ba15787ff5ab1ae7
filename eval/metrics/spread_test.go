package metrics

import (
	"math"
	"testing"
)

// TestStudentT975 pins the quantiles to the published table.
func TestStudentT975(t *testing.T) {
	for df, want := range map[int]float64{1: 12.7062, 2: 4.3027, 4: 2.7764, 9: 2.2622, 29: 2.0452, 1000: 1.9623} {
		if got := StudentT975(df); math.Abs(got-want) > 5e-4 {
			t.Errorf("df %d: %.4f, want %.4f", df, got, want)
		}
	}
}

// TestSpread: mean, sample std and the t interval over runs; one run has
// no interval.
func TestSpread(t *testing.T) {
	m, s, lo, hi, ok := Spread([]float64{0.5, 0.7, 0.6})
	if !ok || math.Abs(m-0.6) > 1e-12 || math.Abs(s-0.1) > 1e-12 || math.Abs(lo-(0.6-4.302652729749464*0.1/math.Sqrt(3))) > 1e-9 || math.Abs(hi-(0.6+4.302652729749464*0.1/math.Sqrt(3))) > 1e-9 {
		t.Errorf("%v %v %v %v %v", m, s, lo, hi, ok)
	}
	if _, _, _, _, ok := Spread([]float64{0.4}); ok {
		t.Error("one run has an interval")
	}
}

// TestPassHatK: a task counts only when all k runs succeed (n = k), and
// τ-bench's estimator for more runs than k.
func TestPassHatK(t *testing.T) {
	// 3 tasks × 3 runs: all succeed, 2 of 3, none.
	v, n := PassHatK([]int{3, 2, 0}, []int{3, 3, 3}, 3)
	if n != 3 || v != 1.0/3 {
		t.Errorf("pass^3 %v over %d", v, n)
	}
	// pass^1 is the success rate; pass^2 of 2 of 3 is C(2,2)/C(3,2).
	if v, _ := PassHatK([]int{3, 2, 0}, []int{3, 3, 3}, 1); math.Abs(v-5.0/9) > 1e-12 {
		t.Errorf("pass^1 %v", v)
	}
	if v, _ := PassHatK([]int{2}, []int{3}, 2); math.Abs(v-1.0/3) > 1e-12 {
		t.Errorf("pass^2 %v", v)
	}
	// A task run fewer than k times does not count.
	if v, n := PassHatK([]int{1, 2}, []int{1, 2}, 2); n != 1 || v != 1 {
		t.Errorf("%v over %d", v, n)
	}
}
