package sqltools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	_ "modernc.org/sqlite"
)

// makeDB writes a SQLite file from statements and returns its path.
func makeDB(t testing.TB, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "adv.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// advHarness is a harness over one constructed database "adv".
func advHarness(t testing.TB, flavor string, cols []sqltools.Column, opt sqltools.Options, stmts ...string) *harness {
	t.Helper()
	cfg, _ := json.Marshal(sqltools.Config{Flavor: flavor, Databases: map[string]string{"adv": makeDB(t, stmts...)}})
	tools := sqltools.SlotTools(cols)
	if flavor == sqltools.FlavorSel {
		tools = sqltools.SelTools(cols)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"adv"}))
	c := toolenv.NewCollection("adv-"+flavor, "nl2sql-"+flavor, tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	b, err := sqltools.Open(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	h := &harness{t: t, b: b, c: c}
	h.newSession()
	return h
}

// Columns that differ in the database but not as ASCII identifiers, and
// a prefix plus column that equals another prefix plus column, stay
// distinct columns of the starting table (numbered), where the init used
// to fail with "two columns would be named".
func TestInitColumnNamesStayDistinct(t *testing.T) {
	h := advHarness(t, sqltools.FlavorSlot, nil, sqltools.Options{},
		`CREATE TABLE "order" (id INTEGER PRIMARY KEY, "e-mail" TEXT, e_mail TEXT, item_id INTEGER, "größe" TEXT, "GRÖSSE" TEXT)`,
		`CREATE TABLE order_item (id INTEGER PRIMARY KEY, order_id INTEGER)`,
		`INSERT INTO "order" VALUES (1, 'a@x', 'b@x', 7, 'L', 'XL')`,
		`INSERT INTO order_item VALUES (7, 1)`)
	body := h.ok(sqltools.InitTool, `{"database": "adv", "tables": [{"name": "order", "alias": "T1"},
		{"name": "order_item", "alias": "T2", "on": [["T1.id", "T2.order_id"]]}]}`)
	got := fmt.Sprint(body["columns"])
	want := "[order_id order_e_mail order_e_mail_2 order_item_id order_groesse order_GROESSE_2 order_item_id_2 order_item_order_id]"
	if got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	rows := h.ok("retrieve_data", `{"data_source": "$starting_table$", "key_names": ["order_e_mail_2", "order_item_id_2", "order_GROESSE_2"]}`)
	if fmt.Sprint(rows["rows"]) != "[[b@x 7 XL]]" {
		t.Errorf("rows %v", rows["rows"])
	}
	names := sqltools.StartColumnNames([]sqltools.StartTable{{Prefix: "order", Columns: []string{"id", "e-mail", "e_mail", "item_id", "größe", "GRÖSSE"}},
		{Prefix: "order_item", Columns: []string{"id", "order_id"}}})
	if fmt.Sprint(names) != "[[order_id order_e_mail order_e_mail_2 order_item_id order_groesse order_GROESSE_2] [order_item_id_2 order_item_order_id]]" {
		t.Errorf("StartColumnNames: %v", names)
	}
}
