package decompose_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/endpoint"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

func TestSlotShapes(t *testing.T) {
	cat := catalogs(t)["superhero"]
	for _, tc := range []struct {
		name  string
		sql   string
		calls string // the gold call names, space-separated
	}{
		{"filter and select", "SELECT T1.superhero_name FROM superhero AS T1 WHERE T1.height_cm > 200", "filter_data retrieve_data"},
		{"OR", "SELECT superhero_name FROM superhero WHERE height_cm > 200 OR weight_kg > 300", "filter_data filter_data combine_filters retrieve_data"},
		{"NOT BETWEEN", "SELECT superhero_name FROM superhero WHERE height_cm NOT BETWEEN 100 AND 200", "filter_data filter_data combine_filters retrieve_data"},
		{"multi-key ORDER BY sorts the last key first", "SELECT superhero_name FROM superhero ORDER BY height_cm DESC, superhero_name LIMIT 3", "sort_data sort_data retrieve_data"},
		{"percentage", "SELECT CAST(SUM(CASE WHEN height_cm > 200 THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(id) FROM superhero", "filter_data aggregate_data calculate aggregate_data calculate"},
		{"scalar subquery", "SELECT superhero_name FROM superhero WHERE height_cm > (SELECT AVG(height_cm) FROM superhero)", "aggregate_data filter_data retrieve_data"},
		{"IN subquery", "SELECT superhero_name FROM superhero WHERE eye_colour_id IN (SELECT id FROM colour WHERE colour = 'Blue')", "filter_data retrieve_data filter_data retrieve_data"},
		{"group, having, order by aggregate", "SELECT T2.colour FROM superhero AS T1 JOIN colour AS T2 ON T1.eye_colour_id = T2.id GROUP BY T2.colour HAVING COUNT(T1.id) > 5 ORDER BY COUNT(T1.id) DESC LIMIT 1", "group_data_by aggregate_data filter_data sort_data retrieve_data"},
		{"bare column beside MAX: the row argmax returns", "SELECT MAX(height_cm), superhero_name FROM superhero WHERE weight_kg > 100", "filter_data aggregate_data retrieve_data"},
		{"bare columns beside one MAX and other aggregates", "SELECT superhero_name, MAX(height_cm), AVG(weight_kg), COUNT(*) FROM superhero", "aggregate_data retrieve_data aggregate_data aggregate_data"},
		{"RANK() OVER: rank_data", "SELECT superhero_name, height_cm, RANK() OVER (ORDER BY height_cm DESC) AS r FROM superhero WHERE weight_kg > 100", "filter_data rank_data retrieve_data"},
		{"DENSE_RANK() OVER a per-group count, ordered by it", "SELECT eye_colour_id, COUNT(id), DENSE_RANK() OVER (PARTITION BY gender_id ORDER BY COUNT(id) DESC) AS r FROM superhero GROUP BY eye_colour_id, gender_id ORDER BY r", "group_data_by group_data_by aggregate_data rank_data sort_data retrieve_data"},
		{"bare column beside SUM: grouped by it", "SELECT superhero_name, SUM(weight_kg), COUNT(id) FROM superhero WHERE id = 3", "filter_data group_data_by aggregate_data aggregate_data retrieve_data"},
		{"two aggregates of one column: the second in a new column", "SELECT eye_colour_id, AVG(height_cm), MAX(height_cm) FROM superhero GROUP BY eye_colour_id ORDER BY MAX(height_cm) DESC", "group_data_by aggregate_data aggregate_data sort_data retrieve_data"},
		{"an aggregate of a group key in a new column", "SELECT COUNT(DISTINCT eye_colour_id), eye_colour_id FROM superhero GROUP BY eye_colour_id", "group_data_by aggregate_data retrieve_data"},
		{"transform before filter", "SELECT superhero_name FROM superhero WHERE SUBSTR(full_name, 1, 3) = 'Bru'", "transform_data filter_data retrieve_data"},
		{"column arithmetic", "SELECT superhero_name FROM superhero WHERE weight_kg * 100 > height_cm", "transform_data filter_data retrieve_data"},
		{"EXISTS correlated by one equality becomes IN", "SELECT superhero_name FROM superhero AS T1 WHERE EXISTS (SELECT 1 FROM colour AS T2 WHERE T2.colour = 'Blue' AND T2.id = T1.eye_colour_id)", "filter_data retrieve_data filter_data retrieve_data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := sqlplan.Build(tc.sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			p, err := decompose.Slot(q, "superhero", nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range p.Calls {
				names = append(names, c.Name)
			}
			if got := strings.Join(names, " "); got != tc.calls {
				t.Fatalf("calls %q, want %q", got, tc.calls)
			}
			if len(p.Init) == 0 || len(p.Answer) == 0 {
				t.Fatalf("init %d, answer %v", len(p.Init), p.Answer)
			}
		})
	}
}

