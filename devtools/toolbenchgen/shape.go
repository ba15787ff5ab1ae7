package toolbenchgen

import (
	"math/rand/v2"
	"sort"
)

// quantiles is an empirical distribution of a length or count: the
// share of zeros (a point mass: many parameters have no description at
// all), and the quantiles of the other values at the cumulative
// probabilities p (ascending, from 0 to 1). Sampling interpolates
// linearly between neighbouring knots, which keeps both the body and the
// long tail of the measured data.
type quantiles struct {
	zero float64
	p    []float64
	v    []float64
}

// measuredAt are the probabilities every distribution below was measured
// at: minimum, p10, p25, median, p75, p90, p99, maximum.
var measuredAt = []float64{0, .10, .25, .50, .75, .90, .99, 1}

// q is a distribution with no zeros; qz one with a share of zeros and the
// quantiles of the rest.
func q(v ...float64) quantiles                { return quantiles{p: measuredAt, v: v} }
func qz(zero float64, v ...float64) quantiles { return quantiles{zero: zero, p: measuredAt, v: v} }

// sample draws a value.
func (d quantiles) sample(r *rand.Rand) float64 {
	if d.zero > 0 && r.Float64() < d.zero {
		return 0
	}
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

// n draws a non-negative integer: the sample's floor, so that a count
// between two measured knots keeps the lower one (the data are whole
// numbers; rounding up would inflate the mean).
func (d quantiles) n(r *rand.Rand) int {
	return max(int(d.sample(r)), 0)
}

// The shape of StableToolBench's 1,920 distinct test APIs (measured over
// solvable_queries/test_instruction/*.json, each API counted once by
// category, tool and API name; lengths in bytes of the JSON strings;
// zeros counted apart).
var (
	toolNameLen  = q(3, 7, 10, 14, 19, 26, 43, 59)
	apiNameLen   = q(2, 7, 11, 15, 21, 28, 47, 115)
	apiDescLen   = qz(0.017, 1, 9, 25, 46, 91, 202, 1032, 8018)
	requiredN    = qz(0.328, 1, 1, 1, 1, 2, 3, 6, 14)
	optionalN    = qz(0.738, 1, 1, 1, 2, 3, 7, 16, 46)
	paramNameLen = q(1, 3, 4, 6, 9, 12, 20, 26)
	paramDescLen = qz(0.436, 2, 13, 24, 47, 102, 201, 573, 2076)
	defaultLen   = qz(0.386, 1, 1, 2, 5, 10, 19, 81, 304)
	templateLen  = q(8, 18, 18, 62, 175, 409, 883, 977) // object templates, as json.dumps writes them
	apisPerTool  = q(1, 1, 1, 2, 6, 10, 10, 19)
	toolDescLen  = qz(0.05, 10, 20, 40, 80, 150, 260, 700, 2000) // tool files only; not in query files, so an estimate
	// templateShare is the share of APIs whose template response is an
	// object, and of those with none.
	templateShare = struct{ object, absent float64 }{0.604, 0.333}
	// The other templates are JSON text cut at 1,000 characters, a
	// string: StableToolBench's cut of overlong ones.
	templateCut = 1000
	// commonShare is the share of parameters named with one of the
	// common names (id, page, limit…: 40 % of the parameters carry one
	// of the 40 most frequent names), whose descriptions and examples
	// repeat from API to API.
	commonShare = 0.25
	// sharedShare is the share of a tool's parameters that repeat one of
	// its other APIs' (the same name, type, description and example).
	sharedShare = 0.30
	// sameInputShare is the share of APIs that take exactly the
	// parameters of another API of their tool.
	sameInputShare = 0.12
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
