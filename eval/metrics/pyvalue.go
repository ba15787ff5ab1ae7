package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// The reference scorers are Python programs that read their inputs with
// json.loads and act on the values the way Python does. These helpers give
// the values pyfmt.Loads reads (pyfmt.Dict, []any, string, json.Number,
// float64 for NaN and the infinities, bool, nil) the Python behaviour the
// scorers rely on: iteration, hashing as a dict key, type names, and ==.

// pyTypeName is type(v).__name__.
func pyTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number:
		if pyIsInt(x) {
			return "int"
		}
		return "float"
	case float64:
		return "float"
	case []any:
		return "list"
	case pyfmt.Tuple:
		return "tuple"
	case pyfmt.Dict:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyIsInt reports whether json.loads makes an int of the literal n.
func pyIsInt(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

// pyIter is list(v): a list's items, a dict's keys, a string's
// characters; anything else is Python's TypeError.
func pyIter(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case pyfmt.Tuple:
		return []any(x), nil
	case pyfmt.Dict:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = it.Key
		}
		return out, nil
	case string:
		return pyChars(x), nil
	}
	return nil, fmt.Errorf("TypeError: '%s' object is not iterable", pyTypeName(v))
}

// pyChars splits s into Python characters: code points, a lone surrogate
// (three bytes of generalized UTF-8) being one.
func pyChars(s string) []any {
	var out []any
	for i := 0; i < len(s); {
		n := 1
		if _, ok := pyfmt.SurrogateAt(s, i); ok {
			n = 3
		} else if s[i] >= utf8.RuneSelf {
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// pyGetItem is v[key] for a string key: a dict's value; a KeyError when
// the dict lacks it; a TypeError for anything that is not a dict.
func pyGetItem(v any, key string) (any, error) {
	d, ok := v.(pyfmt.Dict)
	if !ok {
		return nil, fmt.Errorf("TypeError: '%s' object is not subscriptable by a string", pyTypeName(v))
	}
	x, ok := d.Get(key)
	if !ok {
		return nil, fmt.Errorf("KeyError: %s", pyfmt.ReprString(key))
	}
	return x, nil
}

// pyItems is v.items(): a dict's items, an AttributeError for anything
// else.
func pyItems(v any) (pyfmt.Dict, error) {
	d, ok := v.(pyfmt.Dict)
	if !ok {
		return nil, fmt.Errorf("AttributeError: '%s' object has no attribute 'items'", pyTypeName(v))
	}
	return d, nil
}

var errUnhashable = errors.New("TypeError: unhashable type")

// pyHashKey returns a string that two values share exactly when Python
// takes them for the same dict key: equal strings; numbers (and bools)
// of equal value, whatever their type (1, 1.0 and True are one key);
// None; NaN as json.loads returns it (one shared object). Lists and dicts
// are not hashable.
func pyHashKey(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "N", nil
	case string:
		return "s" + x, nil
	case bool:
		if x {
			return "n1", nil
		}
		return "n0", nil
	case json.Number:
		return "n" + pyNumberKey(x), nil
	case float64:
		return "n" + pyFloatKey(x), nil
	}
	return "", errUnhashable
}

// pyNumberKey is the exact value of a JSON number as Python holds it: an
// int's digits, a float's value (an integral float written as the int it
// equals).
func pyNumberKey(n json.Number) string {
	if pyIsInt(n) {
		i, ok := new(big.Int).SetString(string(n), 10)
		if !ok {
			return string(n)
		}
		return i.String()
	}
	f, err := n.Float64()
	if err != nil && !math.IsInf(f, 0) {
		return string(n)
	}
	return pyFloatKey(f)
}

// pyFloatKey is pyNumberKey of a float: pyfmt.Float's nan, inf and -inf
// and digits, an integral value as the int it equals.
func pyFloatKey(f float64) string {
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		i, _ := new(big.Float).SetFloat64(f).Int(nil)
		return i.String()
	}
	return pyfmt.Float(f)
}

// pyEqual is Python's == of two values json.loads made, as containment
// (x in list) and the comparison of lists and dicts apply it: numbers (and
// bools) by value across int and float, strings, None, lists item by item
// and dicts key by key (order aside). A NaN equals a NaN: json.loads
// returns one shared NaN object, and containment tests identity first.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case pyfmt.Tuple:
		y, ok := b.(pyfmt.Tuple)
		return ok && pyEqual([]any(x), []any(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case pyfmt.Dict:
		y, ok := b.(pyfmt.Dict)
		if !ok || len(x) != len(y) {
			return false
		}
		for _, it := range x {
			w, ok := y.Get(it.Key)
			if !ok || !pyEqual(it.Value, w) {
				return false
			}
		}
		return true
	}
	ka, err := pyHashKey(a)
	if err != nil {
		return false
	}
	kb, err := pyHashKey(b)
	return err == nil && ka == kb
}

// pyStr is str(v) of a value json.loads made.
func pyStr(v any) string { return pyfmt.Str(v) }

// sortedKeys returns v with the keys of every dict in it sorted, as a
// JSON object holds them (unordered); lists keep their order.
func sortedKeys(v any) any {
	switch x := v.(type) {
	case pyfmt.Dict:
		out := make(pyfmt.Dict, len(x))
		for i, it := range x {
			out[i] = pyfmt.Item{Key: it.Key, Value: sortedKeys(it.Value)}
		}
		sortDict(out)
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sortedKeys(e)
		}
		return out
	}
	return v
}

func sortDict(d pyfmt.Dict) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j].Key < d[j-1].Key; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

// pyFormat3 is Python's "{:.3f}".format(x).
func pyFormat3(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return fmt.Sprintf("%.3f", x)
}

// npMean is numpy's mean of a float64 array: its pairwise sum (numpy's
// add.reduce) over the count, so that the last bit agrees too (a figure
// printed with three places can turn on it: 0.9125000000000001).
func npMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return pairwiseSum(xs) / float64(len(xs))
}

// pairwiseSum is numpy's pairwise_sum for float64: a plain loop under 8
// items, eight interleaved partial sums up to 128, halves above.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, x := range a {
			res += x
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

// statisticsMean is Python's statistics.mean of floats: the exact mean,
// rounded once; NaN when any is not finite (the scores it averages are
// in [0, 1] or NaN).
func statisticsMean(xs []float64) float64 {
	sum := new(big.Rat)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return math.NaN()
		}
		sum.Add(sum, new(big.Rat).SetFloat64(x))
	}
	sum.Quo(sum, new(big.Rat).SetInt64(int64(len(xs))))
	f, _ := sum.Float64()
	return f
}
