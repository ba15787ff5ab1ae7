package sqltools

import (
	"fmt"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// sort orders a table's rows by one column; earlier order breaks ties.
func (b *Backend) sort(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	keyName := a.str("key_name", true)
	if _, ok := a.raw("ascending"); !ok {
		a.fail("ascending", "missing_required", "boolean", "missing required argument `ascending` (true or false)")
	}
	asc := a.boolean("ascending", true)
	a.unknown("data_source", "key_name", "ascending", "label")
	if err := a.err("sort_data"); err != nil {
		return nil, err
	}
	q := src.q.open(&ss.seq)
	col, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	q.sortBy(col.expr, !asc)
	return &result{kind: kindTable, q: q, db: ss.db}, nil
}

// groupBy groups a table by a column (grouping grouped data adds a key).
func (b *Backend) groupBy(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable, kindGrouped)
	keyName := a.str("key_name", true)
	a.unknown("data_source", "key_name", "label")
	if err := a.err("group_data_by"); err != nil {
		return nil, err
	}
	g := &groupInfo{}
	if src.kind == kindGrouped {
		g.src = src.group.src
		g.keys = append(append([]string(nil), src.group.keys...), keyName)
	} else {
		g.src = src.q.open(&ss.seq)
		g.src.order = nil
		g.keys = []string{keyName}
	}
	if _, err := column(g.src, src, keyName, "key_name"); err != nil {
		return nil, err
	}
	for _, prev := range g.keys[:len(g.keys)-1] {
		if prev == keyName {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "group_data_by: the data is already grouped by %s", keyName)
		}
	}
	return &result{kind: kindGrouped, q: groupedQuery(g), group: g, db: ss.db}, nil
}

// groupedQuery is the per-group query of g: the rows of g.src grouped by
// its keys, aggregated columns replaced by their aggregates and the other
// columns taking their value from one row of the group (SQLite's rule
// for bare columns; with a min/max aggregate, the row holding it).
func groupedQuery(g *groupInfo) *query {
	q := g.src.clone()
	q.order = nil
	q.groupBy = nil
	for _, k := range g.keys {
		q.groupBy = append(q.groupBy, q.col(k).expr)
	}
	q.tie = nil // a group is identified by its keys
	for _, k := range q.groupBy {
		q.tie = append(q.tie, okey{expr: k})
	}
	aggs := map[string]aggCol{}
	for _, ac := range g.aggs {
		aggs[ac.name] = ac
	}
	for i, c := range q.cols {
		if ac, ok := aggs[c.name]; ok {
			q.cols[i] = qcol{name: c.name, expr: ac.expr, kind: ac.kind, agg: true}
			delete(aggs, c.name)
		}
	}
	for _, ac := range g.aggs { // added columns (row_count)
		if _, ok := aggs[ac.name]; ok {
			q.cols = append(q.cols, qcol{name: ac.name, expr: ac.expr, kind: ac.kind, agg: true})
		}
	}
	return q
}

// AggregationTypes are aggregate_data's aggregation types.
var AggregationTypes = []string{"min", "max", "sum", "mean", "count", "std", "argmin", "argmax"}

// RowCountColumn is the column a per-group count without key_name adds.
const RowCountColumn = "row_count"

// NewColumnTypes are the aggregation types aggregate_data can put in a
// new per-group column (new_column), named NewColumnName(type).
var NewColumnTypes = []string{"min", "max", "sum", "mean", "count"}

// NewColumnName is the column a per-group aggregate of type typ with
// new_column adds: <type>_value (max_value, mean_value, ...). A fixed
// name per type keeps the columns an agent may name a closed list, as
// row_count does.
func NewColumnName(typ string) string { return typ + "_value" }

