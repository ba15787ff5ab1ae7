package toolbenchgen

import (
	"math/rand/v2"
	"sort"
)

// quantiles is an empirical distribution: the values at the cumulative
// probabilities p (ascending, from 0 to 1). Sampling interpolates
// linearly between neighbouring knots, which keeps both the body and the
// long tail of the measured data.
type quantiles struct {
	p []float64
	v []float64
}

// measuredAt are the probabilities every distribution below was measured
// at: minimum, p10, p25, median, p75, p90, p99, maximum.
var measuredAt = []float64{0, .10, .25, .50, .75, .90, .99, 1}

func q(v ...float64) quantiles { return quantiles{p: measuredAt, v: v} }

// sample draws a value.
func (d quantiles) sample(r *rand.Rand) float64 {
	u := r.Float64()
	i := sort.SearchFloat64s(d.p, u)
	if i == 0 {
		return d.v[0]
	}
	if i >= len(d.p) {
		return d.v[len(d.v)-1]
	}
	lo, hi := d.p[i-1], d.p[i]
	f := (u - lo) / (hi - lo)
	return d.v[i-1] + f*(d.v[i]-d.v[i-1])
}

// n draws a non-negative integer (rounded to nearest).
func (d quantiles) n(r *rand.Rand) int {
	x := d.sample(r)
	if x < 0 {
		return 0
	}
	return int(x + 0.5)
}

// The shape of StableToolBench's 1,920 distinct test APIs (measured over
// solvable_queries/test_instruction/*.json, each API counted once by
// category, tool and API name; lengths in bytes of the JSON strings).
var (
	toolNameLen   = q(3, 7, 10, 14, 19, 26, 43, 59)
	apiNameLen    = q(2, 7, 11, 15, 21, 28, 47, 115)
	apiDescLen    = q(0, 3, 24, 45, 91, 201, 1022, 8018)
	requiredN     = q(0, 0, 0, 1, 1, 2, 5, 14)
	optionalN     = q(0, 0, 0, 0, 1, 2, 11, 46)
	paramNameLen  = q(1, 3, 4, 6, 9, 12, 20, 26)
	paramDescLen  = q(0, 0, 0, 14, 55, 140, 460, 2076)
	defaultLen    = q(0, 0, 0, 2, 7, 12, 64, 304)
	templateLen   = q(8, 18, 18, 62, 175, 409, 883, 977) // object templates, as json.dumps writes them
	apisPerTool   = q(1, 1, 1, 2, 6, 10, 10, 19)
	toolDescLen   = q(0, 20, 40, 80, 150, 260, 700, 2000) // tool files only; not in query files, so an estimate
	templateShare = struct{ object, absent float64 }{0.604, 0.333}
	// The other templates are JSON text cut at 1,000 characters, a
	// string: StableToolBench's cut of overlong ones.
	templateCut = 1000
)

// weighted is a discrete distribution.
type weighted[T any] struct {
	items []T
	cum   []float64
}

func newWeighted[T any](items []T, weights []float64) weighted[T] {
	w := weighted[T]{items: items, cum: make([]float64, len(weights))}
	total := 0.0
	for i, x := range weights {
		total += x
		w.cum[i] = total
	}
	for i := range w.cum {
		w.cum[i] /= total
	}
	return w
}

func (w weighted[T]) pick(r *rand.Rand) T {
	i := sort.SearchFloat64s(w.cum, r.Float64())
	if i >= len(w.items) {
		i = len(w.items) - 1
	}
	return w.items[i]
}

// paramTypes are the declared ToolBench types and how often each occurs
// among the 3,561 documented parameters.
var paramTypes = newWeighted(
	[]string{"STRING", "NUMBER", "string", "BOOLEAN", "ENUM", "DATE (YYYY-MM-DD)", "ARRAY", "TIME (24-hour HH:MM)", "OBJECT", "BINARY"},
	[]float64{2136, 934, 269, 112, 81, 20, 6, 1, 1, 1})

// categories are ToolBench's 49 RapidAPI categories, weighted by their
// APIs among the test queries (categories absent there weigh 5).
var categories = newWeighted(
	[]string{"Tools", "Data", "Sports", "Finance", "Video_Images", "Social", "Movies", "Entertainment", "Business",
		"Media", "News_Media", "Other", "Location", "Music", "Logistics", "Travel", "eCommerce", "Devices", "Gaming",
		"Financial", "Education", "Database", "Artificial_Intelligence_Machine_Learning", "Weather", "Communication",
		"Mapping", "Food", "Search", "Transportation", "Monitoring", "Health_and_Fitness", "Business_Software",
		"Translation", "Advertising", "Energy", "Payments", "Events", "Cryptography", "Medical", "Text_Analysis", "SMS",
		"Visual_Recognition", "Commerce", "Cybersecurity", "Email", "Jobs", "Reward", "Science", "Storage"},
	[]float64{339, 199, 176, 156, 123, 104, 82, 73, 69, 51, 50, 46, 38, 31, 30, 30, 29, 26, 26, 22, 20, 20, 19, 18,
		18, 13, 12, 12, 10, 9, 7, 7, 7, 7, 7, 7, 7, 7, 5, 4, 3, 1, 5, 5, 5, 5, 5, 5, 5})

// The value types template responses name, as StableToolBench writes them.
var templateTypes = newWeighted(
	[]string{"str", "int", "float", "bool", "NoneType", "empty list", "list of str with length 3", "list of int with length 4"},
	[]float64{60, 18, 7, 7, 4, 2, 1, 1})
