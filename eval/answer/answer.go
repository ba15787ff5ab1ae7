// Package answer compares an agent's answer with a task's gold answer, for
// the completion (win) rate.
//
// Answers are tables: the gold answer of an NL2SQL task is the gold SQL's
// result, {"columns": [...], "rows": [[...], ...]} (docs/nl2sql.md), and an
// agent's answer is built from its results the same way the NL2SQL
// verification builds it — the results stored under the task's
// meta.answer_labels, side by side, else the last successful result.
//
// The comparison follows the NL2SQL verification's documented rule: row
// order is ignored unless the task says it is part of the answer
// (meta.ordered, a top-level ORDER BY), numbers are compared with a
// relative tolerance of 1e-6, NULL equals only NULL, column names are not
// compared (an agent names its own columns). This package exists until the
// NL2SQL engineer's exported comparison lands; then Equal delegates to it.
package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Table is an answer.
type Table struct {
	Columns []string `json:"columns,omitempty"`
	Rows    [][]any  `json:"rows"`
}

// Labeled is one result an agent produced: the label it was stored under
// and its body.
type Labeled struct {
	Label string
	OK    bool
	Body  json.RawMessage
}

// Gold reads a task's gold answer. ok is false when the task has none.
func Gold(t *toolenv.Task) (Table, bool, error) {
	if len(bytes.TrimSpace(t.Answer)) == 0 || string(bytes.TrimSpace(t.Answer)) == "null" {
		return Table{}, false, nil
	}
	tab, err := FromBody(t.Answer)
	if err != nil {
		return Table{}, true, fmt.Errorf("task %s: gold answer: %w", t.ID, err)
	}
	return tab, true, nil
}

// Ordered reports whether row order is part of a task's answer
// (meta.ordered).
func Ordered(t *toolenv.Task) bool {
	b, _ := t.Meta["ordered"].(bool)
	return b
}