// aggregate reduces a table to a value (argmin/argmax: to its row), or
// grouped data to one row per group.
func (b *Backend) aggregate(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable, kindGrouped)
	keyName := a.str("key_name", false)
	typ := strings.ToLower(a.str("aggregation_type", true))
	distinct := a.boolean("distinct", false)
	newColumn := a.boolean("new_column", false)
	a.unknown("data_source", "key_name", "aggregation_type", "distinct", "new_column", "label")
	if err := a.err("aggregate_data"); err != nil {
		return nil, err
	}
	known := false
	for _, t := range AggregationTypes {
		known = known || t == typ
	}
	if !known {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("aggregate_data: unknown aggregation_type %q", typ),
			Problems: []toolenv.Problem{{Param: "aggregation_type", Code: "not_in_enum", Message: "unknown aggregation type", Expected: strings.Join(AggregationTypes, ", ")}}}
	}
	if keyName == "" && typ != "count" {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("aggregate_data: %s needs a `key_name`", typ),
			Problems: []toolenv.Problem{{Param: "key_name", Code: "missing_required", Message: "missing key_name"}}, Hint: "only count works without a key_name (it counts rows)"}
	}
	perGroup := src.group != nil
	if newColumn {
		switch {
		case !perGroup:
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "group the data first (group_data_by), or leave new_column out", "aggregate_data: new_column applies to grouped data only")
		case keyName == "" || !slices.Contains(NewColumnTypes, typ):
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "new_column works with a key_name and one of "+strings.Join(NewColumnTypes, ", "), "aggregate_data: new_column with %s", typ)
		}
	}
	var scope *query
	if perGroup {
		scope = src.group.src
	} else {
		scope = src.q.open(&ss.seq)
	}
	var col *qcol
	if keyName != "" {
		var err error
		if col, err = column(scope, src, keyName, "key_name"); err != nil {
			if perGroup && src.q.col(keyName) != nil {
				return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "aggregate a column of the grouped rows", "aggregate_data: %s is itself a per-group aggregate", keyName)
			}
			return nil, err
		}
	}
	if typ == "argmin" || typ == "argmax" {
		if perGroup {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "sort the per-group table instead (sort_data)", "aggregate_data: %s is not available per group", typ)
		}
		q := scope.clone()
		q.sortBy(col.expr, typ == "argmax")
		q.limit = 1
		return &result{kind: kindTable, q: q, db: ss.db}, nil
	}
	expr, k, err := aggExpr(typ, col, distinct, scope, &ss.seq)
	if err != nil {
		return nil, err
	}
	if perGroup {
		name := RowCountColumn
		switch {
		case newColumn:
			name = NewColumnName(typ)
			if scope.col(name) != nil {
				return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "aggregate without new_column (the aggregate then replaces key_name's values)", "aggregate_data: the grouped rows already have a column %s", name)
			}
		case col != nil:
			name = col.name
		}
		g := &groupInfo{src: src.group.src, keys: src.group.keys}
		for _, ac := range src.group.aggs {
			if ac.name != name {
				g.aggs = append(g.aggs, ac)
			}
		}
		g.aggs = append(g.aggs, aggCol{name: name, expr: expr, kind: k})
		return &result{kind: kindTable, q: groupedQuery(g), group: g, db: ss.db}, nil
	}
	q := scope.clone()
	q.order, q.tie = nil, nil
	q.cols = []qcol{{name: "value", expr: expr, kind: k, agg: true}}
	return &result{kind: kindValue, q: q, db: ss.db}, nil
}

// aggExpr is the SQL of one aggregate over col in scope.
func aggExpr(typ string, col *qcol, distinct bool, scope *query, seq *int) (frag, string, error) {
	d := ""
	if distinct {
		d = "DISTINCT "
	}
	if col == nil { // count rows
		if distinct {
			return frag{}, "", toolenv.Errorw(toolenv.StatusInvalidArguments, "give a key_name to count its distinct values", "aggregate_data: distinct count needs a key_name")
		}
		return frag{sql: "COUNT(*)"}, "integer", nil
	}
	x := col.expr
	switch typ {
	case "count":
		return fmtFrag("COUNT("+d+"%s)", x), "integer", nil
	case "sum":
		k := "number"
		if col.kind == "integer" {
			k = "integer"
		}
		return fmtFrag("SUM("+d+"%s)", x), k, nil
	case "mean":
		return fmtFrag("AVG("+d+"%s)", x), "number", nil
	case "min", "max":
		return fmtFrag(strings.ToUpper(typ)+"(%s)", x), col.kind, nil
	case "std":
		if distinct {
			return frag{}, "", toolenv.Errorw(toolenv.StatusInvalidArguments, "", "aggregate_data: std has no distinct form")
		}
		// Sample standard deviation in one pass: sqrt((Σx² − (Σx)²/n) / (n − 1)).
		return fmtFrag("SQRT((SUM((%s) * (%s)) - SUM(%s) * SUM(%s) * 1.0 / COUNT(%s)) / (COUNT(%s) - 1))", x, x, x, x, x, x), "number", nil
	}
	return frag{}, "", fmt.Errorf("aggregate_data: unhandled type %s", typ)
}

