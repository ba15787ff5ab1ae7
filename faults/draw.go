package faults

import (
	"math"
	"time"
)

// uniform maps a 64-bit draw to [0, 1).
func uniform(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// mix is splitmix64: it turns a counter into a well-spread draw.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// draws hands out the uniform draws of one call.
type draws struct{ state uint64 }

func (d *draws) next() float64 {
	d.state = mix(d.state)
	return uniform(d.state)
}

// maxDelay caps a drawn latency (a heavy-tailed draw must not hang a
// call for hours).
const maxDelay = 10 * time.Minute

// delay draws a latency, at most maxDelay.
func (l *Latency) delay(d *draws) time.Duration {
	v := l.draw(d)
	if v < 0 || v > maxDelay {
		return maxDelay
	}
	return v
}

func (l *Latency) draw(d *draws) time.Duration {
	switch l.Distribution {
	case "uniform":
		return l.Min.d() + time.Duration(d.next()*float64(l.Max-l.Min))
	case "normal":
		return clampDuration(math.Max(0, float64(l.Mean)+normal(d)*float64(l.StdDev)))
	case "lognormal":
		return clampDuration(float64(l.Median) * math.Exp(l.Sigma*normal(d)))
	case "exponential":
		u := d.next()
		return clampDuration(-math.Log(1-u) * float64(l.Mean))
	}
	return l.Fixed.d()
}

// normal draws a standard normal value (Box–Muller).
func normal(d *draws) float64 {
	u1, u2 := d.next(), d.next()
	if u1 < 1e-300 {
		u1 = 1e-300
	}
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func (d Duration) d() time.Duration { return time.Duration(d) }

// clampDuration converts nanoseconds to a Duration, mapping anything
// beyond maxDelay (infinities and NaN included) to maxDelay.
func clampDuration(ns float64) time.Duration {
	if !(ns <= float64(maxDelay)) {
		return maxDelay
	}
	return time.Duration(ns)
}
