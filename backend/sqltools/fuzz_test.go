package sqltools_test

import (
	"context"
	"fmt"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

// FuzzInvoke calls every SLOT tool with arbitrary JSON arguments in a
// session holding a starting table and some results: every call must
// come back with a Result (no panic, no hang), a failure must carry an
// error, and the database must be unchanged.
func FuzzInvoke(f *testing.F) {
	seeds := []string{
		`{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "condition": "between", "value": [1, "$AVG$"]}`,
		`{"data_source": "$F$", "key_name": "eye_colour_colour", "condition": "in", "value": "$U$", "label": "X"}`,
		`{"data_sources": ["$F$", "$F$"], "operation": "and"}`,
		`{"data_source": "$G$", "key_name": "superhero_weight_kg", "aggregation_type": "std", "distinct": true}`,
		`{"data_source": "$starting_table$", "key_name": "superhero_full_name", "operation_type": "substring", "operation_args": {"start_index": 3, "end_index": 1}}`,
		`{"data_source": "$starting_table$", "key_names": ["superhero_id", "superhero_id"], "distinct": true, "limit": -1}`,
		`{"operation": "integer_divide", "left": "$AVG$", "right": 0}`,
		`{"database": "superhero", "tables": [{"name": "colour", "alias": "a"}, {"name": "colour", "alias": "b", "prefix": "c2", "join": "left", "on": [["a.id", "b.id"]]}], "label": "starting_table"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	h := newHarness(f, "slot", sqltools.Options{MaxRows: 50})
	tools := []string{"filter_data", "combine_filters", "sort_data", "group_data_by", "aggregate_data", "transform_data", "retrieve_data", "select_unique_values", "calculate", sqltools.InitTool}
	n := 0
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		var args map[string]any
		if toolenv.DecodeJSON([]byte(raw), &args) != nil {
			return
		}
		n++
		h.t = t
		h.session = fmt.Sprintf("fuzz-%d", n)
		h.ok("initialize_active_data", heroInit)
		h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "condition": "greater_than", "value": 180, "label": "F"}`)
		h.ok("aggregate_data", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "aggregation_type": "mean", "label": "AVG"}`)
		h.ok("select_unique_values", `{"data_source": "$F$", "key_name": "eye_colour_colour", "label": "U"}`)
		h.ok("group_data_by", `{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "label": "G"}`)
		name := tools[int(which)%len(tools)]
		r := h.b.Invoke(context.Background(), &toolenv.Call{Tool: &toolenv.Tool{Name: name}, Args: args, Session: h.session})
		if r == nil {
			t.Fatal("nil result")
		}
		if !r.OK() && r.Error == "" {
			t.Fatalf("%s %s: failure %s without an error message", name, raw, r.Status)
		}
		if r.Status == toolenv.StatusInternal {
			t.Fatalf("%s %s: internal error %s", name, raw, r.Error)
		}
		h.b.DropSession(h.session)
	})
}