// TransformOperations are transform_data's operations.
var TransformOperations = []string{
	"substring", "abs", "year", "month", "day", "date", "lower", "upper", "length", "round", "cast",
	"add", "subtract", "multiply", "divide", "integer_divide",
}

var arithmeticOps = map[string]string{"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "integer_divide": "/"}

// transform rewrites one column of a table in place.
func (b *Backend) transform(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	keyName := a.str("key_name", true)
	op := strings.ToLower(a.str("operation_type", true))
	rawOpArgs, _ := a.raw("operation_args")
	a.unknown("data_source", "key_name", "operation_type", "operation_args", "label")
	if err := a.err("transform_data"); err != nil {
		return nil, err
	}
	opArgs := map[string]any{}
	if rawOpArgs != nil {
		m, ok := rawOpArgs.(map[string]any)
		if !ok {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, transformHint(op), "transform_data: `operation_args` must be an object, got %s", describe(rawOpArgs))
		}
		opArgs = m
	}
	q := src.q.derive(src.q.distinct, &ss.seq)
	col, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	oa := newArgs(opArgs)
	x := col.expr
	var expr frag
	kind := col.kind
	switch op {
	case "substring":
		if !oa.has("start_index") {
			oa.fail("start_index", "missing_required", "integer", "substring needs start_index (0-based, inclusive; negative counts from the end)")
		}
		start := oa.integer("start_index", 0)
		hasEnd := oa.has("end_index")
		end := oa.integer("end_index", 0)
		oa.unknown("start_index", "end_index")
		switch {
		case hasEnd && end < start:
			oa.fail("end_index", "out_of_range", "integer >= start_index", "end_index (exclusive) must not be below start_index")
		case hasEnd && start < 0 && end >= 0:
			oa.fail("end_index", "out_of_range", "a negative integer, or none", "with a negative start_index, end_index counts from the end too (negative), or is left out")
		case hasEnd && start >= 0 && end < 0:
			oa.fail("end_index", "out_of_range", "integer >= start_index", "with start_index >= 0, end_index must be >= start_index")
		}
		// SQLite's substr counts from 1, and from the end when negative.
		first := start + 1
		if start < 0 {
			first = start
		}
		if hasEnd {
			expr = fmtFrag("substr(%s, %s, %s)", x, bound(first), bound(end-start))
		} else {
			expr = fmtFrag("substr(%s, %s)", x, bound(first))
		}
		kind = "string"
	case "abs":
		expr = fmtFrag("abs(%s)", x)
	case "year", "month", "day":
		f := map[string]string{"year": "%Y", "month": "%m", "day": "%d"}[op]
		expr = fmtFrag("CAST(strftime('"+f+"', %s) AS INTEGER)", x)
		kind = "integer"
	case "date":
		expr, kind = fmtFrag("date(%s)", x), "string"
	case "lower", "upper":
		expr, kind = fmtFrag(op+"(%s)", x), "string"
	case "length":
		expr, kind = fmtFrag("length(%s)", x), "integer"
	case "round":
		digits := oa.integer("digits", 0)
		oa.unknown("digits")
		expr, kind = fmtFrag("round(%s, %s)", x, bound(digits)), "number"
	case "cast":
		to := strings.ToLower(oa.str("type", true))
		oa.unknown("type")
		switch to {
		case "integer":
			expr, kind = fmtFrag("CAST(%s AS INTEGER)", x), "integer"
		case "real":
			expr, kind = fmtFrag("CAST(%s AS REAL)", x), "number"
		case "text":
			expr, kind = fmtFrag("CAST(%s AS TEXT)", x), "string"
		default:
			oa.fail("type", "not_in_enum", "integer, real, text", "cast type %q is not integer, real or text", to)
		}
	case "add", "subtract", "multiply", "divide", "integer_divide":
		var y frag
		yKind := ""
		if other := oa.str("other_key_name", false); other != "" {
			oc, err := column(q, src, other, "operation_args.other_key_name")
			if err != nil {
				return nil, err
			}
			y, yKind = oc.expr, oc.kind
		} else if v, ok := oa.raw("value"); ok {
			s, ok := scalar(v)
			if _, isStr := s.(string); !ok || s == nil || isStr {
				oa.fail("value", "wrong_type", "number", "`value` must be a number, got %s", describe(v))
			} else {
				y, yKind = bound(s), "number"
				if _, isInt := s.(int64); isInt {
					yKind = "integer"
				}
			}
		} else {
			oa.fail("value", "missing_required", "number", "%s needs operation_args.value (a number) or operation_args.other_key_name (a column)", op)
		}
		oa.unknown("value", "other_key_name")
		switch op {
		case "divide":
			expr, kind = fmtFrag("CAST(%s AS REAL) / %s", x, y), "number"
		case "integer_divide":
			expr, kind = fmtFrag("CAST(%s AS INTEGER) / CAST(%s AS INTEGER)", x, y), "integer"
		default:
			expr = fmtFrag("(%s) "+arithmeticOps[op]+" (%s)", x, y)
			kind = "number"
			if col.kind == "integer" && yKind == "integer" {
				kind = "integer"
			}
		}
	default:
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("transform_data: unknown operation_type %q", op),
			Problems: []toolenv.Problem{{Param: "operation_type", Code: "not_in_enum", Message: "unknown operation", Expected: strings.Join(TransformOperations, ", ")}}}
	}
	if len(oa.problems) > 0 {
		for i := range oa.problems {
			oa.problems[i].Param = "operation_args." + oa.problems[i].Param
		}
		e := oa.err("transform_data").(*toolenv.Error)
		e.Hint = transformHint(op)
		return nil, e
	}
	col.expr, col.kind = expr, kind
	return &result{kind: kindTable, q: q, db: ss.db}, nil
}

