package simulate

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// relation is an arithmetic rule that holds between the members of every
// recorded object at one place of an API's answers (at least two of
// them), so that a made-up object keeps it: a member that is the product
// or the quotient of two others (a conversion's result = amount × rate),
// a member never below another (a forecast's high and low), a count equal
// to, or at least, the length of a list beside it (total and results).
type relation struct {
	op      relOp
	c, a, b string // c = a op b; for relGE: a >= b; for the lengths: c and the list a
	dec     int    // decimals c is written with
}

type relOp uint8

const (
	relProduct relOp = iota
	relQuotient
	relGE
	relLenEq
	relLenGE
)

// learnRelations finds the relations that hold at every object path of
// the recorded answers (pyfmt values), keyed by pool path ("" for the
// answer itself, "days[]" for the elements of a list).
func learnRelations(bodies []any) map[string][]relation {
	rows := map[string][]pyfmt.Dict{}
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		if depth > 16 {
			return
		}
		switch x := v.(type) {
		case pyfmt.Dict:
			if len(rows[path]) < 256 {
				rows[path] = append(rows[path], x)
			}
			for _, m := range x {
				walk(m.Value, joinPath(path, m.Key), depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]", depth+1)
			}
		}
	}
	for _, b := range bodies {
		walk(b, "", 0)
	}
	out := map[string][]relation{}
	for path, rs := range rows {
		if len(rs) < 2 {
			continue
		}
		if rels := relationsOf(rs); len(rels) > 0 {
			out[path] = rels
		}
	}
	return out
}

// relationsOf finds the relations every row keeps.
func relationsOf(rows []pyfmt.Dict) []relation {
	first := rows[0]
	var nums, lists []string
	for _, m := range first {
		switch m.Value.(type) {
		case json.Number:
			nums = append(nums, m.Key)
		case []any:
			lists = append(lists, m.Key)
		}
		if len(nums) > 12 {
			break
		}
	}
	col := func(key string) ([]float64, []any, bool) {
		fs := make([]float64, len(rows))
		raw := make([]any, len(rows))
		for i, r := range rows {
			v, ok := r.Get(key)
			f, isNum := numberOf(v)
			if !ok || !isNum {
				return nil, nil, false
			}
			fs[i], raw[i] = f, v
		}
		return fs, raw, true
	}
	var out []relation
	// taken members are made from others; used ones are what others are
	// made from: a member is never both, so that no rule undoes another
	// (result = amount × rate, and not also rate = result / amount).
	taken, used := map[string]bool{}, map[string]bool{}
	product := func(x, y float64) float64 { return x * y }
	quotient := func(x, y float64) float64 {
		if y == 0 {
			return math.NaN()
		}
		return x / y
	}
	for _, op := range []relOp{relProduct, relQuotient} {
		for _, c := range nums {
			cs, craw, ok := col(c)
			if !ok || constant(cs) || taken[c] || used[c] {
				continue
			}
			dec := decimals(craw)
			tol := 0.5*math.Pow(10, -float64(dec)) + 1e-9
		pairs:
			for _, a := range nums {
				for _, b := range nums {
					if a == c || b == c || a == b || taken[a] || taken[b] || op == relProduct && a > b {
						continue
					}
					as, _, okA := col(a)
					bs, _, okB := col(b)
					if !okA || !okB {
						continue
					}
					f := product
					if op == relQuotient {
						f = quotient
					}
					if holds(cs, as, bs, tol, f) {
						out = append(out, relation{op: op, c: c, a: a, b: b, dec: dec})
						taken[c], used[a], used[b] = true, true, true
						break pairs
					}
				}
			}
		}
	}
	for _, a := range nums {
		for _, b := range nums {
			if a == b {
				continue
			}
			as, _, okA := col(a)
			bs, _, okB := col(b)
			if !okA || !okB {
				continue
			}
			ge, strict := true, false
			var sumA, sumB float64
			for i := range as {
				ge = ge && as[i] >= bs[i]
				strict = strict || as[i] > bs[i]
				sumA, sumB = sumA+math.Abs(as[i]), sumB+math.Abs(bs[i])
			}
			// Only between members of one magnitude (a high and a low,
			// not a year and a page count).
			comparable := sumB > 0 && sumA/sumB < 3
			if ge && strict && comparable && !taken[a] && !taken[b] {
				out = append(out, relation{op: relGE, a: a, b: b})
			}
		}
	}
	for _, c := range nums {
		cs, _, ok := col(c)
		if !ok || taken[c] {
			continue
		}
		for _, l := range lists {
			eq, ge := true, true
			for i, r := range rows {
				v, _ := r.Get(l)
				a, isList := v.([]any)
				if !isList {
					eq, ge = false, false
					break
				}
				eq = eq && cs[i] == float64(len(a))
				ge = ge && cs[i] >= float64(len(a))
			}
			switch {
			case eq:
				out = append(out, relation{op: relLenEq, c: c, a: l})
			case ge:
				out = append(out, relation{op: relLenGE, c: c, a: l})
			default:
				continue
			}
			taken[c] = true
			break
		}
	}
	return out
}

