package sqltools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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

// TestRollbackWorld: a session rolled back to a checkpoint (what makes
// an episode's step atomic) loses the world's writes and the labels of
// the calls after it, whether the world was started before the
// checkpoint (the rows are reverted) or after it (the world is gone,
// and the next write starts a fresh one from the untouched base).
func TestRollbackWorld(t *testing.T) {
	h := newWritable(t, sqltools.FlavorSlot)
	ctx := context.Background()
	n := h.b.CheckpointSession(h.session)
	h.ok(endstate.InitTool, `{}`)
	h.ok(sqltools.OpDelete, `{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`)
	if err := h.b.RollbackSession(ctx, h.session, n); err != nil {
		t.Fatal(err)
	}
	h.ok(endstate.InitTool, `{}`)
	if o := h.ok(endstate.InspectTool, `{}`); len(o["changes"].(map[string]any)["tables"].([]any)) != 0 {
		t.Fatalf("rolled back past the world's start and started again, the world holds changes: %v", o)
	}
	h.ok(sqltools.InitTool, memberInit)
	n = h.b.CheckpointSession(h.session)
	if n != 2 {
		t.Fatalf("checkpoint at %d calls, want 2", n)
	}
	before := h.ok(endstate.InspectTool, `{}`)["hash"]
	h.ok(sqltools.OpDelete, `{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`)
	h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "member_first_name", "condition": "equal_to", "value": "Angela", "label": "LATER"}`)
	h.ok(sqltools.OpUpdate, `{"table": "member", "keys": ["rec1x5zBFIqoOuPW8"], "values": {"phone": "555"}}`)
	if got := h.ok(endstate.InspectTool, `{}`)["hash"]; got == before {
		t.Fatal("the writes changed nothing")
	}
	if err := h.b.RollbackSession(ctx, h.session, n); err != nil {
		t.Fatal(err)
	}
	if got := h.ok(endstate.InspectTool, `{}`)["hash"]; got != before {
		t.Fatalf("after rolling back, the world's hash is %v, want %v", got, before)
	}
	if r := h.call("retrieve_data", `{"data_source": "$LATER$", "key_names": ["member_first_name"]}`); r.Status != toolenv.StatusNotFound {
		t.Fatalf("a label made after the checkpoint survives the rollback: %s", r.Status)
	}
	// The rows are back: deleting the same attendance again succeeds.
	h.ok(sqltools.OpDelete, `{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`)
}

// TestUsersSQLStaysInItsWorld: the SQL a user or an agent hands a world
// (an initial state's script, an end-state check) reaches no file and
// no other world: ATTACH, VACUUM INTO, PRAGMA and transaction
// statements are refused with the reason, and the base is unchanged.
func TestUsersSQLStaysInItsWorld(t *testing.T) {
	h := newWritable(t, sqltools.FlavorSlot)
	dir := t.TempDir()
	file := func(name string) string { return strings.ReplaceAll(filepath.Join(dir, name), `\`, `/`) }
	h.ok(endstate.InitTool, `{}`)
	fresh := h.ok(endstate.InspectTool, `{}`)["hash"]
	members := func() int {
		h.newSession()
		h.ok(sqltools.InitTool, memberInit)
		body := h.ok("aggregate_data", `{"data_source": "$starting_table$", "key_name": "member_member_id", "aggregation_type": "count"}`)
		n, _ := body["value"].(json.Number).Int64()
		return int(n)
	}
	before := members()
	if before == 0 {
		t.Fatal("no members to protect")
	}
	scripts := []string{
		"COMMIT; VACUUM INTO '" + file("vacuum.db") + "'; BEGIN;",
		"ATTACH '" + file("attach.db") + "' AS y; CREATE TABLE y.t(a);",
		"UPDATE member SET position = 'x'; PRAGMA foreign_keys = OFF",
		"/* a comment; */ DELETE FROM member WHERE 'a;b' = 'c'; detach y",
		"SELECT $a(';PRAGMA)",
	}
	for _, s := range scripts {
		h.newSession()
		arg, _ := json.Marshal(map[string]string{"sql": s})
		r := h.call(endstate.InitTool, string(arg))
		if r.Status != toolenv.StatusInvalidArguments || !strings.Contains(r.Error, "only changes rows") && !strings.Contains(r.Error, "parameter") {
			t.Errorf("initial state %q: %s %s, want it refused as more than row changes", s, r.Status, r.Error)
		}
	}
	checks := []string{
		"PRAGMA query_only = OFF; DELETE FROM member; SELECT 1",
		"ATTACH '" + file("check.db") + "' AS x; CREATE TABLE x.t(a); SELECT 1",
		"VACUUM INTO '" + file("check-vacuum.db") + "'",
		"SELECT 1; SELECT 2",
	}
	for _, changed := range []bool{false, true} {
		for _, q := range checks {
			h.newSession()
			h.ok(endstate.InitTool, `{}`)
			if changed {
				h.ok(sqltools.OpDelete, `{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`)
			}
			arg, _ := json.Marshal(map[string]any{"checks": []any{map[string]string{"name": "c", "sql": q}}})
			body := h.ok(endstate.InspectTool, string(arg))
			out := body["checks"].([]any)[0].(map[string]any)
			if e, _ := out["error"].(string); !strings.Contains(e, "a check's SQL must be one query") && !strings.Contains(e, "must be a query") {
				t.Errorf("check %q (world changed: %v): error %q, want it refused as not one query", q, changed, e)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("users' SQL wrote %d files: %v", len(ents), ents)
	}
	if after := members(); after != before {
		t.Errorf("the base holds %d members after the attempts, %d before", after, before)
	}
	h.newSession()
	h.ok(endstate.InitTool, `{}`)
	if got := h.ok(endstate.InspectTool, `{}`)["hash"]; got != fresh {
		t.Errorf("a fresh world hashes %v, want %v", got, fresh)
	}
	// Row statements cannot write the file's pages either (defensive
	// connections).
	h.newSession()
	r := h.call(endstate.InitTool, `{"sql": "INSERT INTO sqlite_dbpage VALUES (1, zeroblob(4096))"}`)
	if r.Status != toolenv.StatusInvalidArguments || !strings.Contains(r.Error, "SQL failed") {
		t.Errorf("a write to sqlite_dbpage: %s %s, want it refused", r.Status, r.Error)
	}
	// A script of row changes with semicolons in strings and comments runs.
	h.newSession()
	h.ok(endstate.InitTool, `{"sql": "-- restock; then\nUPDATE member SET position = 'a;b' WHERE member_id = 'rec1x5zBFIqoOuPW8'; /* ; */"}`)
	body := h.ok(endstate.InspectTool, `{"checks": [{"name": "p", "sql": "SELECT position FROM member WHERE member_id = 'rec1x5zBFIqoOuPW8'"}]}`)
	if rows, _ := json.Marshal(body["checks"].([]any)[0].(map[string]any)["rows"]); string(rows) != `[["a;b"]]` {
		t.Errorf("after a script of row changes the row reads %s, want [[\"a;b\"]]", rows)
	}
}