func transformHint(op string) string {
	switch op {
	case "substring":
		return `operation_args: {"start_index": 0, "end_index": 4} keeps characters 0..3 (end exclusive; omit end_index to keep the rest)`
	case "round":
		return `operation_args: {"digits": 2}`
	case "cast":
		return `operation_args: {"type": "integer" | "real" | "text"}`
	case "add", "subtract", "multiply", "divide", "integer_divide":
		return `operation_args: {"value": 100} or {"other_key_name": "<column>"}`
	}
	return "operation_args: {} (this operation takes none)"
}

// RankMethods are rank_data's methods: rank (ties share a rank, the
// next rank skips: 1, 1, 3) and dense_rank (1, 1, 2), SQL's RANK() and
// DENSE_RANK().
var RankMethods = []string{"rank", "dense_rank"}

// RankColumn is the column rank_data adds.
const RankColumn = "rank_value"

// rank adds column rank_value to a table: each row's rank by key_name
// (within its partition_key_name group when given), as SQL's RANK() or
// DENSE_RANK() OVER ([PARTITION BY p] ORDER BY k) computes it. Rows keep
// their order.
func (b *Backend) rank(ss *session, a *args) (*result, error) {
	src := b.source(ss, a, "data_source", kindTable)
	keyName := a.str("key_name", true)
	part := a.str("partition_key_name", false)
	if _, ok := a.raw("ascending"); !ok {
		a.fail("ascending", "missing_required", "boolean", "missing required argument `ascending` (true: the smallest value has rank 1)")
	}
	asc := a.boolean("ascending", true)
	method := strings.ToLower(a.str("method", true))
	a.unknown("data_source", "key_name", "partition_key_name", "ascending", "method", "label")
	if err := a.err("rank_data"); err != nil {
		return nil, err
	}
	if !slices.Contains(RankMethods, method) {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("rank_data: unknown method %q", method),
			Problems: []toolenv.Problem{{Param: "method", Code: "not_in_enum", Message: "unknown method", Expected: strings.Join(RankMethods, ", ")}}}
	}
	q := src.q.open(&ss.seq)
	col, err := column(q, src, keyName, "key_name")
	if err != nil {
		return nil, err
	}
	if q.col(RankColumn) != nil {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "rank the data before an earlier rank_data, or rank another result", "rank_data: the table already has a column %s", RankColumn)
	}
	over := frag{}
	if part != "" {
		pc, err := column(q, src, part, "partition_key_name")
		if err != nil {
			return nil, err
		}
		over = fmtFrag("PARTITION BY %s ", pc.expr)
	}
	dir := " DESC"
	if asc {
		dir = ""
	}
	expr := fmtFrag(strings.ToUpper(method)+"() OVER (%sORDER BY %s"+dir+")", over, col.expr)
	q.cols = append(q.cols, qcol{name: RankColumn, expr: expr, kind: "integer"})
	// The rank is of these rows: what is added later (a filter, a limit)
	// must not change them, so the next operation reads a wrapped copy.
	return &result{kind: kindTable, q: q.wrap(&ss.seq), db: ss.db}, nil
}
