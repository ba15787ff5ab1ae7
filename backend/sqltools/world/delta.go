package world

import (
	"sort"

	"github.com/toolenv/toolenv/eval/endstate"
)

// Change is one row changed by one write: its table, its key (the rowid,
// or the primary key of a WITHOUT ROWID table) and its contents before
// and after (nil: absent). A world's log holds its writes' changes, so
// that replaying them rebuilds it without running anything.
type Change struct {
	Table  string `json:"table"`
	Key    []any  `json:"key"`
	Before []any  `json:"before"`
	After  []any  `json:"after"`
}

// entry is a row a world changed: its contents in the base database
// (nil: absent there) and now (nil: deleted).
type entry struct {
	key      []any
	old, new []any
}

// delta is what a world changed, by table and key: canonical, so that
// equal states hold equal deltas. A delta shared by several worlds (an
// initial state) is never changed: a world copies it on its first write.
type delta struct {
	tables map[*Table]map[string]*entry
	rows   int
	bytes  int64
}

func newDelta() *delta { return &delta{tables: map[*Table]map[string]*entry{}} }

func (d *delta) empty() bool { return d == nil || d.rows == 0 }

func (d *delta) clone() *delta {
	c := &delta{tables: make(map[*Table]map[string]*entry, len(d.tables)), rows: d.rows, bytes: d.bytes}
	for t, m := range d.tables {
		cm := make(map[string]*entry, len(m))
		for k, e := range m {
			cm[k] = e // entries are replaced, never changed in place
		}
		c.tables[t] = cm
	}
	return c
}

// get returns the entry of t's row key, or nil.
func (d *delta) get(t *Table, key string) *entry {
	if d == nil {
		return nil
	}
	return d.tables[t][key]
}

// apply records that t's row key went from before to after. An entry
// that comes back to its base contents is dropped: the delta of a state
// does not depend on the path to it.
func (d *delta) apply(t *Table, key []any, before, after []any) {
	k := encodeKey(key)
	m := d.tables[t]
	if m == nil {
		m = map[string]*entry{}
		d.tables[t] = m
	}
	old := before
	if e := m[k]; e != nil {
		old = e.old
		d.rows--
		d.bytes -= e.size()
		delete(m, k)
	}
	if sameRow(old, after) {
		if len(m) == 0 {
			delete(d.tables, t)
		}
		return
	}
	e := &entry{key: key, old: old, new: after}
	m[k] = e
	d.rows++
	d.bytes += e.size()
}

// size estimates an entry's memory.
func (e *entry) size() int64 {
	n := int64(64)
	for _, row := range [][]any{e.key, e.old, e.new} {
		for _, v := range row {
			n += 16
			switch x := v.(type) {
			case string:
				n += int64(len(x))
			case []byte:
				n += int64(len(x))
			}
		}
	}
	return n
}

// sortedTables returns d's tables in name order.
func (d *delta) sortedTables() []*Table {
	out := make([]*Table, 0, len(d.tables))
	for t := range d.tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sortedEntries returns t's entries in key order.
func (d *delta) sortedEntries(t *Table) []*entry {
	m := d.tables[t]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*entry, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// changesSince reports how the state cur differs from the state init
// (both over the same base; init nil: the base itself), as endstate
// Changes: rows of a table with a primary key matched by it, rows of
// one without as contents removed and added.
func changesSince(s *Schema, init, cur *delta) *endstate.Changes {
	type pair struct{ before, after []any }
	byTable := map[*Table]map[string]*pair{}
	add := func(t *Table, k string, e *entry, fromInit bool) {
		m := byTable[t]
		if m == nil {
			m = map[string]*pair{}
			byTable[t] = m
		}
		p := m[k]
		if p == nil {
			// Absent from one delta: that side is the base contents.
			p = &pair{before: e.old, after: e.old}
			m[k] = p
		}
		if fromInit {
			p.before = e.new
		} else {
			p.after = e.new
		}
	}
	if init != nil {
		for t, m := range init.tables {
			for k, e := range m {
				add(t, k, e, true)
			}
		}
	}
	if cur != nil {
		for t, m := range cur.tables {
			for k, e := range m {
				add(t, k, e, false)
			}
		}
	}
	out := &endstate.Changes{Tables: []endstate.TableChanges{}}
	for _, t := range s.Tables {
		m := byTable[t]
		if len(m) == 0 {
			continue
		}
		tc := endstate.TableChanges{Table: t.Name, Columns: t.Names(), Key: t.KeyNames()}
		if len(t.Key) > 0 {
			// Rows by primary key: a row deleted and another inserted
			// with the same key (a new rowid) is one changed row.
			pk := map[string]*endstate.RowChange{}
			var order []string
			get := func(row []any) *endstate.RowChange {
				k := encodeKey(project(t, t.Key, row))
				rc := pk[k]
				if rc == nil {
					rc = &endstate.RowChange{}
					pk[k] = rc
					order = append(order, k)
				}
				return rc
			}
			for _, p := range m {
				if sameRow(p.before, p.after) {
					continue
				}
				if p.before != nil {
					get(p.before).Before = exportRow(p.before)
				}
				if p.after != nil {
					get(p.after).After = exportRow(p.after)
				}
			}
			for _, k := range order {
				rc := pk[k]
				if endstate.EncodeRow(rc.Before) != endstate.EncodeRow(rc.After) {
					tc.Rows = append(tc.Rows, *rc)
				}
			}
		} else {
			for _, p := range m {
				if !sameRow(p.before, p.after) {
					tc.Rows = append(tc.Rows, endstate.RowChange{Before: exportRow(p.before), After: exportRow(p.after)})
				}
			}
		}
		if len(tc.Rows) > 0 {
			out.Tables = append(out.Tables, tc)
		}
	}
	out.Normalize()
	return out
}

// project returns row's values of cols.
func project(t *Table, cols []*Column, row []any) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		if c.index < len(row) {
			out[i] = row[c.index]
		}
	}
	return out
}

func exportRow(row []any) []any {
	if row == nil {
		return nil
	}
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = exported(v)
	}
	return out
}

// Export converts rows for an answer: blobs as text, infinities as
// "Infinity".
func Export(rows [][]any) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = exportRow(r)
	}
	return out
}
