package sqlrest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/internal/shareddata"
)

// writableREST is a REST collection over student_club with its table
// endpoints and the hidden world tools.
func writableREST(t testing.TB) (*toolenv.Collection, *sqlrest.Backend) {
	t.Helper()
	path := shareddata.Require(t, "bird", "dev_databases", "student_club", "student_club.sqlite")
	db, err := rodb.Open(context.Background(), "student_club", path, rodb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := world.ReadSchema(context.Background(), db)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	tools := append(sqlrest.TableToolDefs(map[string]*world.Schema{"student_club": s}, nil), sqltools.WorldToolDefs([]string{"student_club"}, nil)...)
	for _, tl := range tools {
		if tl.Meta[sqltools.MetaOp] != "" && tl.Meta[sqlrest.MetaDatabase] == "" {
			tl.Meta[sqlrest.MetaDatabase] = "student_club"
		}
	}
	tools = append(tools, restTool("get_member_by_last_name", `SELECT member_id, position FROM member WHERE last_name = :last_name ORDER BY member_id`, [2]string{"last_name", "string"}))
	cfg, _ := json.Marshal(sqlrest.Config{Databases: map[string]string{"student_club": path}})
	c := toolenv.NewCollection("club-rest", "nl2sql-rest", tools)
	c.Backend = toolenv.BackendSpec{Type: sqlrest.BackendType, Config: cfg}
	b, err := sqlrest.Open(context.Background(), c, sqlrest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return c, b
}

func TestRESTWritesInASession(t *testing.T) {
	c, b := writableREST(t)
	ctx := context.Background()
	call := func(session, tool, args string) *toolenv.Result {
		t.Helper()
		var m map[string]any
		if err := toolenv.DecodeJSON([]byte(args), &m); err != nil {
			t.Fatal(err)
		}
		tl := c.Tool(tool)
		if tl == nil {
			t.Fatalf("no tool %s", tool)
		}
		return b.Invoke(ctx, &toolenv.Call{Tool: tl, Collection: c, Args: m, Session: session})
	}
	for _, name := range []string{"create_member", "get_member_by_key", "update_member", "delete_member", "delete_attendance", "create_attendance"} {
		if c.Tool(name) == nil {
			t.Fatalf("no table endpoint %s", name)
		}
	}
	if b := c.Tool("update_member").Binding; b.Method != "PATCH" || b.Path != "/v1/bird/student_club/member/{member_id}" {
		t.Fatalf("update_member binding %+v", b)
	}
	// Outside a session: refused, the database untouched.
	r := call("", "update_member", `{"member_id": "rec1x5zBFIqoOuPW8", "position": "President"}`)
	if r.OK() || !strings.Contains(r.Hint, "POST /sessions") {
		t.Fatalf("a write without a session: %s %s (%s)", r.Status, r.Error, r.Hint)
	}
	r = call("s1", "update_member", `{"member_id": "rec1x5zBFIqoOuPW8", "position": "President"}`)
	if !r.OK() {
		t.Fatalf("update: %s %s %+v", r.Status, r.Error, r.Problems)
	}
	if r := call("s1", "get_member_by_last_name", `{"last_name": "Sanders"}`); !strings.Contains(string(r.Body), "President") {
		t.Fatalf("the session's read does not see its write: %s", r.Body)
	}
	if r := call("s2", "get_member_by_last_name", `{"last_name": "Sanders"}`); strings.Contains(string(r.Body), "President") {
		t.Fatalf("another session sees the write: %s", r.Body)
	}
	if r := call("", "get_member_by_key", `{"member_id": "rec1x5zBFIqoOuPW8"}`); strings.Contains(string(r.Body), "President") {
		t.Fatalf("a read without a session sees the write: %s", r.Body)
	}
	// Rules, as problems naming the parameter and the rule.
	r = call("s1", "create_attendance", `{"link_to_event": "nope", "link_to_member": "rec1x5zBFIqoOuPW8"}`)
	if r.Status != toolenv.StatusInvalidArguments || len(r.Problems) == 0 || r.Problems[0].Code != "foreign_key" || r.Problems[0].Param != "link_to_event" {
		t.Fatalf("create with a dangling reference: %s %s %+v", r.Status, r.Error, r.Problems)
	}
	r = call("s1", "delete_member", `{"member_id": "rec1x5zBFIqoOuPW8"}`)
	if r.Status != toolenv.StatusInvalidArguments || r.Problems[0].Code != "foreign_key" {
		t.Fatalf("deleting a referenced member: %s %s %+v", r.Status, r.Error, r.Problems)
	}
	r = call("s1", "delete_member", `{"member_id": "nobody"}`)
	if r.Status != toolenv.StatusNotFound {
		t.Fatalf("deleting nobody: %s %s", r.Status, r.Error)
	}
	r = call("s1", "update_member", `{"member_id": "rec1x5zBFIqoOuPW8", "zip": "north"}`)
	if r.Status != toolenv.StatusInvalidArguments || r.Problems[0].Param != "zip" {
		t.Fatalf("a wrong type: %s %s %+v", r.Status, r.Error, r.Problems)
	}
	ins := call("s1", endstate.InspectTool, `{}`)
	var rep endstate.Report
	if err := toolenv.DecodeJSON(ins.Body, &rep); err != nil || rep.Changes.Rows() != 1 {
		t.Fatalf("inspect: %s %v", ins.Body, err)
	}
	// A rollback to a checkpoint taken before the write undoes it (an
	// episode's cut step).
	if n := b.CheckpointSession("s2"); n != 0 {
		t.Fatalf("a new session's checkpoint: %d calls", n)
	}
	if r := call("s2", "update_member", `{"member_id": "rec1x5zBFIqoOuPW8", "position": "President"}`); !r.OK() {
		t.Fatalf("update in s2: %s %s", r.Status, r.Error)
	}
	if err := b.RollbackSession(ctx, "s2", 0); err != nil {
		t.Fatal(err)
	}
	if r := call("s2", "get_member_by_key", `{"member_id": "rec1x5zBFIqoOuPW8"}`); strings.Contains(string(r.Body), "President") {
		t.Fatalf("rolled back, the session still sees the write: %s", r.Body)
	}
	n := b.CheckpointSession("s1")
	if r := call("s1", "update_member", `{"member_id": "rec1x5zBFIqoOuPW8", "zip": 12345}`); !r.OK() {
		t.Fatalf("update in s1: %s %s", r.Status, r.Error)
	}
	if err := b.RollbackSession(ctx, "s1", n); err != nil {
		t.Fatal(err)
	}
	ins = call("s1", endstate.InspectTool, `{}`)
	var back endstate.Report
	if err := toolenv.DecodeJSON(ins.Body, &back); err != nil || back.Changes.Hash() != rep.Changes.Hash() {
		t.Fatalf("rolled back to before the second write, s1's world is %s (%v), want its state after the first", ins.Body, err)
	}
}
