package sqlrest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/internal/shareddata"
)

func restTool(name, sql string, params ...[2]string) *toolenv.Tool {
	in := toolenv.ObjectSchema()
	for _, p := range params {
		in.SetProp(p[0], &toolenv.Schema{Type: p[1]})
		in.Required = append(in.Required, p[0])
	}
	return &toolenv.Tool{Name: name, Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/v1/bird/student_club/" + name},
		Meta: map[string]string{sqlrest.MetaSQL: sql, sqlrest.MetaDatabase: "student_club"}}
}

func collection(t testing.TB, dbPath string) *toolenv.Collection {
	cfg, _ := json.Marshal(sqlrest.Config{Databases: map[string]string{"student_club": dbPath}})
	c := toolenv.NewCollection("bird-rest", "nl2sql-rest", []*toolenv.Tool{
		restTool("get_city_by_state", `SELECT city FROM zip_code WHERE state = :state AND type = :type ORDER BY city`, [2]string{"state", "string"}, [2]string{"type", "string"}),
		restTool("get_member_count_by_zip", `SELECT COUNT(*) FROM member WHERE zip > :min_zip`, [2]string{"min_zip", "integer"}),
		restTool("get_expenses_over", `SELECT expense_description FROM expense WHERE cost > :min_cost`, [2]string{"min_cost", "number"}),
		restTool("get_all_zip_codes", `SELECT zip_code FROM zip_code`),
		restTool("get_slow", `SELECT COUNT(*) FROM zip_code AS a, zip_code AS b WHERE a.city = :city OR b.city = :city`, [2]string{"city", "string"}),
	})
	c.Backend = toolenv.BackendSpec{Type: sqlrest.BackendType, Config: cfg}
	return c
}

func TestREST(t *testing.T) {
	path := shareddata.Require(t, "bird", "dev_databases", "student_club", "student_club.sqlite")
	c := collection(t, path)
	b, err := sqlrest.Open(context.Background(), c, sqlrest.Options{MaxRows: 1000, CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, tc := range []struct {
		name   string
		tool   string
		args   string
		status toolenv.Status
		want   string // in the body on success, else in the error or problems
	}{
		{"ok", "get_city_by_state", `{"state": "Puerto Rico", "type": "PO Box"}`, toolenv.StatusOK, `"columns":["city"]`},
		{"integer", "get_member_count_by_zip", `{"min_zip": 50000}`, toolenv.StatusOK, `"row_count":1`},
		{"integer given as text", "get_member_count_by_zip", `{"min_zip": "50000"}`, toolenv.StatusOK, `"row_count":1`},
		{"number", "get_expenses_over", `{"min_cost": 50.5}`, toolenv.StatusOK, `"columns":["expense_description"]`},
		{"injection is a value", "get_city_by_state", `{"state": "x' OR '1'='1", "type": "'; DROP TABLE zip_code; --"}`, toolenv.StatusOK, `"row_count":0`},
		{"percent flood", "get_city_by_state", `{"state": "` + strings.Repeat("%", 5000) + `", "type": "Standard"}`, toolenv.StatusOK, `"row_count":0`},
		{"missing", "get_city_by_state", `{"state": "Ohio"}`, toolenv.StatusInvalidArguments, "type"},
		{"unknown", "get_city_by_state", `{"state": "Ohio", "type": "Standard", "county": "x"}`, toolenv.StatusInvalidArguments, "county"},
		{"wrong type", "get_member_count_by_zip", `{"min_zip": "many"}`, toolenv.StatusInvalidArguments, "integer"},
		{"huge string", "get_city_by_state", `{"state": "` + strings.Repeat("a", 20000) + `", "type": "x"}`, toolenv.StatusInvalidArguments, "characters"},
		{"too many rows", "get_all_zip_codes", `{}`, toolenv.StatusTooLarge, "1000"},
		{"timeout", "get_slow", `{"city": "Springfield"}`, toolenv.StatusTimeout, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args map[string]any
			if err := toolenv.DecodeJSON([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool(tc.tool), Args: args})
			if r.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", r.Status, r.Error, tc.status)
			}
			text := string(r.Body) + r.Error + r.Hint
			for _, p := range r.Problems {
				text += p.Param + p.Message
			}
			if !strings.Contains(text, tc.want) {
				t.Fatalf("%q does not contain %q", text, tc.want)
			}
			if r.Source != toolenv.SourceLive {
				t.Fatalf("source %q", r.Source)
			}
		})
	}
	// The database is intact.
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool("get_member_count_by_zip"), Args: map[string]any{"min_zip": json.Number("0")}})
	if !strings.Contains(string(r.Body), `[[33]]`) {
		t.Fatalf("members after the hostile calls: %s", r.Body)
	}
}

func TestUnavailableDatabase(t *testing.T) {
	c := collection(t, filepath.Join(t.TempDir(), "missing.sqlite"))
	b, err := sqlrest.Open(context.Background(), c, sqlrest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool("get_member_count_by_zip"), Args: map[string]any{"min_zip": json.Number("1")}})
	if r.Status != toolenv.StatusUnavailable || !strings.Contains(r.Error, "missing.sqlite") {
		t.Fatalf("%s: %s", r.Status, r.Error)
	}
}
