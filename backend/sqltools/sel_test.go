package sqltools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

// TestSelTools checks that SEL tools run their operation with the bound
// arguments, and that the getters, limit_data and select_unique_values
// compose as SQL's SELECT DISTINCT ... LIMIT does.
func TestSelTools(t *testing.T) {
	h := newHarness(t, "sel", sqltools.Options{})
	h.ok("initialize_active_data", heroInit)
	h.ok("select_data_greater_than", `{"data_source": "$starting_table$", "key_name": "superhero_height_cm", "value": 190, "label": "F"}`)
	h.ok("sort_data_descending", `{"data_source": "$F$", "key_name": "eye_colour_colour", "label": "S"}`)
	h.ok("get_eye_colour_colour", `{"data_source": "$S$", "label": "G"}`)
	h.ok("select_unique_values", `{"data_source": "$G$", "label": "U"}`)
	body := h.ok("limit_data", `{"data_source": "$U$", "limit": 3}`)
	want := oracle(t, "superhero", "SELECT DISTINCT T2.colour FROM "+heroFrom+" WHERE T1.height_cm > 190 ORDER BY T2.colour DESC LIMIT 3")
	got := body["values"].([]any)
	if body["type"] != "list" || len(got) != len(want) {
		t.Fatalf("body %v, want %v", body, want)
	}
	for i := range got {
		if got[i] != want[i][0] {
			t.Fatalf("value %d = %v, want %v", i, got[i], want[i][0])
		}
	}
	// A bound argument cannot be overridden.
	r := h.call("select_data_equal_to", `{"data_source": "$starting_table$", "key_name": "superhero_id", "value": 1, "condition": "greater_than"}`)
	if r.Status != toolenv.StatusInvalidArguments || !strings.Contains(r.Error, "condition") {
		t.Fatalf("%s %s", r.Status, r.Error)
	}
	// Every SEL tool's meta names an operation the backend has.
	for _, tool := range h.c.Tools {
		if tool.Meta[sqltools.MetaOp] == "" {
			t.Errorf("tool %s has no meta.op", tool.Name)
		}
	}
}

// TestObfuscatedArguments checks that a tool whose arguments were renamed
// (meta arg_map) runs as the original.
func TestObfuscatedArguments(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{})
	orig := h.c.Tool("filter_data")
	ob := orig.Clone()
	ob.Name = "FUNC_3"
	in := toolenv.ObjectSchema()
	amap := map[string]string{}
	for i, n := range orig.Input.Names() {
		pub := n
		if n != "label" {
			pub = "ARG_" + string(rune('0'+i))
			amap[pub] = n
		}
		in.SetProp(pub, orig.Input.Prop(n))
	}
	ob.Input = in
	raw, _ := json.Marshal(amap)
	ob.Meta[sqltools.MetaArgMap] = string(raw)
	c := toolenv.NewCollection("ob", "nl2sql-slot", append([]*toolenv.Tool{ob}, sqltools.InitToolDef([]string{"superhero"})))
	c.Backend = h.c.Backend
	b, err := sqltools.Open(context.Background(), c, sqltools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var initArgs map[string]any
	toolenv.DecodeJSON([]byte(heroInit), &initArgs)
	if r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool(sqltools.InitTool), Args: initArgs, Session: "o"}); !r.OK() {
		t.Fatal(r.Error)
	}
	args := map[string]any{"ARG_0": "$starting_table$", "ARG_1": "eye_colour_colour", "ARG_2": "equal_to", "ARG_3": "Blue"}
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool("FUNC_3"), Args: args, Session: "o"})
	if !r.OK() {
		t.Fatalf("%s %s", r.Status, r.Error)
	}
	var body map[string]any
	toolenv.DecodeJSON(r.Body, &body)
	want := oracle(t, "superhero", "SELECT COUNT(*) FROM "+heroFrom+" WHERE T2.colour = 'Blue'")[0][0]
	if num(body["row_count"]) != num(want) {
		t.Fatalf("row_count %v, want %v", body["row_count"], want)
	}
	// The original argument names are not accepted any more.
	args = map[string]any{"data_source": "$starting_table$", "key_name": "eye_colour_colour", "condition": "is_null"}
	if r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool("FUNC_3"), Args: args, Session: "o"}); r.Status != toolenv.StatusInvalidArguments {
		t.Fatalf("original names: %s", r.Status)
	}
}

func TestForColumns(t *testing.T) {
	cols := []sqltools.Column{{Name: "member_first_name", Type: "string", Description: "member's first name"}}
	tools := sqltools.ForColumns(sqltools.SlotTools([]sqltools.Column{{Name: "a"}, {Name: "b"}}), cols)
	for _, tool := range tools {
		for _, p := range []string{"key_name", "other_key_name"} {
			s := tool.Input.Prop(p)
			if s == nil {
				continue
			}
			added := sqltools.AddedColumns()
			if len(s.Enum) != 1+len(added) || s.Enum[0] != "member_first_name" || s.Enum[1] != "row_count" || s.Enum[2] != added[1].Name {
				t.Fatalf("%s.%s enum %v", tool.Name, p, s.Enum)
			}
			if !strings.Contains(s.Description, "member's first name") || strings.Contains(s.Description, "`a`") {
				t.Fatalf("%s.%s description %q", tool.Name, p, s.Description)
			}
		}
	}
	if orig := sqltools.SlotTools([]sqltools.Column{{Name: "a"}})[0]; len(orig.Input.Prop("key_name").Enum) != 1+len(sqltools.AddedColumns()) {
		t.Fatal("narrowing changed the original tool")
	}
}
