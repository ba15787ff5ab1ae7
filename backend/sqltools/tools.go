package sqltools

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/ident"
)

// Column documents a column of a starting table for tool schemas.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"` // "integer", "number" or "string"
	Description string `json:"description,omitempty"`
}

// rowCountDoc documents the column a per-group count adds.
var rowCountDoc = Column{Name: RowCountColumn, Type: "integer", Description: "number of rows in each group (added by aggregate_data count on grouped data without key_name)"}

// The properties whose values are column names and are narrowed per task.
var columnProps = map[string]bool{"key_name": true, "other_key_name": true, "key_names": true, "partition_key_name": true}

func str(desc string) *toolenv.Schema { return &toolenv.Schema{Type: "string", Description: desc} }

func labelProp() *toolenv.Schema {
	s := str("Optional name to store this result under (letters, digits, _). Later calls refer to it as \"$name$\". Without it the response gives an automatic label.")
	s.Pattern = "^[A-Za-z_][A-Za-z0-9_]{0,63}$"
	return s
}

func sourceProp(what string) *toolenv.Schema {
	return str(fmt.Sprintf("\"$label$\" of %s (the label an earlier call returned, e.g. \"$starting_table$\").", what))
}

// columnProp is a column-name property with the enum of cols.
func columnProp(desc string, cols []Column) *toolenv.Schema {
	s := str(desc + columnList(cols))
	s.Enum = columnEnum(cols)
	return s
}

func columnEnum(cols []Column) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func columnList(cols []Column) string {
	var b strings.Builder
	b.WriteString(":")
	for _, c := range cols {
		b.WriteString("\n* `" + c.Name + "`")
		if c.Description != "" {
			b.WriteString(" - " + c.Description)
		}
	}
	return b.String()
}

// AddedColumns are the columns operations add: row_count and the
// new_column ones (max_value, ...) of per-group aggregates, and
// rank_value of rank_data. Every task may name them.
func AddedColumns() []Column {
	out := []Column{rowCountDoc}
	for _, t := range NewColumnTypes {
		out = append(out, Column{Name: NewColumnName(t), Type: map[string]string{"count": "integer", "mean": "number"}[t],
			Description: fmt.Sprintf("per group, %s of the aggregated column (added by aggregate_data %s with new_column on grouped data)", aggregatePhrase(t), t)})
	}
	return append(out, Column{Name: RankColumn, Type: "integer", Description: "each row's rank (added by rank_data)"})
}

// withRowCount appends the added columns (AddedColumns) unless present.
func withRowCount(cols []Column) []Column {
	have := map[string]bool{}
	for _, c := range cols {
		have[c.Name] = true
	}
	out := append([]Column(nil), cols...)
	for _, c := range AddedColumns() {
		if !have[c.Name] {
			out = append(out, c)
		}
	}
	return out
}

func object(props ...any) *toolenv.Schema {
	s := toolenv.ObjectSchema()
	for i := 0; i+2 < len(props)+1; i += 3 {
		name := props[i].(string)
		s.SetProp(name, props[i+1].(*toolenv.Schema))
		if props[i+2].(bool) {
			s.Required = append(s.Required, name)
		}
	}
	s.AdditionalProperties = json.RawMessage("false")
	return s
}

