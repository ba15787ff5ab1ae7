package metrics

import "math"

// Spread is a metric's run-to-run spread: its mean over k runs, the
// sample standard deviation (k-1 in the denominator) and the 95 %
// confidence interval of the mean from Student's t with k-1 degrees of
// freedom. ok is false with fewer than two runs (no interval).
func Spread(xs []float64) (mean, sampleStd, lo, hi float64, ok bool) {
	k := len(xs)
	if k == 0 {
		return 0, 0, 0, 0, false
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(k)
	if k < 2 {
		return mean, 0, mean, mean, false
	}
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	sampleStd = math.Sqrt(v / float64(k-1))
	half := StudentT975(k-1) * sampleStd / math.Sqrt(float64(k))
	return mean, sampleStd, mean - half, mean + half, true
}

// StudentT975 is the 0.975 quantile of Student's t distribution with df
// degrees of freedom (12.706 for 1, 2.262 for 9, 1.960 in the limit),
// found by bisection on the distribution function.
func StudentT975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	lo, hi := 0.0, 1000.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if studentCDF(mid, float64(df)) < 0.975 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentCDF is P(T <= t) for t >= 0.
func studentCDF(t, df float64) float64 {
	x := df / (df + t*t)
	return 1 - 0.5*regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b).
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF is the continued fraction of the incomplete beta function
// (modified Lentz's method).
func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		mf := float64(m)
		m2 := 2 * mf
		aa := mf * (b - mf) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h
}

// PassHatK is pass^k as τ-bench defines it: for each task run n times
// with c successes, the chance that k runs drawn without replacement all
// succeed, C(c, k) / C(n, k) — with n = k, 1 when every run succeeded
// and 0 otherwise — averaged over the tasks run at least k times. tasks
// is how many tasks that is (0: pass^k is undefined).
func PassHatK(successes, runs []int, k int) (value float64, tasks int) {
	if k < 1 {
		return 0, 0
	}
	var sum float64
	for i := range runs {
		n, c := runs[i], successes[i]
		if n < k {
			continue
		}
		tasks++
		sum += choose(c, k) / choose(n, k)
	}
	if tasks == 0 {
		return 0, 0
	}
	return sum / float64(tasks), tasks
}

// choose is the binomial coefficient C(n, k) as a float (0 when k > n).
func choose(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
