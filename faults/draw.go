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

// delay draws a latency.
func (l *Latency) delay(d *draws) time.Duration {
	switch l.Distribution {
	case "uniform":
		return l.Min.d() + time.Duration(d.next()*float64(l.Max-l.Min))
	case "normal":
		v := float64(l.Mean) + normal(d)*float64(l.StdDev)
		return time.Duration(math.Max(0, v))
	case "lognormal":
		return time.Duration(float64(l.Median) * math.Exp(l.Sigma*normal(d)))
	case "exponential":
		u := d.next()
		return time.Duration(-math.Log(1-u) * float64(l.Mean))
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
