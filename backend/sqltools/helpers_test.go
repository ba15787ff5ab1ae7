package sqltools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/internal/shareddata"
)

func dbPath(t testing.TB, name string) string {
	return shareddata.Require(t, "bird", "dev_databases", name, name+".sqlite")
}

// testCollection returns a collection of the given flavor over both BIRD
// databases. Tool enums are not involved: the backend checks columns
// against the session's data itself.
func testCollection(t testing.TB, flavor string) *toolenv.Collection {
	cfg, _ := json.Marshal(sqltools.Config{Flavor: flavor, Databases: map[string]string{
		"superhero":    dbPath(t, "superhero"),
		"student_club": dbPath(t, "student_club"),
	}})
	cols := []sqltools.Column{
		{Name: "superhero_superhero_name", Type: "string"}, {Name: "superhero_height_cm", Type: "integer"},
		{Name: "eye_colour_colour", Type: "string"},
	}
	tools := sqltools.SlotTools(cols)
	if flavor == sqltools.FlavorSel {
		tools = sqltools.SelTools(cols)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"student_club", "superhero"}))
	c := toolenv.NewCollection("bird-"+flavor, "nl2sql-"+flavor, tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	return c
}

var sessionSeq atomic.Int64

type harness struct {
	t       testing.TB
	b       *sqltools.Backend
	c       *toolenv.Collection
	session string
}

func newHarness(t testing.TB, flavor string, opt sqltools.Options) *harness {
	t.Helper()
	c := testCollection(t, flavor)
	b, err := sqltools.Open(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	h := &harness{t: t, b: b, c: c}
	h.newSession()
	return h
}

func (h *harness) newSession() { h.session = fmt.Sprintf("s-%d", sessionSeq.Add(1)) }

// call invokes a tool with args given as JSON.
func (h *harness) call(tool, argsJSON string) *toolenv.Result {
	h.t.Helper()
	var args map[string]any
	if err := toolenv.DecodeJSON([]byte(argsJSON), &args); err != nil {
		h.t.Fatalf("bad test args %s: %v", argsJSON, err)
	}
	tl := h.c.Tool(tool)
	if tl == nil {
		tl = &toolenv.Tool{Name: tool}
	}
	return h.b.Invoke(context.Background(), &toolenv.Call{Tool: tl, Collection: h.c, Args: args, Session: h.session})
}

func (h *harness) ok(tool, argsJSON string) map[string]any {
	h.t.Helper()
	r := h.call(tool, argsJSON)
	if !r.OK() {
		h.t.Fatalf("%s %s: %s: %s (hint: %s) %+v", tool, argsJSON, r.Status, r.Error, r.Hint, r.Problems)
	}
	if r.Source != toolenv.SourceLive {
		h.t.Fatalf("source %q, want live", r.Source)
	}
	var body map[string]any
	if err := toolenv.DecodeJSON(r.Body, &body); err != nil {
		h.t.Fatal(err)
	}
	return body
}

// oracle runs SQL directly on a database, independently of the tools.
func oracle(t testing.TB, db, q string, args ...any) [][]any {
	t.Helper()
	d, err := rodb.Open(context.Background(), db, dbPath(t, db), rodb.Options{InMemoryMaxBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, err := d.Query(context.Background(), q, args, 0)
	if err != nil {
		t.Fatalf("oracle %s: %v", q, err)
	}
	return r.Rows
}

// num converts a decoded JSON number (or nil) to float64 for comparison.
func num(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case int64:
		return float64(x)
	}
	return v
}

const heroInit = `{"database": "superhero", "tables": [
  {"name": "superhero", "alias": "T1"},
  {"name": "colour", "alias": "T2", "prefix": "eye_colour", "on": [["T1.eye_colour_id", "T2.id"]]},
  {"name": "publisher", "alias": "T3", "join": "left", "on": [["T1.publisher_id", "T3.id"]]}]}`

// heroFrom is the FROM clause equal to heroInit, for oracle queries.
const heroFrom = `superhero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id LEFT JOIN publisher AS T3 ON T1.publisher_id = T3.id`