func enumProp(desc string, values []string) *toolenv.Schema {
	s := str(desc)
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func valueProp() *toolenv.Schema {
	return &toolenv.Schema{Description: "The value to compare with: a string or a number; for in / not_in a list of values; for between [low, high] (inclusive); or \"$label$\" of an earlier single value (aggregate_data, calculate) or list (select_unique_values). Values are converted to the column's type when that loses nothing (\"200\" for a number column is 200)."}
}

func operandProp(side string) *toolenv.Schema {
	return &toolenv.Schema{Description: fmt.Sprintf("The %s operand: a number, or \"$label$\" of an earlier single value (aggregate_data, calculate, or a one-cell result).", side)}
}

func opArgsProp(cols []Column) *toolenv.Schema {
	s := object(
		"start_index", &toolenv.Schema{Type: "integer", Description: "substring: first character, 0-based, inclusive; negative: counted from the end (-1 is the last character)"}, false,
		"end_index", &toolenv.Schema{Type: "integer", Description: "substring: end, 0-based, exclusive (omit to keep the rest); negative (with a negative start_index): counted from the end"}, false,
		"digits", &toolenv.Schema{Type: "integer", Description: "round: digits after the decimal point (default 0)"}, false,
		"type", enumProp("cast: the type to convert to", []string{"integer", "real", "text"}), false,
		"value", &toolenv.Schema{Type: "number", Description: "add, subtract, multiply, divide, integer_divide: the number to combine each value with"}, false,
		"other_key_name", columnProp("add, subtract, multiply, divide, integer_divide: the column to combine each value with (instead of value)", cols), false,
	)
	s.Description = "Arguments of the operation, e.g. {\"start_index\": 0, \"end_index\": 4} for substring or {\"other_key_name\": \"budget_amount\"} for divide."
	return s
}

const (
	descFilter    = "Keep the rows of a table whose column `key_name` satisfies `condition` against `value` (or against column `other_key_name` of the same row). Comparisons with null are never true (use is_null / is_not_null). like uses SQL LIKE patterns (% any run, _ one character; case-insensitive for ASCII); contains is a case-sensitive substring test. Returns a table."
	descCombine   = "Combine the results of several filter_data calls on the same data source: `or` keeps the rows kept by any of them, `and` those kept by all. Use it for conditions joined by OR. Returns a table."
	descSort      = "Sort the rows of a table by column `key_name`. Nulls come first in ascending order and last in descending order. Sorting again sorts by the new key first and keeps the earlier order among ties (so to sort by a then b, sort by b, then by a). Returns a table."
	descGroup     = "Group the rows of a table by column `key_name` (group grouped data again to group by several columns). Then use aggregate_data to get one row per group. Returns grouped data."
	descAggregate = "Aggregate column `key_name`: min, max, sum, mean, count (non-null values; all rows without key_name), std (sample standard deviation), argmin / argmax (the row holding the smallest / largest value). On a table the result is a single value (argmin/argmax: a one-row table); on grouped data it is a table with one row per group, where the aggregated column holds the aggregate (a count without key_name adds column row_count; with new_column the aggregate goes to a new column <aggregation_type>_value, e.g. max_value, and key_name keeps its per-group value) and other columns hold values of one row of the group. Aggregating that per-group table again adds another per-group aggregate. Nulls are ignored; the sum, mean, min and max of no values are null."
	descTransform = "Rewrite column `key_name` of a table in place: substring, abs, year / month / day (numbers, from a date text like 2019-10-08), date (YYYY-MM-DD), lower, upper, length, round, cast, and add / subtract / multiply / divide (real division) / integer_divide with a number or another column. Nulls stay null. Returns a table."
	descRetrieve  = "Return the values of columns `key_names` of a table, in the table's order: the answer. `distinct` drops duplicate rows, `limit` keeps the first rows (-1 or absent: all)."
	descUnique    = "Return the distinct values of column `key_name` of a table, as a list (usable as the value of filter_data in / not_in)."
	descCalculate = "Arithmetic on two values (numbers or \"$label$\" of single values): add, subtract, multiply, divide (real division), integer_divide (truncates toward zero), round (left rounded to right digits). A null operand or division by zero gives null. Returns a value."
	descSetOp     = "Combine two results row by row as SQL's set operations do: union (rows of either, once each), union_all (every row of both), intersect (rows of both, once each), except (rows of the left that are not in the right). Both sides need as many columns. Returns a table whose columns are named after the left side's; retrieve, filter, sort or count it like any table."
	descRank      = "Add column rank_value to a table: each row's rank by column `key_name` (with `partition_key_name`, among the rows sharing that column's value), as SQL's RANK() / DENSE_RANK() OVER (...). Nulls rank first in ascending order and last in descending order. The rows keep their order. Returns a table."
	descInit      = "Hidden setup step: join the task's tables into the starting table, whose columns are named <prefix>_<column>. The evaluation harness calls it with the task's meta.init arguments at the start of a session; agents do not."
	descLimit     = "Keep the first `limit` rows of a table or values of a list."
	descUniqueSEL = "Return the distinct values of a list (a column a getter returned), as a list."
)

// InitToolDef is the hidden initialisation tool. databases are the
// database names it accepts.
func InitToolDef(databases []string) *toolenv.Tool {
	on := &toolenv.Schema{Type: "array", Description: "join conditions: [\"alias.column\", \"alias.column\"] pairs (this table's or an earlier one's aliases)",
		Items: &toolenv.Schema{Type: "array", Items: str("alias.column")}}
	table := object(
		"name", str("table name"), true,
		"alias", str("alias the join conditions use (default: the name)"), false,
		"prefix", str("prefix of this table's columns in the starting table (default: the name)"), false,
		"join", enumProp("how the table joins the ones before it", []string{"inner", "left", "cross"}), false,
		"on", on, false,
	)
	db := enumProp("the database", databases)
	return &toolenv.Tool{
		Name:        InitTool,
		Description: descInit,
		Input: object(
			"database", db, true,
			"tables", &toolenv.Schema{Type: "array", Items: table, Description: "the tables, the first one first"}, true,
			"label", labelProp(), false,
		),
		Meta: map[string]string{toolenv.MetaHidden: "true", MetaOp: InitTool, toolenv.MetaLabelArg: LabelArg},
	}
}

// SlotTools returns the SLOT tools (without the hidden init tool); cols
// are the columns key names may take (row_count is added).
func SlotTools(cols []Column) []*toolenv.Tool {
	cols = withRowCount(cols)
	tools := []*toolenv.Tool{
		{Name: "filter_data", Description: descFilter, Input: object(
			"data_source", sourceProp("the table to filter"), true,
			"key_name", columnProp("The column to test", cols), true,
			"condition", enumProp("The test", Conditions), true,
			"value", valueProp(), false,
			"other_key_name", columnProp("Compare with this column of the same row instead of a value (equal_to ... less_than_equal_to only)", cols), false,
			"label", labelProp(), false)},
		{Name: "combine_filters", Description: descCombine, Input: object(
			"data_sources", &toolenv.Schema{Type: "array", Items: str("\"$label$\" of a filter_data result"), MinItems: intp(2), Description: "two or more \"$label$\" of filter_data results on the same data source"}, true,
			"operation", enumProp("or: rows kept by any; and: rows kept by all", []string{"or", "and"}), true,
			"label", labelProp(), false)},
		{Name: "sort_data", Description: descSort, Input: object(
			"data_source", sourceProp("the table to sort"), true,
			"key_name", columnProp("The column to sort by", cols), true,
			"ascending", &toolenv.Schema{Type: "boolean", Description: "true: smallest first; false: largest first"}, true,
			"label", labelProp(), false)},
		{Name: "group_data_by", Description: descGroup, Input: object(
			"data_source", sourceProp("the table (or grouped data) to group"), true,
			"key_name", columnProp("The column to group by", cols), true,
			"label", labelProp(), false)},
		{Name: "aggregate_data", Description: descAggregate, Input: object(
			"data_source", sourceProp("the table or grouped data to aggregate"), true,
			"key_name", columnProp("The column to aggregate (optional for count: counts rows)", cols), false,
			"aggregation_type", enumProp("The aggregate", AggregationTypes), true,
			"distinct", &toolenv.Schema{Type: "boolean", Description: "count / sum / mean distinct values only (default false)"}, false,
			"new_column", newColumnProp(), false,
			"label", labelProp(), false)},
		{Name: "transform_data", Description: descTransform, Input: object(
			"data_source", sourceProp("the table to transform"), true,
			"key_name", columnProp("The column to rewrite", cols), true,
			"operation_type", enumProp("The operation", TransformOperations), true,
			"operation_args", opArgsProp(cols), false,
			"label", labelProp(), false)},
		{Name: "retrieve_data", Description: descRetrieve, Input: object(
			"data_source", sourceProp("the table to read"), true,
			"key_names", &toolenv.Schema{Type: "array", Items: columnProp("A column", cols), MinItems: intp(1), Description: "The columns to return, in order"}, true,
			"distinct", &toolenv.Schema{Type: "boolean", Description: "drop duplicate rows (default false)"}, false,
			"limit", &toolenv.Schema{Type: "integer", Minimum: floatp(-1), Description: "keep the first rows only (-1 or absent: all)"}, false,
			"label", labelProp(), false)},
		{Name: "select_unique_values", Description: descUnique, Input: object(
			"data_source", sourceProp("the table to read"), true,
			"key_name", columnProp("The column", cols), true,
			"label", labelProp(), false)},
		{Name: "set_operation", Description: descSetOp, Input: object(
			"left", setSideProp("left"), true,
			"right", setSideProp("right"), true,
			"operation", enumProp("The set operation", SetOperations), true,
			"label", labelProp(), false)},
		{Name: "rank_data", Description: descRank, Input: object(
			"data_source", sourceProp("the table to rank"), true,
			"key_name", columnProp("The column to rank by", cols), true,
			"ascending", &toolenv.Schema{Type: "boolean", Description: "true: the smallest value has rank 1; false: the largest"}, true,
			"method", enumProp("rank: ties share a rank and the next rank skips (1, 1, 3); dense_rank: no gaps (1, 1, 2)", RankMethods), true,
			"partition_key_name", columnProp("Rank within the groups of rows sharing this column's value (optional)", cols), false,
			"label", labelProp(), false)},
		{Name: "calculate", Description: descCalculate, Input: object(
			"operation", enumProp("The operation", CalculateOperations), true,
			"left", operandProp("left"), true,
			"right", operandProp("right"), true,
			"label", labelProp(), false)},
	}
	for _, t := range tools {
		t.Meta = map[string]string{MetaOp: t.Name, toolenv.MetaLabelArg: LabelArg}
	}
	return tools
}

// SelTools returns the SEL tools: the SLOT operations with their
// categorical arguments bound, and one getter per column of cols.
func SelTools(cols []Column) []*toolenv.Tool {
	cols = withRowCount(cols)
	var tools []*toolenv.Tool
	add := func(name, op, desc string, fixed map[string]any, input *toolenv.Schema) {
		meta := map[string]string{MetaOp: op, toolenv.MetaLabelArg: LabelArg}
		if len(fixed) > 0 {
			raw, _ := json.Marshal(fixed)
			meta[MetaFixed] = string(raw)
		}
		tools = append(tools, &toolenv.Tool{Name: name, Description: desc, Input: input, Meta: meta})
	}
	for _, c := range Conditions {
		props := []any{
			"data_source", sourceProp("the table to filter"), true,
			"key_name", columnProp("The column to test", cols), true,
		}
		switch {
		case compareOps[c] != "":
			props = append(props, "value", valueProp(), false,
				"other_key_name", columnProp("Compare with this column of the same row instead of a value", cols), false)
		case c == "is_null" || c == "is_not_null":
		default:
			props = append(props, "value", valueProp(), true)
		}
		props = append(props, "label", labelProp(), false)
		add("select_data_"+c, "filter_data", fmt.Sprintf("Keep the rows of a table whose column `key_name` %s. Returns a table.", conditionPhrase(c)), map[string]any{"condition": c}, object(props...))
	}
	for _, op := range []string{"or", "and"} {
		add("combine_filters_"+op, "combine_filters", map[string]string{
			"or":  "Keep the rows kept by any of several filter results on the same data source (conditions joined by OR). Returns a table.",
			"and": "Keep the rows kept by all of several filter results on the same data source. Returns a table.",
		}[op], map[string]any{"operation": op}, object(
			"data_sources", &toolenv.Schema{Type: "array", Items: str("\"$label$\" of a filter result"), MinItems: intp(2), Description: "two or more \"$label$\" of filter results on the same data source"}, true,
			"label", labelProp(), false))
	}
	for _, asc := range []bool{true, false} {
		name, desc := "sort_data_ascending", "Sort the rows of a table by column `key_name`, smallest first (nulls first)."
		if !asc {
			name, desc = "sort_data_descending", "Sort the rows of a table by column `key_name`, largest first (nulls last)."
		}
		add(name, "sort_data", desc+" Sorting again sorts by the new key first and keeps the earlier order among ties. Returns a table.", map[string]any{"ascending": asc}, object(
			"data_source", sourceProp("the table to sort"), true,
			"key_name", columnProp("The column to sort by", cols), true,
			"label", labelProp(), false))
	}
	add("group_data_by", "group_data_by", descGroup, nil, object(
		"data_source", sourceProp("the table (or grouped data) to group"), true,
		"key_name", columnProp("The column to group by", cols), true,
		"label", labelProp(), false))
	for _, t := range AggregationTypes {
		variants := []bool{false}
		if t == "count" || t == "sum" || t == "mean" {
			variants = append(variants, true)
		}
		for _, distinct := range variants {
			name, fixed := "aggregate_data_"+t, map[string]any{"aggregation_type": t}
			desc := fmt.Sprintf("Aggregate column `key_name` with %s. On a table the result is a single value (argmin/argmax: a one-row table); on grouped data a table with one row per group whose aggregated column holds the aggregate.", aggregatePhrase(t))
			if distinct {
				name += "_distinct"
				fixed["distinct"] = true
				desc = strings.Replace(desc, " with ", " with the distinct values' ", 1)
			}
			props := []any{
				"data_source", sourceProp("the table or grouped data to aggregate"), true,
				"key_name", columnProp("The column to aggregate"+map[bool]string{true: " (optional: without it, counts rows)", false: ""}[t == "count" && !distinct], cols), t != "count" || distinct,
			}
			if slices.Contains(NewColumnTypes, t) {
				desc += fmt.Sprintf(" With new_column, the aggregate goes to a new column %s instead, leaving key_name as it is.", NewColumnName(t))
				props = append(props, "new_column", newColumnProp(), false)
			}
			add(name, "aggregate_data", desc, fixed, object(append(props, "label", labelProp(), false)...))
		}
	}
	for _, op := range TransformOperations {
		props := []any{
			"data_source", sourceProp("the table to transform"), true,
			"key_name", columnProp("The column to rewrite", cols), true,
		}
		if s := transformArgs(op, cols); s != nil {
			props = append(props, "operation_args", s, op != "round")
		}
		props = append(props, "label", labelProp(), false)
		add("transform_data_"+op, "transform_data", "Rewrite column `key_name` of a table in place: "+transformPhrase(op)+" Nulls stay null. Returns a table.", map[string]any{"operation_type": op}, object(props...))
	}
	for _, op := range CalculateOperations {
		add("calculate_"+op, "calculate", "Arithmetic on two values: "+calculatePhrase(op)+" A null operand or division by zero gives null. Returns a value.", map[string]any{"operation": op}, object(
			"left", operandProp("left"), true,
			"right", operandProp("right"), true,
			"label", labelProp(), false))
	}
	for _, op := range SetOperations {
		add("set_"+op, "set_operation", "Combine two results row by row: "+setPhrase(op)+" Both sides need as many columns. Returns a table whose columns are named after the left side's.", map[string]any{"operation": op}, object(
			"left", setSideProp("left"), true,
			"right", setSideProp("right"), true,
			"label", labelProp(), false))
	}
	for _, m := range RankMethods {
		for _, asc := range []bool{true, false} {
			name, way := m+"_data_descending", "the largest value first"
			if asc {
				name, way = m+"_data_ascending", "the smallest value first"
			}
			gaps := "ties share a rank and the next rank skips (1, 1, 3)"
			if m == "dense_rank" {
				gaps = "ties share a rank, without gaps (1, 1, 2)"
			}
			add(name, "rank_data", fmt.Sprintf("Add column rank_value to a table: each row's rank by column `key_name`, %s (with `partition_key_name`, among the rows sharing that column's value); %s. The rows keep their order. Returns a table.", way, gaps),
				map[string]any{"method": m, "ascending": asc}, object(
					"data_source", sourceProp("the table to rank"), true,
					"key_name", columnProp("The column to rank by", cols), true,
					"partition_key_name", columnProp("Rank within the groups of rows sharing this column's value (optional)", cols), false,
					"label", labelProp(), false))
		}
	}
	add("select_unique_values", "select_unique_values", descUniqueSEL, nil, object(
		"data_source", sourceProp("a list (a column a getter returned)"), true,
		"label", labelProp(), false))
	add("limit_data", "limit_data", descLimit, nil, object(
		"data_source", sourceProp("the table or list"), true,
		"limit", &toolenv.Schema{Type: "integer", Minimum: floatp(0), Description: "how many rows or values to keep"}, true,
		"label", labelProp(), false))
	tools = append(tools, Getters(cols)...)
	return tools
}

// GetterName is the SEL getter of a column: get_<column>, cut to the 64
// bytes a function name may have (ident.Limit: a cut name ends with a
// hash of the whole one).
func GetterName(column string) string { return ident.Limit("get_"+column, 64) }

// Getters returns the SEL getter of each column.
func Getters(cols []Column) []*toolenv.Tool {
	var out []*toolenv.Tool
	for _, c := range cols {
		desc := fmt.Sprintf("Return column %s of a table as a list, in the table's order.", c.Name)
		if c.Description != "" {
			desc += " " + c.Name + ": " + c.Description + "."
		}
		raw, _ := json.Marshal(map[string]any{"key_name": c.Name})
		out = append(out, &toolenv.Tool{Name: GetterName(c.Name), Description: desc,
			Input: object("data_source", sourceProp("the table to read"), true, "label", labelProp(), false),
			Meta:  map[string]string{MetaOp: "get_column", MetaFixed: string(raw), toolenv.MetaLabelArg: LabelArg}})
	}
	return out
}

func conditionPhrase(c string) string {
	switch c {
	case "equal_to":
		return "equals `value` (or column `other_key_name`)"
	case "not_equal_to":
		return "differs from `value` (or column `other_key_name`); nulls are not kept"
	case "greater_than":
		return "is greater than `value` (or column `other_key_name`)"
	case "less_than":
		return "is less than `value` (or column `other_key_name`)"
	case "greater_than_equal_to":
		return "is greater than or equal to `value` (or column `other_key_name`)"
	case "less_than_equal_to":
		return "is less than or equal to `value` (or column `other_key_name`)"
	case "contains":
		return "contains the text `value` (case-sensitive)"
	case "like":
		return "matches the SQL LIKE pattern `value` (% any run, _ one character; case-insensitive for ASCII)"
	case "not_like":
		return "does not match the SQL LIKE pattern `value`"
	case "in":
		return "is one of `value` (a list, or \"$label$\" of a list)"
	case "not_in":
		return "is none of `value` (a list, or \"$label$\" of a list)"
	case "between":
		return "lies between `value` = [low, high], both inclusive"
	case "is_null":
		return "is null"
	case "is_not_null":
		return "is not null"
	}
	return c
}

func aggregatePhrase(t string) string {
	return map[string]string{
		"min": "the minimum", "max": "the maximum", "sum": "the sum", "mean": "the mean", "count": "the count of non-null values",
		"std": "the sample standard deviation", "argmin": "argmin (the row holding the smallest value)", "argmax": "argmax (the row holding the largest value)",
	}[t]
}

func transformPhrase(op string) string {
	switch op {
	case "substring":
		return "keep characters start_index (0-based, inclusive) to end_index (exclusive); a negative index counts from the end (start_index -3: the last three characters)."
	case "year", "month", "day":
		return "the " + op + " of a date text (e.g. 2019-10-08), as a number."
	case "date":
		return "the date part, YYYY-MM-DD."
	case "abs", "lower", "upper", "length":
		return map[string]string{"abs": "absolute value.", "lower": "lower case.", "upper": "upper case.", "length": "length in characters."}[op]
	case "round":
		return "round to operation_args.digits digits (default 0)."
	case "cast":
		return "convert to operation_args.type (integer, real or text)."
	case "divide":
		return "divide by operation_args.value or by column operation_args.other_key_name (real division)."
	case "integer_divide":
		return "divide by operation_args.value or column operation_args.other_key_name, truncating toward zero."
	}
	return op + " operation_args.value or column operation_args.other_key_name."
}

func transformArgs(op string, cols []Column) *toolenv.Schema {
	switch op {
	case "substring":
		return object("start_index", &toolenv.Schema{Type: "integer", Description: "first character, 0-based, inclusive; negative: counted from the end (-1 is the last character)"}, true,
			"end_index", &toolenv.Schema{Type: "integer", Description: "end, 0-based, exclusive (omit to keep the rest); negative (with a negative start_index): counted from the end"}, false)
	case "round":
		return object("digits", &toolenv.Schema{Type: "integer", Description: "digits after the decimal point (default 0)"}, false)
	case "cast":
		return object("type", enumProp("the type to convert to", []string{"integer", "real", "text"}), true)
	case "add", "subtract", "multiply", "divide", "integer_divide":
		return object("value", &toolenv.Schema{Type: "number", Description: "the number to combine each value with"}, false,
			"other_key_name", columnProp("the column to combine each value with (instead of value)", cols), false)
	}
	return nil
}

func setPhrase(op string) string {
	return map[string]string{
		"union": "the rows of either side, each once (SQL UNION).", "union_all": "every row of both sides (SQL UNION ALL).",
		"intersect": "the rows found on both sides, each once (SQL INTERSECT).", "except": "the rows of the left side not found on the right, each once (SQL EXCEPT).",
	}[op]
}

func setSideProp(side string) *toolenv.Schema {
	return &toolenv.Schema{Description: fmt.Sprintf("The %s side: \"$label$\" of rows (retrieve_data), a list or a table; or a list of \"$label$\" of lists getters read from one table, whose values side by side form the rows.", side)}
}

func calculatePhrase(op string) string {
	return map[string]string{
		"add": "left + right.", "subtract": "left - right.", "multiply": "left * right.",
		"divide": "left / right (real division).", "integer_divide": "left / right, truncated toward zero.",
		"round": "left rounded to right digits after the decimal point.",
	}[op]
}

func newColumnProp() *toolenv.Schema {
	return &toolenv.Schema{Type: "boolean", Description: "grouped data only: put the per-group aggregate in a new column named <aggregation_type>_value (max_value, mean_value, ...; min, max, sum, mean, count) and leave key_name as it is, so that one column can have several aggregates (default false: the aggregate replaces key_name's values)"}
}

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

// ForColumns returns copies of tools whose column-name properties
// (key_name, other_key_name, key_names) are narrowed to cols (plus
// row_count), with their descriptions listing those columns: the tools as
// one task shows them. Only the schemas that change are copied.
func ForColumns(tools []*toolenv.Tool, cols []Column) []*toolenv.Tool {
	cols = withRowCount(cols)
	enum, list := columnEnum(cols), columnList(cols)
	out := make([]*toolenv.Tool, len(tools))
	for i, t := range tools {
		c := *t
		c.Input = narrow(t.Input, enum, list, originalNames(t))
		out[i] = &c
	}
	return out
}

// originalNames maps an obfuscated tool's argument names to the original
// ones (meta arg_map); nil for other tools.
func originalNames(t *toolenv.Tool) map[string]string {
	raw := t.Meta[MetaArgMap]
	if raw == "" {
		return nil
	}
	var m map[string]string
	if toolenv.DecodeJSON([]byte(raw), &m) != nil {
		return nil
	}
	return m
}

// narrow returns s with its column properties narrowed, copying s and
// the schemas on the way to them and sharing everything else.
func narrow(s *toolenv.Schema, enum []any, list string, orig map[string]string) *toolenv.Schema {
	if s == nil {
		return nil
	}
	var props map[string]*toolenv.Schema
	for pub, p := range s.Properties {
		name := pub
		if o, ok := orig[pub]; ok {
			name = o
		}
		var np *toolenv.Schema
		switch {
		case columnProps[name] && p.Type == "string" && len(p.Enum) > 0:
			np = narrowed(p, enum, list)
		case name == "key_names" && p.Items != nil && len(p.Items.Enum) > 0:
			cp := *p
			cp.Items = narrowed(p.Items, enum, list)
			np = &cp
		case len(p.Properties) > 0:
			if n := narrow(p, enum, list, nil); n != p {
				np = n
			}
		}
		if np != nil {
			if props == nil {
				props = make(map[string]*toolenv.Schema, len(s.Properties))
				for k, v := range s.Properties {
					props[k] = v
				}
			}
			props[pub] = np
		}
	}
	if props == nil {
		return s
	}
	cp := *s
	cp.Properties = props
	return &cp
}

func narrowed(p *toolenv.Schema, enum []any, list string) *toolenv.Schema {
	cp := *p
	desc := p.Description
	if i := strings.Index(desc, ":\n* "); i >= 0 {
		desc = desc[:i]
	}
	cp.Description = desc + list
	cp.Enum = enum
	return &cp
}

// TaskColumns returns the columns of a task's starting tables (its
// meta.columns).
func TaskColumns(t *toolenv.Task) ([]Column, error) {
	raw, ok := t.Meta["columns"]
	if !ok {
		return nil, fmt.Errorf("task %s has no meta.columns", t.ID)
	}
	var cols []Column
	if err := remarshal(raw, &cols); err != nil {
		return nil, fmt.Errorf("task %s: meta.columns: %w", t.ID, err)
	}
	return cols, nil
}

// TaskTools returns the tools task t offers (t.Tools, in that order) as
// the task shows them: column enums narrowed to its starting table.
func TaskTools(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error) {
	var tools []*toolenv.Tool
	for _, name := range t.Tools {
		tool := c.Tool(name)
		if tool == nil {
			return nil, fmt.Errorf("task %s offers tool %s, which collection %s does not have", t.ID, name, c.Name)
		}
		tools = append(tools, tool)
	}
	cols, err := TaskColumns(t)
	if err != nil {
		return nil, err
	}
	return ForColumns(tools, cols), nil
}

// UnionColumns merges column lists, keeping the first description of
// each name, sorted by name.
func UnionColumns(lists ...[]Column) []Column {
	seen := map[string]bool{}
	var out []Column
	for _, l := range lists {
		for _, c := range l {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// remarshal converts v (decoded JSON) into out through JSON.
func remarshal(v, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return toolenv.DecodeJSON(raw, out)
}