// AnswerLabels returns a task's meta.answer_labels.
func AnswerLabels(t *toolenv.Task) []string {
	list, _ := t.Meta["answer_labels"].([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// FromResults builds an agent's answer from its results: when every
// label of the task's meta.answer_labels names a successful result, those
// results side by side; otherwise the last successful result.
func FromResults(t *toolenv.Task, results []Labeled) (Table, error) {
	byLabel := map[string]json.RawMessage{}
	var last json.RawMessage
	for _, r := range results {
		if r.OK {
			byLabel[strings.Trim(r.Label, "$")] = r.Body
			last = r.Body
		}
	}
	if labels := AnswerLabels(t); len(labels) > 1 {
		var parts []Table
		for _, l := range labels {
			b, ok := byLabel[l]
			if !ok {
				parts = nil
				break
			}
			p, err := FromBody(b)
			if err != nil {
				return Table{}, err
			}
			parts = append(parts, p)
		}
		if parts != nil {
			return sideBySide(parts), nil
		}
	}
	if last == nil {
		return Table{}, fmt.Errorf("no call succeeded, so there is no answer")
	}
	return FromBody(last)
}

func sideBySide(parts []Table) Table {
	var out Table
	n := 0
	for _, p := range parts {
		n = max(n, len(p.Rows))
		out.Columns = append(out.Columns, p.Columns...)
	}
	for i := 0; i < n; i++ {
		var row []any
		for _, p := range parts {
			if i < len(p.Rows) {
				row = append(row, p.Rows[i]...)
			} else {
				for range max(len(p.Columns), 1) {
					row = append(row, nil)
				}
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// FromBody reads a result body as a table: a rows result (or a gold
// answer) as its rows, a list as one column, a value as one cell; other
// JSON as one cell holding it.
func FromBody(body json.RawMessage) (Table, error) {
	var v any
	if err := toolenv.DecodeJSON(body, &v); err != nil {
		return Table{}, fmt.Errorf("answer body: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok {
			return fromList(list), nil
		}
		return Table{Rows: [][]any{{v}}}, nil
	}
	var t Table
	if cols, ok := m["columns"].([]any); ok {
		for _, c := range cols {
			s, _ := c.(string)
			t.Columns = append(t.Columns, s)
		}
	}
	switch {
	case m["rows"] != nil:
		rows, _ := m["rows"].([]any)
		for _, r := range rows {
			if cells, ok := r.([]any); ok {
				t.Rows = append(t.Rows, cells)
			} else {
				t.Rows = append(t.Rows, []any{r})
			}
		}
		if t.Rows == nil {
			t.Rows = [][]any{}
		}
		return t, nil
	case m["values"] != nil:
		vals, _ := m["values"].([]any)
		t.Rows = [][]any{}
		for _, x := range vals {
			t.Rows = append(t.Rows, []any{x})
		}
		return t, nil
	case m["type"] == "value":
		return Table{Rows: [][]any{{m["value"]}}}, nil
	case m["preview"] != nil:
		return Table{}, fmt.Errorf("the last result is a table (retrieve its values to answer)")
	}
	return Table{Rows: [][]any{{v}}}, nil
}

func fromList(list []any) Table {
	t := Table{Rows: [][]any{}}
	for _, e := range list {
		if r, ok := e.([]any); ok {
			t.Rows = append(t.Rows, r)
		} else {
			t.Rows = append(t.Rows, []any{e})
		}
	}
	return t
}

// Options tune Equal.
type Options struct {
	// Ordered compares rows in order.
	Ordered bool
	// Tolerance is the relative tolerance for numbers; 0 means 1e-6.
	Tolerance float64
}

// Equal reports whether got answers like gold, and when not, why. Column
// order may differ when every row agrees under one permutation of the
// columns (for up to 5 columns).
func Equal(gold, got Table, opt Options) (bool, string) {
	if opt.Tolerance == 0 {
		opt.Tolerance = 1e-6
	}
	if len(gold.Rows) != len(got.Rows) {
		return false, fmt.Sprintf("%d rows, the gold answer has %d", len(got.Rows), len(gold.Rows))
	}
	if len(gold.Rows) == 0 {
		return true, ""
	}
	gw, pw := width(gold), width(got)
	if gw != pw {
		return false, fmt.Sprintf("%d columns, the gold answer has %d", pw, gw)
	}
	perms := [][]int{identity(gw)}
	if gw > 1 && gw <= 5 {
		perms = permutations(gw)
	}
	for _, p := range perms {
		if rowsEqual(gold.Rows, permute(got.Rows, p), opt) {
			return true, ""
		}
	}
	if opt.Ordered {
		return false, "the rows differ (row order counts for this task)"
	}
	return false, "the rows differ"
}

func width(t Table) int {
	w := 0
	for _, r := range t.Rows {
		w = max(w, len(r))
	}
	return w
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func permutations(n int) [][]int {
	var out [][]int
	var rec func(p []int, used []bool)
	rec = func(p []int, used []bool) {
		if len(p) == n {
			out = append(out, append([]int(nil), p...))
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i] = true
				rec(append(p, i), used)
				used[i] = false
			}
		}
	}
	rec(nil, make([]bool, n))
	return out
}

func permute(rows [][]any, p []int) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		nr := make([]any, len(p))
		for j, k := range p {
			if k < len(r) {
				nr[j] = r[k]
			}
		}
		out[i] = nr
	}
	return out
}

func rowsEqual(gold, got [][]any, opt Options) bool {
	if opt.Ordered {
		for i := range gold {
			if !rowEqual(gold[i], got[i], opt.Tolerance) {
				return false
			}
		}
		return true
	}
	// Match each gold row with a distinct equal row: sort both by a
	// rounded key, then compare in order; fall back to a greedy search
	// when rounding puts near-equal rows apart.
	g, p := sortedRows(gold), sortedRows(got)
	ok := true
	for i := range g {
		if !rowEqual(g[i], p[i], opt.Tolerance) {
			ok = false
			break
		}
	}
	if ok {
		return true
	}
	used := make([]bool, len(got))
	for _, gr := range gold {
		found := false
		for j, pr := range got {
			if !used[j] && rowEqual(gr, pr, opt.Tolerance) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func sortedRows(rows [][]any) [][]any {
	out := append([][]any(nil), rows...)
	keys := make([]string, len(out))
	idx := make([]int, len(out))
	for i, r := range out {
		keys[i] = rowKey(r)
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([][]any, len(out))
	for i, k := range idx {
		sorted[i] = out[k]
	}
	return sorted
}

func rowKey(r []any) string {
	var b strings.Builder
	for _, v := range r {
		if f, ok := number(v); ok {
			b.WriteString("n" + strconv.FormatFloat(f, 'g', 6, 64))
		} else {
			c, _ := toolenv.Canonical(v)
			b.Write(c)
		}
		b.WriteByte(0)
	}
	return b.String()
}

func rowEqual(a, b []any, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !valueEqual(a[i], b[i], tol) {
			return false
		}
	}
	return true
}

// valueEqual compares two cells: NULL only equals NULL; numbers (and
// booleans, which SQLite stores as 0 and 1) within the tolerance; other
// values by canonical JSON.
func valueEqual(a, b any, tol float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		if fa == fb {
			return true
		}
		d := math.Abs(fa - fb)
		return d <= tol*math.Max(math.Abs(fa), math.Abs(fb)) || d <= 1e-12
	}
	if oka != okb {
		return false
	}
	ca, err1 := toolenv.Canonical(a)
	cb, err2 := toolenv.Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
