package endstate

import (
	"fmt"
	"sort"
	"strings"
)

// Diff is how a world's changes differ from the gold's.
type Diff struct {
	// Tables are the tables the gold changes: State compares over them.
	Tables []string `json:"tables"`
	// Gold and Got count the row changes of the gold end state and of
	// the world (in every table).
	Gold int `json:"gold_rows"`
	Got  int `json:"got_rows"`
	// Matched are the gold's row changes the world made exactly.
	Matched int `json:"matched"`
	// Missing are gold row changes the world did not make (the row is
	// as it was); Wrong those it made with other values.
	Missing int `json:"missing"`
	Wrong   int `json:"wrong"`
	// Collateral are rows the world changed that the gold leaves alone,
	// in any table (another row, an extra row).
	Collateral int `json:"collateral"`
	// StateMatch says the world's changes equal the gold's over the
	// gold's tables: nothing missing, nothing wrong, nothing extra there.
	StateMatch bool `json:"state_match"`
	// Examples names a few of the differences, for reports.
	Examples []string `json:"examples,omitempty"`
}

// maxExamples bounds Diff.Examples.
const maxExamples = 5

// NoCollateral reports whether the world changed nothing the gold
// leaves alone.
func (d *Diff) NoCollateral() bool { return d.Collateral == 0 }

// F1 is the F1 of the world's row changes against the gold's: a row
// change counts when the world made it exactly as the gold does. Two
// empty sets score 1.
func (d *Diff) F1() float64 {
	if d.Gold == 0 && d.Got == 0 {
		return 1
	}
	if d.Gold+d.Got == 0 {
		return 0
	}
	return 2 * float64(d.Matched) / float64(d.Gold+d.Got)
}

// Compare compares got, a world's changes, with gold, the changes the
// task's gold calls make. Rows are matched by their table and identity
// (primary key, or contents for a table without one); their values are
// compared as EncodeValue does. Columns are matched by name, so a
// world reporting a table's columns in another order still compares.
func Compare(gold, got *Changes) *Diff {
	d := &Diff{}
	collateralIn := 0
	goldRows := map[string]map[string]string{} // table → identity → after
	if gold != nil {
		for i := range gold.Tables {
			t := &gold.Tables[i]
			if len(t.Rows) == 0 {
				continue
			}
			d.Tables = append(d.Tables, t.Table)
			m := map[string]string{}
			for _, r := range t.Rows {
				id, after := keyed(t, nil, r)
				m[id] = after
				d.Gold++
			}
			goldRows[t.Table] = m
		}
	}
	sort.Strings(d.Tables)
	seen := map[string]map[string]bool{}
	if got != nil {
		for i := range got.Tables {
			t := &got.Tables[i]
			var ref *TableChanges
			if gold != nil {
				ref = gold.Table(t.Table)
			}
			gm := goldRows[t.Table]
			for _, r := range t.Rows {
				d.Got++
				id, after := keyed(t, ref, r)
				want, inGold := gm[id]
				switch {
				case !inGold:
					d.Collateral++
					if gm != nil {
						collateralIn++
					}
					d.example("%s: changed a row the task leaves alone: %s", t.Table, describe(t, r))
				case want == after:
					d.Matched++
				default:
					d.Wrong++
					d.example("%s: row %s is %s, want %s", t.Table, id, after, want)
				}
				if inGold {
					if seen[t.Table] == nil {
						seen[t.Table] = map[string]bool{}
					}
					seen[t.Table][id] = true
				}
			}
		}
	}
	for _, table := range d.Tables {
		ids := make([]string, 0, len(goldRows[table]))
		for id := range goldRows[table] {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if !seen[table][id] {
				d.Missing++
				d.example("%s: row %s is unchanged, want %s", table, id, goldRows[table][id])
			}
		}
	}
	d.StateMatch = d.Missing == 0 && d.Wrong == 0 && collateralIn == 0
	return d
}

// keyed returns r's identity and its after-image, both canonical, with
// t's columns put in ref's order when ref (the gold's table) is given.
func keyed(t, ref *TableChanges, r RowChange) (id, after string) {
	cols, key := t.Columns, t.Key
	before, aft := r.Before, r.After
	if ref != nil && !sameNames(ref.Columns, t.Columns) {
		before, aft = reorder(t.Columns, ref.Columns, before), reorder(t.Columns, ref.Columns, aft)
		cols, key = ref.Columns, ref.Key
	}
	tc := &TableChanges{Columns: cols, Key: key}
	rc := RowChange{Before: before, After: aft}
	if len(key) == 0 {
		// A keyless table: a row is its contents, so the identity of a
		// change is both images.
		return EncodeRow(before) + "→" + EncodeRow(aft), EncodeRow(aft)
	}
	return tc.identity(rc), EncodeRow(aft)
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// reorder puts row (in from's column order) into to's order; columns
// to names that from lacks are NULL.
func reorder(from, to []string, row []any) []any {
	if row == nil {
		return nil
	}
	out := make([]any, len(to))
	for i, c := range to {
		if j := indexOf(from, c); j >= 0 && j < len(row) {
			out[i] = row[j]
		}
	}
	return out
}

func (d *Diff) example(format string, args ...any) {
	if len(d.Examples) < maxExamples {
		d.Examples = append(d.Examples, fmt.Sprintf(format, args...))
	}
}

func describe(t *TableChanges, r RowChange) string {
	switch {
	case r.Before == nil:
		return "added " + EncodeRow(r.After)
	case r.After == nil:
		return "removed " + EncodeRow(r.Before)
	}
	var parts []string
	for i, c := range t.Columns {
		if i < len(r.Before) && i < len(r.After) && EncodeValue(r.Before[i]) != EncodeValue(r.After[i]) {
			parts = append(parts, fmt.Sprintf("%s %s → %s", c, EncodeValue(r.Before[i]), EncodeValue(r.After[i])))
		}
	}
	return t.identity(r) + " " + strings.Join(parts, ", ")
}
