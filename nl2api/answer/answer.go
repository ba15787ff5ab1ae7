package answer

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Table is an answer: column names and rows of values (int64, float64,
// json.Number, string or nil).
type Table struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// Ties, on a gold answer whose ORDER BY does not decide every row,
	// says which rows are ties: Equal then accepts any answer SQL could
	// equally have returned (another pick among the rows tied at a
	// LIMIT, another order among equal keys).
	Ties *Ties `json:"ties,omitempty"`
}

// Ties describes the ties of an ordered answer.
type Ties struct {
	// Keys holds each answer row's ORDER BY values, in row order.
	Keys [][]any `json:"keys"`
	// Pool holds, for a key whose rows the LIMIT (or OFFSET) cut
	// through, every row the query ranks with that key: the rows a
	// correct answer may hold in those places. PoolKeys are their keys.
	Pool     [][]any `json:"pool,omitempty"`
	PoolKeys [][]any `json:"pool_keys,omitempty"`
}

// body is the union of the result bodies answers are built from.
type body struct {
	Type    string   `json:"type"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Values  []any    `json:"values"`
	Value   any      `json:"value"`
	KeyName string   `json:"key_name"`
	// Shown is set when the result showed only a page of its rows.
	Shown *int `json:"shown"`
}

// Gold reads a gold answer as a task stores it ({"columns", "rows"} and
// its ties, when it has some).
func Gold(raw json.RawMessage) (*Table, error) {
	t, err := FromBodies(raw)
	if err != nil {
		return nil, err
	}
	var ties struct {
		Ties *Ties `json:"ties"`
	}
	if err := toolenv.DecodeJSON(raw, &ties); err != nil {
		return nil, err
	}
	t.Ties = ties.Ties
	return t, nil
}

// FromBodies assembles an answer from result bodies, in column order: a
// rows result (or a REST body) gives its columns, a list one column, a
// value one column of one row. All must have the same number of rows.
func FromBodies(bodies ...json.RawMessage) (*Table, error) {
	var cols []string
	var columns [][]any
	for i, raw := range bodies {
		var b body
		if err := toolenv.DecodeJSON(raw, &b); err != nil {
			return nil, fmt.Errorf("answer step %d: %w", i, err)
		}
		if b.Shown != nil {
			return nil, fmt.Errorf("answer step %d: the result showed only its first %d rows; an answer must be whole (filter or limit it first)", i, *b.Shown)
		}
		switch {
		case b.Type == "value":
			cols = append(cols, "value")
			columns = append(columns, []any{b.Value})
		case b.Type == "list":
			cols = append(cols, b.KeyName)
			columns = append(columns, nonNil(b.Values))
		case b.Type == "rows" || b.Type == "" && b.Columns != nil:
			for j, c := range b.Columns {
				col := make([]any, len(b.Rows))
				for r, row := range b.Rows {
					if j < len(row) {
						col[r] = row[j]
					}
				}
				cols = append(cols, c)
				columns = append(columns, col)
			}
		default:
			return nil, fmt.Errorf("answer step %d: a %q result is not an answer (retrieve the values first)", i, b.Type)
		}
	}
	t := &Table{Columns: cols, Rows: [][]any{}}
	if len(columns) == 0 {
		return t, nil
	}
	n := len(columns[0])
	for j, c := range columns {
		if len(c) != n {
			return nil, fmt.Errorf("answer steps have different lengths: %s has %d rows, %s has %d", cols[0], n, cols[j], len(c))
		}
	}
	for r := 0; r < n; r++ {
		row := make([]any, len(columns))
		for j := range columns {
			row[j] = columns[j][r]
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// Options adjust Equal.
type Options struct {
	// Ordered compares rows in order (the SQL's ORDER BY decides it).
	Ordered bool
	// Tolerance is the relative tolerance for numbers (default 1e-6).
	Tolerance float64
}

// Equal compares a computed answer with the gold one and says why they
// differ.
func Equal(gold, got *Table, opt Options) (bool, string) {
	if opt.Tolerance <= 0 {
		opt.Tolerance = 1e-6
	}
	if len(gold.Rows) != len(got.Rows) {
		return false, fmt.Sprintf("%d rows, want %d", len(got.Rows), len(gold.Rows))
	}
	gw, tw := width(gold), width(got)
	if len(gold.Rows) > 0 && gw != tw {
		return false, fmt.Sprintf("%d columns, want %d", tw, gw)
	}
	if t := gold.Ties; t != nil && len(t.Keys) == len(gold.Rows) && len(t.Pool) == len(t.PoolKeys) {
		return equalTies(gold, got, opt)
	}
	a, b := normRows(gold.Rows), normRows(got.Rows)
	if !opt.Ordered {
		sortRows(a)
		sortRows(b)
	}
	for i := range a {
		for j := range a[i] {
			if !equalValue(a[i][j], b[i][j], opt.Tolerance) {
				where := "row"
				if !opt.Ordered {
					where = "sorted row"
				}
				return false, fmt.Sprintf("%s %d column %d: %s, want %s", where, i+1, j+1, show(b[i][j]), show(a[i][j]))
			}
		}
	}
	return true, ""
}

func width(t *Table) int {
	if len(t.Rows) > 0 {
		return len(t.Rows[0])
	}
	return len(t.Columns)
}

// norm converts a value for comparison: numbers and numeric text to
// float64, text stays text, null is nil.
func norm(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case bool:
		if x {
			return 1.0
		}
		return 0.0
	case string:
		t := strings.TrimSpace(x)
		if t != "" && (t[0] == '-' || t[0] == '+' || t[0] == '.' || (t[0] >= '0' && t[0] <= '9')) {
			if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
				return f
			}
		}
		return x
	}
	return fmt.Sprint(v)
}

func normRows(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, v := range r {
			out[i][j] = norm(v)
		}
	}
	return out
}

// rank orders kinds: null < numbers < text.
func rank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case float64:
		return 1
	}
	return 2
}

func less(a, b any) bool {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	switch x := a.(type) {
	case float64:
		return x < b.(float64)
	case string:
		return x < b.(string)
	}
	return false
}

func sortRows(rows [][]any) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		for k := 0; k < len(a) && k < len(b); k++ {
			if less(a[k], b[k]) {
				return true
			}
			if less(b[k], a[k]) {
				return false
			}
		}
		return len(a) < len(b)
	})
}

func equalValue(a, b any, tol float64) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		scale := math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
		return math.Abs(x-y) <= tol*scale
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// equalTies compares with a gold answer that has ties. Its rows fall into
// runs of equal keys; a run's places may hold any of the run's candidate
// rows (the pool's rows of that key when the LIMIT cut through it, else
// the run's own rows), each at most once. Ordered, each run's places are
// compared with its candidates; unordered, every place of every run.
func equalTies(gold, got *Table, opt Options) (bool, string) {
	keys, pkeys := normRows(gold.Ties.Keys), normRows(gold.Ties.PoolKeys)
	rows, pool, cand := normRows(gold.Rows), normRows(gold.Ties.Pool), normRows(got.Rows)
	sameKey := func(a, b []any) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalValue(a[i], b[i], opt.Tolerance) {
				return false
			}
		}
		return true
	}
	sameRow := sameKey
	type run struct {
		from, to   int
		candidates [][]any
	}
	var runs []run
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && sameKey(keys[j], keys[i]) {
			j++
		}
		r := run{from: i, to: j}
		for p := range pool {
			if sameKey(pkeys[p], keys[i]) {
				r.candidates = append(r.candidates, pool[p])
			}
		}
		if r.candidates == nil {
			r.candidates = rows[i:j]
		}
		runs = append(runs, r)
		i = j
	}
	take := func(avail [][]any, used []bool, row []any) bool {
		for k, c := range avail {
			if !used[k] && sameRow(c, row) {
				used[k] = true
				return true
			}
		}
		return false
	}
	if opt.Ordered {
		for _, r := range runs {
			used := make([]bool, len(r.candidates))
			for i := r.from; i < r.to; i++ {
				if !take(r.candidates, used, cand[i]) {
					return false, fmt.Sprintf("row %d: %s is not among the rows the query ranks there (%s)", i+1, showRow(cand[i]), showRows(r.candidates, 3))
				}
			}
		}
		return true, ""
	}
	// Unordered: runs whose candidates are their own rows first, then the
	// runs the LIMIT cut, filled from what is left.
	left := make([]bool, len(cand))
	for _, r := range runs {
		if r.to-r.from != len(r.candidates) {
			continue
		}
		for _, want := range r.candidates {
			found := false
			for i, row := range cand {
				if !left[i] && sameRow(row, want) {
					left[i], found = true, true
					break
				}
			}
			if !found {
				return false, fmt.Sprintf("no row %s in the answer", showRow(want))
			}
		}
	}
	for _, r := range runs {
		if r.to-r.from == len(r.candidates) {
			continue
		}
		used := make([]bool, len(r.candidates))
		for n := 0; n < r.to-r.from; n++ {
			found := false
			for i, row := range cand {
				if !left[i] && take(r.candidates, used, row) {
					left[i], found = true, true
					break
				}
			}
			if !found {
				return false, fmt.Sprintf("too few rows among the tied ones (%s)", showRows(r.candidates, 3))
			}
		}
	}
	return true, ""
}

func showRow(r []any) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = show(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func showRows(rows [][]any, n int) string {
	var parts []string
	for i, r := range rows {
		if i == n {
			parts = append(parts, fmt.Sprintf("… %d in all", len(rows)))
			break
		}
		parts = append(parts, showRow(r))
	}
	return strings.Join(parts, ", ")
}
