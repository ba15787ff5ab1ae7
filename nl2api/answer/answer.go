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
}

// body is the union of the result bodies answers are built from.
type body struct {
	Type    string   `json:"type"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Values  []any    `json:"values"`
	Value   any      `json:"value"`
	KeyName string   `json:"key_name"`
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
