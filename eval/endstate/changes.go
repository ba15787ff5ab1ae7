package endstate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Changes is a world's state as what differs from its initial state:
// for each table with a changed row, every such row before and after.
// Tables are sorted by name and rows by their canonical encoding, so
// that two worlds in the same state give equal Changes and equal hashes.
type Changes struct {
	Tables []TableChanges `json:"tables"`
}

// TableChanges are the changed rows of one table.
type TableChanges struct {
	Table string `json:"table"`
	// Columns are the table's stored columns, in order: the values of
	// Before and After.
	Columns []string `json:"columns"`
	// Key are the columns that identify a row (its primary key). Empty
	// for a table without one: its rows are identified by their
	// contents, so a changed row is a removed row and an added one.
	Key  []string    `json:"key,omitempty"`
	Rows []RowChange `json:"rows"`
}

// RowChange is one changed row: Before is nil for an added row, After
// for a removed one.
type RowChange struct {
	Before []any `json:"before"`
	After  []any `json:"after"`
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return c == nil || len(c.Tables) == 0 }

// Rows counts the changed rows.
func (c *Changes) Rows() int {
	n := 0
	if c != nil {
		for _, t := range c.Tables {
			n += len(t.Rows)
		}
	}
	return n
}

// Table returns the changes of the named table, or nil.
func (c *Changes) Table(name string) *TableChanges {
	if c == nil {
		return nil
	}
	for i := range c.Tables {
		if c.Tables[i].Table == name {
			return &c.Tables[i]
		}
	}
	return nil
}

// Normalize sorts c's tables and rows into their canonical order and
// drops empty tables. World reports are normalized already; a task file
// written by hand may not be.
func (c *Changes) Normalize() {
	if c == nil {
		return
	}
	kept := c.Tables[:0]
	for _, t := range c.Tables {
		if len(t.Key) == 0 {
			t.Rows = contentChanges(t.Rows)
		}
		if len(t.Rows) == 0 {
			continue
		}
		sort.SliceStable(t.Rows, func(i, j int) bool { return rowOrder(&t, t.Rows[i]) < rowOrder(&t, t.Rows[j]) })
		kept = append(kept, t)
	}
	c.Tables = kept
	sort.SliceStable(c.Tables, func(i, j int) bool { return c.Tables[i].Table < c.Tables[j].Table })
}

// contentChanges rewrites the changes of a table without a key as rows
// removed and rows added (a changed row is both), an identical row
// removed and added cancelling out: such a table is a multiset of rows.
func contentChanges(rows []RowChange) []RowChange {
	added := map[string]int{}
	var out []RowChange
	for _, r := range rows {
		if r.After != nil {
			added[EncodeRow(r.After)]++
		}
	}
	for _, r := range rows {
		if r.Before == nil {
			continue
		}
		if k := EncodeRow(r.Before); added[k] > 0 {
			added[k]--
			continue
		}
		out = append(out, RowChange{Before: r.Before})
	}
	for _, r := range rows {
		if r.After == nil {
			continue
		}
		if k := EncodeRow(r.After); added[k] > 0 {
			added[k]--
			out = append(out, RowChange{After: r.After})
		}
	}
	return out
}

// rowOrder is the sort key of a row change: its identity, then its
// contents.
func rowOrder(t *TableChanges, r RowChange) string {
	return t.identity(r) + "\x00" + EncodeRow(r.Before) + "\x00" + EncodeRow(r.After)
}

// Hash is the canonical hash of c (hex SHA-256, 32 characters): equal
// for equal states whatever the order the rows were changed in or how
// their numbers are spelled. Only the tables named are hashed when
// tables is not empty (the tables a gold end state changes).
func (c *Changes) Hash(tables ...string) string {
	only := map[string]bool{}
	for _, t := range tables {
		only[t] = true
	}
	h := sha256.New()
	var list []TableChanges
	if c != nil {
		list = append(list, c.Tables...)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Table < list[j].Table })
	for _, t := range list {
		if len(only) > 0 && !only[t.Table] || len(t.Rows) == 0 {
			continue
		}
		fmt.Fprintf(h, "T%s\x00%s\x00%s\x00", escape(t.Table), encodeNames(t.Columns), encodeNames(t.Key))
		enc := make([]string, len(t.Rows))
		for i, r := range t.Rows {
			enc[i] = rowOrder(&t, r)
		}
		sort.Strings(enc)
		for _, e := range enc {
			fmt.Fprintf(h, "R%s\x01", e)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func encodeNames(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = escape(n)
	}
	return strings.Join(out, ",")
}

func escape(s string) string { return strconv.Quote(s) }

// identity is what identifies r's row in t: its key values (before or
// after: a key does not change), or for a table without a key its
// contents.
func (t *TableChanges) identity(r RowChange) string {
	row := r.After
	if row == nil {
		row = r.Before
	}
	if len(t.Key) == 0 {
		return EncodeRow(row)
	}
	vals := make([]any, len(t.Key))
	for i, k := range t.Key {
		if j := indexOf(t.Columns, k); j >= 0 && j < len(row) {
			vals[i] = row[j]
		}
	}
	return EncodeRow(vals)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// EncodeRow is the canonical encoding of a row of values: equal for
// rows whose values are equal as EncodeValue compares them. A nil row
// (absent) encodes as "-".
func EncodeRow(row []any) string {
	if row == nil {
		return "-"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range row {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(EncodeValue(v))
	}
	b.WriteByte(']')
	return b.String()
}

// EncodeValue is the canonical encoding of one value: numbers by their
// exact decimal value (so 2, 2.0 and "2" from JSON's number are one
// number, and an integer beyond 2^53 keeps its digits), text quoted,
// NULL as n. Text that looks like a number stays text: SQLite keeps
// them apart, and so do the checks.
func EncodeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "n"
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return number(x)
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if r, ok := new(big.Rat).SetString(string(x)); ok && !strings.ContainsAny(string(x), "eE") && r.IsInt() {
			return r.Num().String()
		}
		if f, err := x.Float64(); err == nil {
			return number(f)
		}
		return "t" + strconv.Quote(string(x))
	case string:
		return "t" + strconv.Quote(x)
	case []byte:
		return "t" + strconv.Quote(string(x))
	}
	return "t" + strconv.Quote(fmt.Sprint(v))
}

// number encodes a float: integral values as integers (2.0 is 2),
// others in Go's shortest form.
func number(f float64) string {
	switch {
	case math.IsNaN(f):
		return "n"
	case math.IsInf(f, 1):
		return "t\"Infinity\""
	case math.IsInf(f, -1):
		return "t\"-Infinity\""
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e18 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
