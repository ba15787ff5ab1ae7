package sqltools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

func TestErrors(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{MaxRows: 100})
	for _, tc := range []struct {
		name   string
		init   bool // initialise the session first
		tool   string
		args   string
		status toolenv.Status
		want   string // in the error, hint or a problem
	}{
		{"no init yet", false, "filter_data", `{"data_source": "$starting_table$", "key_name": "x", "condition": "is_null"}`, toolenv.StatusNotFound, "initialize_active_data"},
		{"unknown label", true, "filter_data", `{"data_source": "$NOPE$", "key_name": "superhero_id", "condition": "is_null"}`, toolenv.StatusNotFound, "starting_table"},
		{"wrong column lists the columns", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_nam", "condition": "is_null"}`, toolenv.StatusInvalidArguments, "superhero_superhero_name"},
		{"unknown condition", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "condition": "approximately"}`, toolenv.StatusInvalidArguments, "between"},
		{"null value", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "condition": "equal_to", "value": null}`, toolenv.StatusInvalidArguments, "is_null"},
		{"missing value", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "condition": "equal_to"}`, toolenv.StatusInvalidArguments, "value"},
		{"wrong type", true, "sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "ascending": "sometimes"}`, toolenv.StatusInvalidArguments, "true or false"},
		{"unknown argument", true, "sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "ascending": true, "colour": 1}`, toolenv.StatusInvalidArguments, "colour"},
		{"value list too long", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "condition": "in", "value": [` + strings.Repeat("1,", 1500) + `1]}`, toolenv.StatusInvalidArguments, "at most 1000"},
		{"huge string", true, "filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "condition": "equal_to", "value": "` + strings.Repeat("x", 20000) + `"}`, toolenv.StatusInvalidArguments, "characters"},
		{"bad label", true, "sort_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "ascending": true, "label": "x; DROP TABLE superhero"}`, toolenv.StatusInvalidArguments, "label"},
		{"new_column on a table", true, "aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "aggregation_type": "max", "new_column": true}`, toolenv.StatusInvalidArguments, "grouped data only"},
		{"new_column without a key", true, "aggregate_data", `{"data_source": "$G$", "aggregation_type": "count", "new_column": true}`, toolenv.StatusInvalidArguments, "min, max, sum, mean, count"},
		{"aggregate needs a column", true, "aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "sum"}`, toolenv.StatusInvalidArguments, "key_name"},
		{"grouped data is not a table", true, "sort_data", `{"data_source": "$G$", "key_name": "superhero_id", "ascending": true}`, toolenv.StatusInvalidArguments, "grouped"},
		{"combine unrelated filters", true, "combine_filters", `{"data_sources": ["$F1$", "$starting_table$"], "operation": "or"}`, toolenv.StatusInvalidArguments, "filter_data"},
		{"substring without start", true, "transform_data", `{"data_source": "$starting_table$", "key_name": "superhero_full_name", "operation_type": "substring", "operation_args": {}}`, toolenv.StatusInvalidArguments, "start_index"},
		{"calculate with text", true, "calculate", `{"operation": "add", "left": "two", "right": 2}`, toolenv.StatusInvalidArguments, "number"},
		{"unknown table", true, "initialize_active_data", `{"database": "superhero", "tables": [{"name": "heroes"}]}`, toolenv.StatusInvalidArguments, "superpower"},
		{"unknown database", true, "initialize_active_data", `{"database": "north_wind", "tables": [{"name": "x"}]}`, toolenv.StatusInvalidArguments, "student_club"},
		{"join on an unknown alias", true, "initialize_active_data", `{"database": "superhero", "tables": [{"name": "superhero", "alias": "T1"}, {"name": "colour", "alias": "T2", "on": [["T9.id", "T2.id"]]}]}`, toolenv.StatusInvalidArguments, "alias"},
		{"identifier injection in a table name", true, "initialize_active_data", `{"database": "superhero", "tables": [{"name": "superhero\"; DROP TABLE superhero; --"}]}`, toolenv.StatusInvalidArguments, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.newSession()
			if tc.init {
				h.ok("initialize_active_data", heroInit)
				h.ok("group_data_by", `{"data_source": "$starting_table$", "key_name": "superhero_gender_id", "label": "G"}`)
				h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_id", "condition": "less_than", "value": 10, "label": "F1"}`)
			}
			r := h.call(tc.tool, tc.args)
			if r.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", r.Status, r.Error, tc.status)
			}
			text := r.Error + " " + r.Hint
			for _, p := range r.Problems {
				text += " " + p.Param + " " + p.Message + " " + p.Expected
			}
			if !strings.Contains(text, tc.want) {
				t.Fatalf("%q does not mention %q", text, tc.want)
			}
			if r.Source != toolenv.SourceLive {
				t.Fatalf("source %q", r.Source)
			}
		})
	}
}

func TestNoSession(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{})
	h.session = ""
	r := h.call("initialize_active_data", heroInit)
	if r.Status != toolenv.StatusInvalidArguments || !strings.Contains(r.Hint, "Toolenv-Session") {
		t.Fatalf("%s: %s (%s)", r.Status, r.Error, r.Hint)
	}
}

// TestHostileValues checks that hostile values are only values: the
// database is unchanged, and each call ends in an answer or an argument
// error, never in the call timeout (which a runaway LIKE pattern would
// meet). No wall-clock bound is asserted: tests never do.
func TestHostileValues(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{CallTimeout: 5 * time.Second})
	before := oracle(t, "superhero", "SELECT COUNT(*) FROM superhero")[0][0]
	for _, v := range []string{
		`'; DROP TABLE superhero; --`,
		`" OR 1=1 --`,
		`Robin') UNION SELECT sql FROM sqlite_master --`,
		strings.Repeat("%", 5000),
		strings.Repeat("%_", 2000) + "x",
		"\x00\xff nul and bad utf-8",
	} {
		for _, cond := range []string{"equal_to", "like", "contains", "not_like"} {
			h.newSession()
			h.ok("initialize_active_data", heroInit)
			args := map[string]any{"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "condition": cond, "value": v}
			r := h.b.Invoke(context.Background(), &toolenv.Call{Tool: h.c.Tool("filter_data"), Collection: h.c, Args: args, Session: h.session})
			if r.Status != toolenv.StatusOK && r.Status != toolenv.StatusInvalidArguments {
				t.Fatalf("%s %.20q: %s %s", cond, v, r.Status, r.Error)
			}
		}
	}
	if after := oracle(t, "superhero", "SELECT COUNT(*) FROM superhero")[0][0]; after != before {
		t.Fatalf("superhero rows %v → %v", before, after)
	}
}

// TestTimeout: a call that would run for hours is interrupted at its
// budget. The timeout status proves the interruption ran (the go test
// timeout would catch a hang); no wall-clock bound is asserted.
func TestTimeout(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{CallTimeout: 100 * time.Millisecond})
	// A cross join of zip_code with itself has 1.75 billion rows.
	r := h.call("initialize_active_data", `{"database": "student_club", "tables": [{"name": "zip_code", "alias": "A", "prefix": "a"}, {"name": "zip_code", "alias": "B", "prefix": "b", "join": "cross"}]}`)
	if r.Status != toolenv.StatusTimeout {
		t.Fatalf("status %s (%s), want timeout", r.Status, r.Error)
	}
	if !strings.Contains(r.Error, "per-call time limit") {
		t.Errorf("error %q should name the per-call time limit", r.Error)
	}
}