func TestSlotRejects(t *testing.T) {
	cat := catalogs(t)["superhero"]
	for _, tc := range []struct{ sql, reason string }{
		{"SELECT superhero_name, ROW_NUMBER() OVER (ORDER BY height_cm) FROM superhero", "window function"},
		{"SELECT superhero_name, RANK() OVER (ORDER BY height_cm) + 1 FROM superhero", "window function"},
		{"SELECT superhero_name, RANK() OVER (ORDER BY height_cm), DENSE_RANK() OVER (ORDER BY weight_kg) FROM superhero", "window function"},
		{"SELECT COUNT(*) FROM superhero EXCEPT SELECT COUNT(*) FROM colour", "set operation over values"},
		{"SELECT superhero_name FROM superhero AS T1 WHERE NOT EXISTS (SELECT 1 FROM colour AS T2 WHERE T2.id = T1.eye_colour_id)", "correlated subquery"},
		{"SELECT superhero_name FROM superhero AS T1 WHERE height_cm > (SELECT AVG(height_cm) FROM superhero AS T2 WHERE T2.eye_colour_id = T1.eye_colour_id)", "correlated subquery"},
		{"SELECT *, COUNT(id) FROM superhero", "bare column with aggregate"},
		{"SELECT eye_colour_id, AVG(height_cm), MAX(height_cm), AVG(weight_kg), MAX(weight_kg) FROM superhero GROUP BY eye_colour_id", "two aggregates of one column"},
		{"SELECT superhero_name FROM superhero WHERE SUBSTR(full_name, 1, 3) = 'Bru' AND SUBSTR(full_name, 2, 2) = 'ru'", "column transformed two ways"},
		{"SELECT CASE WHEN height_cm > 200 THEN 'tall' END FROM superhero", "CASE in the select list"},
		{"SELECT superhero_name FROM superhero LIMIT 3 OFFSET 2", "OFFSET"},
		{"SELECT x.n FROM (SELECT superhero_name AS n FROM superhero) AS x JOIN colour AS c ON c.id = 1", "subquery in FROM joined with tables"},
		{"SELECT x.n FROM (SELECT COUNT(*) AS n FROM superhero) AS x", "subquery in FROM"},
		{"SELECT id FROM colour UNION SELECT id FROM superhero ORDER BY height_cm", "ORDER BY of a set operation"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := sqlplan.Build(tc.sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			_, err = decompose.Slot(q, "superhero", nil)
			var pe *sqlplan.Error
			if !errors.As(err, &pe) || pe.Reason != tc.reason {
				t.Fatalf("err %v, want %q", err, tc.reason)
			}
		})
	}
}

// FuzzDecompose runs the whole SQL → plan → SLOT → SEL → REST path on
// arbitrary SQL: it must never panic, only decline.
func FuzzDecompose(f *testing.F) {
	for _, s := range []string{
		"SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = 'Hulk' OR T1.height_cm BETWEEN 1 AND 2",
		"SELECT CAST(SUM(IIF(height_cm > 200, 1, 0)) AS REAL) * 100 / COUNT(id) FROM superhero WHERE id IN (SELECT id FROM colour)",
		"SELECT superhero_name FROM superhero GROUP BY superhero_name HAVING AVG(height_cm) / COUNT(id) > 2 ORDER BY SUM(weight_kg) DESC, 1 LIMIT 2",
		"SELECT (SELECT MAX(height_cm) FROM superhero) - (SELECT MIN(height_cm) FROM superhero)",
		"SELECT DISTINCT strftime('%Y', full_name), SUBSTR(superhero_name, 2) FROM superhero WHERE NOT height_cm < 5",
	} {
		f.Add(s)
	}
	cat := fuzzCatalog()
	f.Fuzz(func(t *testing.T, sql string) {
		q, err := sqlplan.Build(sql, cat)
		if err != nil {
			return
		}
		if p, err := decompose.Slot(q, "superhero", nil); err == nil {
			if len(p.Answer) == 0 {
				t.Fatal("a plan without answer labels")
			}
			decompose.Sel(p)
		} else if !errors.As(err, new(*sqlplan.Error)) {
			t.Fatalf("error %T %v", err, err)
		}
		if in, err := endpoint.Make(q, sql, "superhero", nil); err == nil {
			if len(in.Args) != len(in.Endpoint.Params) {
				t.Fatalf("%d args for %d params", len(in.Args), len(in.Endpoint.Params))
			}
			for _, p := range in.Endpoint.Params {
				if !strings.Contains(in.Endpoint.Template, ":"+p.Name) {
					t.Fatalf("template %q lacks :%s", in.Endpoint.Template, p.Name)
				}
			}
		}
	})
}

func fuzzCatalog() *sqlplan.Catalog {
	return sqlplan.NewCatalog([]*sqlplan.Table{
		{Name: "superhero", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "superhero_name", Kind: "string"}, {Name: "full_name", Kind: "string"},
			{Name: "height_cm", Kind: "integer"}, {Name: "weight_kg", Kind: "integer"}, {Name: "eye_colour_id", Kind: "integer"}}},
		{Name: "colour", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "colour", Kind: "string"}}},
	})
}

// TestNewColumnNameClash checks that a further per-group aggregate is
// not put in a new column whose fixed name (count_value, ...) a starting
// table column already has: the question is rejected, not answered from
// the wrong column.
func TestNewColumnNameClash(t *testing.T) {
	cat := sqlplan.NewCatalog([]*sqlplan.Table{
		{Name: "count", Columns: []sqlplan.Column{{Name: "k", Kind: "string"}, {Name: "value", Kind: "integer"}}},
	})
	for _, tc := range []struct{ sql, want string }{
		// count_value is the column value of table count: the second
		// count of it cannot go to a new column of that name.
		{"SELECT k, AVG(value), COUNT(value) FROM count GROUP BY k", "two aggregates of one column"},
		{"SELECT value, COUNT(value) FROM count GROUP BY k", "two aggregates of one column"},
		{"SELECT k, AVG(value), MAX(value) FROM count GROUP BY k", ""},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			q, err := sqlplan.Build(tc.sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			p, err := decompose.Slot(q, "db", nil)
			var pe *sqlplan.Error
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (!errors.As(err, &pe) || pe.Reason != tc.want):
				t.Fatalf("err %v, want %q", err, tc.want)
			case tc.want == "":
				var news int
				for _, c := range p.Calls {
					if c.Args["new_column"] == true {
						news++
					}
				}
				if news != 1 {
					t.Fatalf("%d new columns in %v", news, p.Calls)
				}
			}
		})
	}
}