func constant(fs []float64) bool {
	for _, f := range fs[1:] {
		if f != fs[0] {
			return false
		}
	}
	return true
}

// holds reports whether c = op(a, b) within tol in every row, and the
// rows are not all the trivial case (a or b zero everywhere).
func holds(cs, as, bs []float64, tol float64, op func(x, y float64) float64) bool {
	varied := false
	for i := range cs {
		want := op(as[i], bs[i])
		if math.IsNaN(want) || math.Abs(cs[i]-want) > math.Max(tol, 1e-9*math.Abs(want)) {
			return false
		}
		varied = varied || as[i] != 0 && bs[i] != 0
	}
	return varied
}

// applyRelations makes o keep the relations learned at its place. A
// member is changed only where its value and those it is made from are
// numbers (or lists, for the lengths).
func applyRelations(rels []relation, o pyfmt.Dict) {
	idx := func(k string) int {
		for i, m := range o {
			if m.Key == k {
				return i
			}
		}
		return -1
	}
	num := func(k string) (float64, int, bool) {
		i := idx(k)
		if i < 0 {
			return 0, -1, false
		}
		f, ok := numberOf(o[i].Value)
		if _, isNum := o[i].Value.(json.Number); !isNum {
			ok = false
		}
		return f, i, ok
	}
	for _, r := range rels {
		switch r.op {
		case relProduct, relQuotient:
			a, _, okA := num(r.a)
			b, _, okB := num(r.b)
			_, ci, okC := num(r.c)
			if !okA || !okB || !okC {
				continue
			}
			v := a * b
			if r.op == relQuotient {
				if b == 0 {
					continue
				}
				v = a / b
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				continue
			}
			s := strconv.FormatFloat(v, 'f', r.dec, 64)
			if r.dec > 0 || kindOfValue(o[ci].Value) == kindFloat && r.dec == 0 {
				if r.dec == 0 {
					s += ".0"
				}
			}
			o[ci].Value = json.Number(s)
		case relGE:
			a, ai, okA := num(r.a)
			b, bi, okB := num(r.b)
			if okA && okB && a < b {
				o[ai].Value, o[bi].Value = o[bi].Value, o[ai].Value
			}
		case relLenEq, relLenGE:
			c, ci, okC := num(r.c)
			li := idx(r.a)
			if !okC || li < 0 {
				continue
			}
			l, ok := o[li].Value.([]any)
			if !ok {
				continue
			}
			if r.op == relLenEq && c != float64(len(l)) || r.op == relLenGE && c < float64(len(l)) {
				o[ci].Value = json.Number(strconv.Itoa(len(l)))
			}
		}
	}
}

// recordedLists collects the lists of the recorded answers by pool path
// ("days" for the member days of the answer, "a[].b" inside a list).
func recordedLists(bodies []any) map[string][][]any {
	out := map[string][][]any{}
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		if depth > 16 {
			return
		}
		switch x := v.(type) {
		case pyfmt.Dict:
			for _, m := range x {
				walk(m.Value, joinPath(path, m.Key), depth+1)
			}
		case []any:
			if len(out[path]) < 64 {
				out[path] = append(out[path], x)
			}
			for _, e := range x {
				walk(e, path+"[]", depth+1)
			}
		}
	}
	for _, b := range bodies {
		walk(b, "", 0)
	}
	return out
}
