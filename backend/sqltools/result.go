package sqltools

import (
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// kind is what a stored result holds.
type kind string

// The kinds of stored results; they are the "type" of result bodies.
const (
	kindTable   kind = "table"
	kindGrouped kind = "grouped"
	kindValue   kind = "value"
	kindList    kind = "list"
	kindRows    kind = "rows"
)

// result is a labelled result held by a session: a query over the
// session's database and what is needed to derive further results.
type result struct {
	label string
	kind  kind
	q     *query
	db    *rodb.DB

	// group is set on grouped data and on per-group aggregates: the rows
	// before grouping, the key columns and the aggregates so far.
	group *groupInfo

	// fbase and fpred record a filter lineage: the rows were derived from
	// fbase by filters whose conjunction is fpred (over fbase's scope).
	// combine_filters needs two results with the same fbase.
	fbase *result
	fpred frag

	// opened is q opened for filtering (see openQuery).
	opened *query

	// listCol names the column of a list.
	listCol string

	// getterOf is the table a SEL getter read this list from: lists read
	// from the same table can be put side by side as rows (their row
	// order is the table's), lists of different tables cannot.
	getterOf *result

	// bodyLen is the size of the response that was returned for it.
	bodyLen int
}

// groupInfo describes grouped data.
type groupInfo struct {
	src  *query   // the rows being grouped (open: no limit/distinct/group)
	keys []string // key column names
	aggs []aggCol // per-group aggregates added so far, in order
}

// aggCol is one per-group aggregate: the column it replaces or adds and
// the aggregate expression over src's scope.
type aggCol struct {
	name string
	expr frag
	kind string
}

// size estimates the memory the result holds, for the session cap.
func (r *result) size() int64 {
	n := int64(r.bodyLen) + 256
	n += fragSize(r.q.from) + fragSize(r.fpred)
	for _, c := range r.q.cols {
		n += fragSize(c.expr) + int64(len(c.name))
	}
	for _, w := range r.q.where {
		n += fragSize(w)
	}
	return n
}

func fragSize(f frag) int64 {
	n := int64(len(f.sql))
	for _, a := range f.args {
		if s, ok := a.(string); ok {
			n += int64(len(s))
		} else {
			n += 8
		}
	}
	return n
}
