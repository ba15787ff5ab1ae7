package sqltools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
)

// writableCollection is a SLOT or SEL collection over student_club with
// its write tools and the hidden world tools.
func writableCollection(t testing.TB, flavor string) *toolenv.Collection {
	t.Helper()
	path := dbPath(t, "student_club")
	db, err := rodb.Open(context.Background(), "student_club", path, rodb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := world.ReadSchema(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(sqltools.Config{Flavor: flavor, Databases: map[string]string{"student_club": path}})
	cols := []sqltools.Column{{Name: "member_member_id", Type: "string"}, {Name: "member_first_name", Type: "string"},
		{Name: "member_last_name", Type: "string"}, {Name: "member_position", Type: "string"}}
	tools := sqltools.SlotTools(cols)
	if flavor == sqltools.FlavorSel {
		tools = sqltools.SelTools(cols)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"student_club"}))
	tools = append(tools, sqltools.WorldToolDefs([]string{"student_club"}, nil)...)
	tools = append(tools, sqltools.WriteToolDefs(flavor, map[string]*world.Schema{"student_club": s}, nil)...)
	c := toolenv.NewCollection("club-"+flavor, "nl2sql-"+flavor, tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	return c
}

func newWritable(t testing.TB, flavor string) *harness {
	t.Helper()
	c := writableCollection(t, flavor)
	b, err := sqltools.Open(context.Background(), c, sqltools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	h := &harness{t: t, b: b, c: c}
	h.newSession()
	return h
}

const memberInit = `{"database": "student_club", "tables": [{"name": "member", "alias": "T1"}]}`

func TestSLOTWritesInTheSessionsWorld(t *testing.T) {
	h := newWritable(t, sqltools.FlavorSlot)
	other := h.session
	h.ok(sqltools.InitTool, memberInit)
	h.newSession()
	h.ok(endstate.InitTool, `{"database": "student_club"}`)
	h.ok(sqltools.InitTool, memberInit)
	h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "member_last_name", "condition": "equal_to", "value": "Sanders", "label": "FOUND"}`)
	h.ok("retrieve_data", `{"data_source": "$FOUND$", "key_names": ["member_member_id"], "label": "KEYS"}`)
	body := h.ok(sqltools.OpUpdate, `{"table": "member", "keys": "$KEYS$", "values": {"position": "Treasurer"}, "label": "UPDATED"}`)
	if body["row_count"] != json.Number("1") || body["operation"] != "update" {
		t.Fatalf("update body %v", body)
	}
	// Reads of the session see the write; the label is a view.
	got := h.ok("retrieve_data", `{"data_source": "$FOUND$", "key_names": ["member_position"]}`)
	if rows := got["rows"].([]any); len(rows) != 1 || rows[0].([]any)[0] != "Treasurer" {
		t.Fatalf("the session reads %v after its write", got["rows"])
	}
	// An insert referring to a found value, and a delete.
	h.ok("retrieve_data", `{"data_source": "$FOUND$", "key_names": ["member_member_id"], "label": "ID"}`)
	h.ok(sqltools.OpInsert, `{"table": "income", "rows": [{"income_id": "rec-new", "date_received": "2020-01-01", "amount": 50, "source": "Dues", "notes": null, "link_to_member": "$ID$"}]}`)
	// A write that breaks a rule is a failed call, nothing written.
	r := h.call(sqltools.OpInsert, `{"table": "income", "rows": [{"income_id": "rec-bad", "date_received": "2020-01-01", "amount": 5, "source": "Dues", "link_to_member": "nobody"}]}`)
	if r.Status != toolenv.StatusInvalidArguments || len(r.Problems) == 0 || r.Problems[0].Code != "foreign_key" || r.Problems[0].Param != "link_to_member" {
		t.Fatalf("a write to nobody: %s %s %+v", r.Status, r.Error, r.Problems)
	}
	ins := h.ok(endstate.InspectTool, `{"checks": [{"name": "dues", "sql": "SELECT amount FROM income WHERE income_id = 'rec-new'"}]}`)
	raw, _ := json.Marshal(ins)
	var rep endstate.Report
	if err := toolenv.DecodeJSON(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Changes.Rows() != 2 || rep.Changes.Table("member") == nil || rep.Changes.Table("income") == nil || len(rep.Checks) != 1 || len(rep.Checks[0].Rows) != 1 {
		t.Fatalf("inspect: %s", raw)
	}
	// The other session and the database saw nothing.
	h.session = other
	o := h.ok(endstate.InspectTool, `{}`)
	if ch, _ := o["changes"].(map[string]any); len(ch["tables"].([]any)) != 0 {
		t.Fatalf("another session's world changed: %v", o)
	}
	if n := oracle(t, "student_club", `SELECT COUNT(*) FROM member WHERE position = 'Treasurer' AND last_name = 'Sanders'`); n[0][0] != int64(0) {
		t.Fatal("the database changed")
	}
}

func TestSELWriteTools(t *testing.T) {
	h := newWritable(t, sqltools.FlavorSel)
	if h.c.Tool("update_member") == nil || h.c.Tool("insert_attendance") == nil || h.c.Tool("delete_event") == nil {
		var names []string
		for _, tl := range h.c.Tools {
			names = append(names, tl.Name)
		}
		t.Fatalf("SEL write tools missing: %s", strings.Join(names, " "))
	}
	h.ok(sqltools.InitTool, memberInit)
	h.ok("update_member", `{"keys": [{"member_id": "rec1x5zBFIqoOuPW8"}], "values": {"phone": "555"}}`)
	r := h.call("update_member", `{"keys": ["rec1x5zBFIqoOuPW8"], "values": {"member_id": "x"}}`)
	if r.OK() {
		t.Fatal("a SEL update set the primary key")
	}
	r = h.call("update_member", `{"keys": ["rec1x5zBFIqoOuPW8"], "values": {"phone": "1"}, "table": "event"}`)
	if r.OK() {
		t.Fatal("a SEL tool took its bound table again")
	}
}

func TestRewind(t *testing.T) {
	h := newWritable(t, sqltools.FlavorSlot)
	ctx := context.Background()
	h.ok(endstate.InitTool, `{}`)
	h.ok(sqltools.InitTool, memberInit)
	mark, err := h.b.SessionCalls(ctx, h.session)
	if err != nil || mark != 2 {
		t.Fatalf("calls %d, %v", mark, err)
	}
	before := h.ok(endstate.InspectTool, `{}`)["hash"]
	h.ok(sqltools.OpDelete, `{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`)
	h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "member_first_name", "condition": "equal_to", "value": "Angela", "label": "LATER"}`)
	if err := h.b.Rewind(ctx, h.session, mark); err != nil {
		t.Fatal(err)
	}
	if got := h.ok(endstate.InspectTool, `{}`)["hash"]; got != before {
		t.Fatalf("after rewinding, the world's hash is %v, want %v", got, before)
	}
	if r := h.call("retrieve_data", `{"data_source": "$LATER$", "key_names": ["member_first_name"]}`); r.Status != toolenv.StatusNotFound {
		t.Fatalf("a label made after the mark survives the rewind: %s", r.Status)
	}
	h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "member_first_name", "condition": "equal_to", "value": "Angela", "label": "AGAIN"}`)
	if err := h.b.Rewind(ctx, h.session, 99); err == nil {
		t.Fatal("rewound past the calls held")
	}
}
