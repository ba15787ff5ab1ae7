package sqltools_test

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"testing"

	"github.com/toolenv/toolenv/backend/sqltools"
)

// step is one call of a test sequence (after the init call).
type step struct{ tool, args string }

// TestFilterSemantics checks each condition of filter_data against the
// same condition written in SQL and run directly on the database.
func TestFilterSemantics(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{})
	for _, tc := range []struct {
		name  string
		steps []step
		where string // oracle WHERE over heroFrom
		args  []any
	}{
		{"equal_to text", []step{{"filter_data", `{"key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue"}`}}, "T2.colour = ?", []any{"Blue"}},
		{"equal_to is case-sensitive", []step{{"filter_data", `{"key_name": "eye_colour_colour", "condition": "equal_to", "value": "blue"}`}}, "T2.colour = ?", []any{"blue"}},
		{"equal_to numeric text coerced", []step{{"filter_data", `{"key_name": "superhero_height_cm", "condition": "equal_to", "value": "188"}`}}, "T1.height_cm = 188", nil},
		{"not_equal_to drops nulls", []step{{"filter_data", `{"key_name": "superhero_full_name", "condition": "not_equal_to", "value": "-"}`}}, "T1.full_name <> '-'", nil},
		{"greater_than", []step{{"filter_data", `{"key_name": "superhero_height_cm", "condition": "greater_than", "value": 200}`}}, "T1.height_cm > 200", nil},
		{"less_than", []step{{"filter_data", `{"key_name": "superhero_weight_kg", "condition": "less_than", "value": 50}`}}, "T1.weight_kg < 50", nil},
		{"greater_than_equal_to", []step{{"filter_data", `{"key_name": "superhero_height_cm", "condition": "greater_than_equal_to", "value": 201}`}}, "T1.height_cm >= 201", nil},
		{"less_than_equal_to", []step{{"filter_data", `{"key_name": "superhero_height_cm", "condition": "less_than_equal_to", "value": 150.5}`}}, "T1.height_cm <= 150.5", nil},
		{"contains is case-sensitive", []step{{"filter_data", `{"key_name": "superhero_superhero_name", "condition": "contains", "value": "Man"}`}}, "instr(T1.superhero_name, 'Man') > 0", nil},
		{"like is case-insensitive", []step{{"filter_data", `{"key_name": "superhero_superhero_name", "condition": "like", "value": "spider%"}`}}, "T1.superhero_name LIKE 'Spider%'", nil},
		{"not_like", []step{{"filter_data", `{"key_name": "superhero_superhero_name", "condition": "not_like", "value": "%man%"}`}}, "T1.superhero_name NOT LIKE '%man%'", nil},
		{"in list", []step{{"filter_data", `{"key_name": "superhero_superhero_name", "condition": "in", "value": ["Hawkman", "Karate Kid", "Speedy", "Nobody"]}`}}, "T1.superhero_name IN ('Hawkman', 'Karate Kid', 'Speedy')", nil},
		{"not_in list", []step{{"filter_data", `{"key_name": "eye_colour_colour", "condition": "not_in", "value": ["Blue", "Brown"]}`}}, "T2.colour NOT IN ('Blue', 'Brown')", nil},
		{"between is inclusive", []step{{"filter_data", `{"key_name": "superhero_height_cm", "condition": "between", "value": [170, 190]}`}}, "T1.height_cm BETWEEN 170 AND 190", nil},
		{"is_null", []step{{"filter_data", `{"key_name": "superhero_full_name", "condition": "is_null"}`}}, "T1.full_name IS NULL", nil},
		{"is_not_null", []step{{"filter_data", `{"key_name": "publisher_publisher_name", "condition": "is_not_null"}`}}, "T3.publisher_name IS NOT NULL", nil},
		{"other column of the row", []step{{"filter_data", `{"key_name": "superhero_eye_colour_id", "condition": "equal_to", "other_key_name": "superhero_hair_colour_id"}`}}, "T1.eye_colour_id = T1.hair_colour_id", nil},
		{"value from an earlier aggregate", []step{
			{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "aggregation_type": "mean", "label": "AVG"}`},
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "condition": "greater_than", "value": "$AVG$"}`}},
			"T1.height_cm > (SELECT AVG(T1.height_cm) FROM " + heroFrom + ")", nil},
		{"in an earlier list", []step{
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "condition": "greater_than", "value": 250, "label": "TALL"}`},
			{"select_unique_values", `{"data_source": "$TALL$", "key_name": "eye_colour_colour", "label": "COLOURS"}`},
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "condition": "in", "value": "$COLOURS$"}`}},
			"T2.colour IN (SELECT T2.colour FROM " + heroFrom + " WHERE T1.height_cm > 250)", nil},
		{"filters chain (AND)", []step{
			{"filter_data", `{"key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue", "label": "A"}`},
			{"filter_data", `{"data_source": "$A$", "key_name": "superhero_height_cm", "condition": "greater_than", "value": 190}`}},
			"T2.colour = 'Blue' AND T1.height_cm > 190", nil},
		{"combine or", []step{
			{"filter_data", `{"key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue", "label": "A"}`},
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "condition": "greater_than", "value": 200, "label": "B"}`},
			{"combine_filters", `{"data_sources": ["$A$", "$B$"], "operation": "or", "label": "OR"}`}},
			"T2.colour = 'Blue' OR T1.height_cm > 200", nil},
		{"combine and after a common filter", []step{
			{"filter_data", `{"key_name": "publisher_publisher_name", "condition": "equal_to", "value": "Marvel Comics", "label": "M"}`},
			{"filter_data", `{"data_source": "$M$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue", "label": "A"}`},
			{"filter_data", `{"data_source": "$M$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Green", "label": "B"}`},
			{"combine_filters", `{"data_sources": ["$A$", "$B$"], "operation": "or"}`}},
			"T3.publisher_name = 'Marvel Comics' AND (T2.colour = 'Blue' OR T2.colour = 'Green')", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.newSession()
			h.ok("initialize_active_data", heroInit)
			var body map[string]any
			for _, s := range tc.steps {
				args := s.args
				if s.tool == "filter_data" && !containsKey(args, "data_source") {
					args = `{"data_source": "$starting_table$", ` + args[1:]
				}
				body = h.ok(s.tool, args)
			}
			want := oracle(t, "superhero", "SELECT COUNT(*) FROM "+heroFrom+" WHERE "+tc.where, tc.args...)[0][0]
			if num(body["row_count"]) != num(want) {
				t.Fatalf("row_count = %v, want %v (oracle: %s)", body["row_count"], want, tc.where)
			}
		})
	}
}

func containsKey(jsonArgs, key string) bool {
	return len(jsonArgs) > 0 && (contains(jsonArgs, `"`+key+`"`))
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestShapeSemantics checks sorting, grouping, aggregation, transforms,
// retrieval and arithmetic against SQL on the database.
func TestShapeSemantics(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{})
	for _, tc := range []struct {
		name   string
		steps  []step
		oracle string
		// field of the last body to compare: "rows", "values" or "value".
		field string
		// unordered compares rows as sets (no ORDER BY decides them).
		unordered bool
	}{
		{"sort desc then retrieve limit (ties keep earlier order)", []step{
			{"sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "ascending": true, "label": "S1"}`},
			{"sort_data", `{"data_source": "$S1$", "key_name": "superhero_height_cm", "ascending": false, "label": "S2"}`},
			{"retrieve_data", `{"data_source": "$S2$", "key_names": ["superhero_superhero_name", "superhero_height_cm"], "limit": 8}`}},
			"SELECT T1.superhero_name, T1.height_cm FROM " + heroFrom + " ORDER BY T1.height_cm DESC, T1.superhero_name LIMIT 8", "rows", false},
		{"ascending puts nulls first", []step{
			{"sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "ascending": true, "label": "S"}`},
			{"retrieve_data", `{"data_source": "$S$", "key_names": ["superhero_full_name"], "limit": 3}`}},
			"SELECT T1.full_name FROM " + heroFrom + " ORDER BY T1.full_name LIMIT 3", "rows", false},
		{"filter after a limit keeps the limited rows", []step{
			{"sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "ascending": false, "label": "S"}`},
			{"retrieve_data", `{"data_source": "$S$", "key_names": ["superhero_id"], "limit": 20, "label": "TOP"}`},
			{"filter_data", `{"data_source": "$S$", "key_name": "superhero_id", "condition": "in", "value": "$TOP$", "label": "F"}`},
			{"filter_data", `{"data_source": "$F$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Yellow", "label": "G"}`},
			{"retrieve_data", `{"data_source": "$G$", "key_names": ["superhero_superhero_name"]}`}},
			"SELECT T1.superhero_name FROM " + heroFrom + " WHERE T1.id IN (SELECT T1.id FROM " + heroFrom + " ORDER BY T1.height_cm DESC LIMIT 20) AND T2.colour = 'Yellow' ORDER BY T1.height_cm DESC", "rows", false},
		{"distinct rows", []step{{"retrieve_data", `{"data_source": "$starting_table$", "key_names": ["eye_colour_colour"], "distinct": true}`}},
			"SELECT DISTINCT T2.colour FROM " + heroFrom, "rows", true},
		{"count rows", []step{{"aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count"}`}},
			"SELECT COUNT(*) FROM " + heroFrom, "value", false},
		{"count skips nulls", []step{{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "aggregation_type": "count"}`}},
			"SELECT COUNT(T1.full_name) FROM " + heroFrom, "value", false},
		{"count distinct", []step{{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "aggregation_type": "count", "distinct": true}`}},
			"SELECT COUNT(DISTINCT T2.colour) FROM " + heroFrom, "value", false},
		{"sum", []step{{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_weight_kg", "aggregation_type": "sum"}`}},
			"SELECT SUM(T1.weight_kg) FROM " + heroFrom, "value", false},
		{"mean", []step{{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "aggregation_type": "mean"}`}},
			"SELECT AVG(T1.height_cm) FROM " + heroFrom, "value", false},
		{"min and max", []step{{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "aggregation_type": "max"}`}},
			"SELECT MAX(T1.superhero_name) FROM " + heroFrom, "value", false},
		{"sum of nothing is null", []step{
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Plaid", "label": "NONE"}`},
			{"aggregate_data", `{"data_source": "$NONE$", "key_name": "superhero_weight_kg", "aggregation_type": "sum"}`}},
			"SELECT SUM(T1.weight_kg) FROM " + heroFrom + " WHERE T2.colour = 'Plaid'", "value", false},
		{"argmax is the row", []step{
			{"aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_weight_kg", "aggregation_type": "argmax", "label": "HEAVY"}`},
			{"retrieve_data", `{"data_source": "$HEAVY$", "key_names": ["superhero_superhero_name"]}`}},
			"SELECT T1.superhero_name FROM " + heroFrom + " ORDER BY T1.weight_kg DESC LIMIT 1", "rows", false},
		{"per-group count and mean (unordered)", []step{
			{"group_data_by", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "label": "G"}`},
			{"aggregate_data", `{"data_source": "$G$", "aggregation_type": "count", "label": "C"}`},
			{"aggregate_data", `{"data_source": "$C$", "key_name": "superhero_height_cm", "aggregation_type": "mean", "label": "M"}`},
			{"retrieve_data", `{"data_source": "$M$", "key_names": ["eye_colour_colour", "row_count", "superhero_height_cm"]}`}},
			"SELECT T2.colour, COUNT(*), AVG(T1.height_cm) FROM " + heroFrom + " GROUP BY T2.colour", "rows", true},
		{"HAVING as a filter of the per-group table", []step{
			{"group_data_by", `{"data_source": "$starting_table$", "key_name": "publisher_publisher_name", "label": "G"}`},
			{"aggregate_data", `{"data_source": "$G$", "key_name": "superhero_id", "aggregation_type": "count", "label": "C"}`},
			{"filter_data", `{"data_source": "$C$", "key_name": "superhero_id", "condition": "greater_than", "value": 20, "label": "F"}`},
			{"sort_data", `{"data_source": "$F$", "key_name": "superhero_id", "ascending": false, "label": "S"}`},
			{"retrieve_data", `{"data_source": "$S$", "key_names": ["publisher_publisher_name", "superhero_id"]}`}},
			"SELECT T3.publisher_name, COUNT(T1.id) FROM " + heroFrom + " GROUP BY T3.publisher_name HAVING COUNT(T1.id) > 20 ORDER BY COUNT(T1.id) DESC", "rows", false},
		{"two aggregates of one column: new_column adds one", []step{
			{"group_data_by", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "label": "G"}`},
			{"aggregate_data", `{"data_source": "$G$", "key_name": "superhero_height_cm", "aggregation_type": "mean", "label": "M"}`},
			{"aggregate_data", `{"data_source": "$M$", "key_name": "superhero_height_cm", "aggregation_type": "max", "new_column": true, "label": "X"}`},
			{"aggregate_data", `{"data_source": "$X$", "key_name": "superhero_height_cm", "aggregation_type": "count", "new_column": true, "label": "C"}`},
			{"filter_data", `{"data_source": "$C$", "key_name": "count_value", "condition": "greater_than", "value": 3, "label": "F"}`},
			{"sort_data", `{"data_source": "$F$", "key_name": "max_value", "ascending": false, "label": "S"}`},
			{"retrieve_data", `{"data_source": "$S$", "key_names": ["superhero_height_cm", "max_value", "eye_colour_colour", "count_value"]}`}},
			"SELECT AVG(T1.height_cm), MAX(T1.height_cm), T2.colour, COUNT(T1.height_cm) FROM " + heroFrom + " GROUP BY T2.colour HAVING COUNT(T1.height_cm) > 3 ORDER BY MAX(T1.height_cm) DESC, T2.colour", "rows", false},
		{"rank, then a filter on the rank keeps the ranks", []step{
			{"filter_data", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue", "label": "F"}`},
			{"rank_data", `{"data_source": "$F$", "key_name": "superhero_height_cm", "ascending": false, "method": "rank", "label": "R"}`},
			{"filter_data", `{"data_source": "$R$", "key_name": "rank_value", "condition": "less_than_equal_to", "value": 5, "label": "T"}`},
			{"retrieve_data", `{"data_source": "$T$", "key_names": ["superhero_superhero_name", "superhero_height_cm", "rank_value"]}`}},
			"SELECT n, h, r FROM (SELECT T1.superhero_name AS n, T1.height_cm AS h, RANK() OVER (ORDER BY T1.height_cm DESC) AS r FROM " + heroFrom + " WHERE T2.colour = 'Blue') WHERE r <= 5", "rows", true},
		{"dense_rank within partitions of a per-group table", []step{
			{"group_data_by", `{"data_source": "$starting_table$", "key_name": "publisher_publisher_name", "label": "G1"}`},
			{"group_data_by", `{"data_source": "$G1$", "key_name": "eye_colour_colour", "label": "G"}`},
			{"aggregate_data", `{"data_source": "$G$", "aggregation_type": "count", "label": "C"}`},
			{"rank_data", `{"data_source": "$C$", "key_name": "row_count", "ascending": true, "method": "dense_rank", "partition_key_name": "publisher_publisher_name", "label": "R"}`},
			{"retrieve_data", `{"data_source": "$R$", "key_names": ["publisher_publisher_name", "eye_colour_colour", "row_count", "rank_value"]}`}},
			"SELECT T3.publisher_name, T2.colour, COUNT(*), DENSE_RANK() OVER (PARTITION BY T3.publisher_name ORDER BY COUNT(*)) FROM " + heroFrom + " GROUP BY T3.publisher_name, T2.colour", "rows", true},
		{"group by two keys", []step{
			{"group_data_by", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "label": "G1"}`},
			{"group_data_by", `{"data_source": "$G1$", "key_name": "superhero_gender_id", "label": "G2"}`},
			{"aggregate_data", `{"data_source": "$G2$", "aggregation_type": "count", "label": "C"}`},
			{"retrieve_data", `{"data_source": "$C$", "key_names": ["eye_colour_colour", "superhero_gender_id", "row_count"]}`}},
			"SELECT T2.colour, T1.gender_id, COUNT(*) FROM " + heroFrom + " GROUP BY T2.colour, T1.gender_id", "rows", true},
		{"substring (0-based, end exclusive)", []step{
			{"sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "ascending": true, "label": "S"}`},
			{"transform_data", `{"data_source": "$S$", "key_name": "superhero_superhero_name", "operation_type": "substring", "operation_args": {"start_index": 1, "end_index": 4}, "label": "T"}`},
			{"retrieve_data", `{"data_source": "$T$", "key_names": ["superhero_superhero_name"], "limit": 5}`}},
			"SELECT substr(T1.superhero_name, 2, 3) FROM " + heroFrom + " ORDER BY T1.id LIMIT 5", "rows", false},
		{"upper, then a filter on it", []step{
			{"transform_data", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "operation_type": "upper", "label": "T"}`},
			{"filter_data", `{"data_source": "$T$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "BLUE", "label": "F"}`},
			{"aggregate_data", `{"data_source": "$F$", "aggregation_type": "count"}`}},
			"SELECT COUNT(*) FROM " + heroFrom + " WHERE upper(T2.colour) = 'BLUE'", "value", false},
		{"divide by another column is real division", []step{
			{"transform_data", `{"data_source": "$starting_table$", "key_name": "superhero_weight_kg", "operation_type": "divide", "operation_args": {"other_key_name": "superhero_height_cm"}, "label": "T"}`},
			{"filter_data", `{"data_source": "$T$", "key_name": "superhero_weight_kg", "condition": "greater_than", "value": 0.6, "label": "F"}`},
			{"aggregate_data", `{"data_source": "$F$", "aggregation_type": "count"}`}},
			"SELECT COUNT(*) FROM " + heroFrom + " WHERE CAST(T1.weight_kg AS REAL) / T1.height_cm > 0.6", "value", false},
		{"integer_divide truncates", []step{
			{"transform_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "operation_type": "integer_divide", "operation_args": {"value": 7}, "label": "T"}`},
			{"retrieve_data", `{"data_source": "$T$", "key_names": ["superhero_id", "superhero_height_cm"]}`}},
			"SELECT T1.id, T1.height_cm / 7 FROM " + heroFrom, "rows", true},
		{"multiply keeps integers", []step{
			{"transform_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "operation_type": "multiply", "operation_args": {"value": 100}, "label": "T"}`},
			{"aggregate_data", `{"data_source": "$T$", "key_name": "superhero_height_cm", "aggregation_type": "sum"}`}},
			"SELECT SUM(T1.height_cm * 100) FROM " + heroFrom, "value", false},
		{"calculate divide is real", []step{
			{"aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count", "label": "N"}`},
			{"calculate", `{"operation": "divide", "left": 7, "right": "$N$"}`}},
			"SELECT 7.0 / COUNT(*) FROM " + heroFrom, "value", false},
		{"calculate integer_divide", []step{
			{"aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count", "label": "N"}`},
			{"calculate", `{"operation": "integer_divide", "left": "$N$", "right": 7}`}},
			"SELECT COUNT(*) / 7 FROM " + heroFrom, "value", false},
		{"division by zero is null", []step{{"calculate", `{"operation": "divide", "left": 1, "right": 0}`}},
			"SELECT NULL", "value", false},
		{"select_unique_values", []step{{"select_unique_values", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour"}`}},
			"SELECT DISTINCT T2.colour FROM " + heroFrom, "values", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.newSession()
			h.ok("initialize_active_data", heroInit)
			var body map[string]any
			for _, s := range tc.steps {
				body = h.ok(s.tool, s.args)
			}
			want := oracle(t, "superhero", tc.oracle)
			if tc.unordered {
				sortRows(want)
				if rows, ok := body["rows"].([]any); ok {
					sortAny(rows)
				}
				if vals, ok := body["values"].([]any); ok {
					sortAny(vals)
				}
			}
			switch tc.field {
			case "value":
				if !sameValue(body["value"], want[0][0]) {
					t.Fatalf("value = %v, want %v", body["value"], want[0][0])
				}
			case "values":
				got := body["values"].([]any)
				if tc.unordered {
					col := make([]any, len(want))
					for i, r := range want {
						col[i] = r[0]
					}
					sortAny(col)
					for i := range want {
						want[i] = []any{col[i]}
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d values, want %d", len(got), len(want))
				}
				for i := range got {
					if !sameValue(got[i], want[i][0]) {
						t.Fatalf("value %d = %v, want %v", i, got[i], want[i][0])
					}
				}
			default:
				got := body["rows"].([]any)
				if len(got) != len(want) {
					t.Fatalf("%d rows, want %d", len(got), len(want))
				}
				for i := range got {
					row := got[i].([]any)
					for j := range row {
						if !sameValue(row[j], want[i][j]) {
							t.Fatalf("row %d = %v, want %v", i, row, want[i])
						}
					}
				}
			}
		})
	}
}

func sameValue(a, b any) bool {
	fa, oka := num(a).(float64)
	fb, okb := num(b).(float64)
	if oka && okb {
		return math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Abs(fb))
	}
	return reflect.DeepEqual(a, b) || fmt.Sprint(a) == fmt.Sprint(b) && a != nil && b != nil
}

// TestStd checks the sample standard deviation against one computed in
// Go from the values.
func TestStd(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{})
	h.ok("initialize_active_data", heroInit)
	body := h.ok("aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "aggregation_type": "std"}`)
	rows := oracle(t, "superhero", "SELECT T1.height_cm FROM "+heroFrom+" WHERE T1.height_cm IS NOT NULL")
	var sum, sq float64
	for _, r := range rows {
		x := num(r[0]).(float64)
		sum += x
		sq += x * x
	}
	n := float64(len(rows))
	want := math.Sqrt((sq - sum*sum/n) / (n - 1))
	if got := num(body["value"]).(float64); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("std = %v, want %v", got, want)
	}
}

// sortRows and sortAny order rows by their printed form, for set
// comparisons.
func sortRows(rows [][]any) {
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(numRow(rows[i])) < fmt.Sprint(numRow(rows[j])) })
}

func sortAny(rows []any) {
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(numAny(rows[i])) < fmt.Sprint(numAny(rows[j])) })
}

func numRow(r []any) []any {
	out := make([]any, len(r))
	for i, v := range r {
		out[i] = num(v)
	}
	return out
}

func numAny(v any) any {
	if r, ok := v.([]any); ok {
		return numRow(r)
	}
	return num(v)
}
