package sqlplan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

func heroCatalog() *sqlplan.Catalog {
	return sqlplan.NewCatalog([]*sqlplan.Table{
		{Name: "superhero", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "superhero_name", Kind: "string"}, {Name: "height_cm", Kind: "integer"}, {Name: "eye_colour_id", Kind: "integer"}}},
		{Name: "colour", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "colour", Kind: "string"}}},
		{Name: "Match", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "date", Kind: "string"}}},
	})
}

func TestBuild(t *testing.T) {
	cat := heroCatalog()
	for _, tc := range []struct {
		name  string
		sql   string
		check func(t *testing.T, q *sqlplan.Query)
	}{
		{"aliases and joins", "SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = 'Hulk'", func(t *testing.T, q *sqlplan.Query) {
			if len(q.From) != 2 || q.From[1].Join != "inner" || q.From[1].On == nil {
				t.Fatalf("from %+v", q.From)
			}
			c := q.Select[0].Expr.(*sqlplan.ColumnRef)
			if c.Source != q.From[1] || c.Column != "colour" || c.Kind != "string" {
				t.Fatalf("select %+v", c)
			}
			w := q.Where.(*sqlplan.Binary)
			if lit := w.R.(*sqlplan.Literal); lit.Value != "Hulk" || lit.Raw != "'Hulk'" {
				t.Fatalf("literal %+v", lit)
			}
		}},
		{"unqualified and table name despite alias", "SELECT superhero.height_cm, colour FROM superhero AS s, colour WHERE s.eye_colour_id = colour.id", func(t *testing.T, q *sqlplan.Query) {
			if q.From[1].Join != "comma" {
				t.Fatalf("join %q", q.From[1].Join)
			}
			if q.Select[1].Expr.(*sqlplan.ColumnRef).Source != q.From[1] {
				t.Fatal("colour not resolved to the colour table")
			}
		}},
		{"backticks, double-quoted identifier and Match", "SELECT `height_cm` FROM \"superhero\" WHERE `superhero_name` LIKE 'Bat%' AND id IN (SELECT id FROM Match)", func(t *testing.T, q *sqlplan.Query) {
			in := sqlplan.Conjuncts(q.Where)[1].(*sqlplan.In)
			if in.Sub == nil || in.Sub.From[0].Table.Name != "Match" {
				t.Fatalf("IN subquery %+v", in)
			}
		}},
		{"double-quoted string falls back to text", `SELECT id FROM superhero WHERE superhero_name = "Hulk"`, func(t *testing.T, q *sqlplan.Query) {
			if lit, ok := q.Where.(*sqlplan.Binary).R.(*sqlplan.Literal); !ok || lit.Value != "Hulk" {
				t.Fatalf("right side %#v", q.Where.(*sqlplan.Binary).R)
			}
		}},
		{"negative literal keeps its span", "SELECT id FROM superhero WHERE height_cm > -5", func(t *testing.T, q *sqlplan.Query) {
			lit := q.Where.(*sqlplan.Binary).R.(*sqlplan.Literal)
			if lit.Value != int64(-5) || lit.Raw != "-5" || lit.End-lit.Pos != 2 {
				t.Fatalf("literal %+v", lit)
			}
		}},
		{"ORDER BY an alias and an ordinal", "SELECT superhero_name AS n, COUNT(id) AS c FROM superhero GROUP BY 1 ORDER BY c DESC", func(t *testing.T, q *sqlplan.Query) {
			if _, ok := q.OrderBy[0].Expr.(*sqlplan.AliasRef); !ok || !q.OrderBy[0].Desc {
				t.Fatalf("order %+v", q.OrderBy[0])
			}
			if a, ok := q.GroupBy[0].(*sqlplan.AliasRef); !ok || a.Expr.(*sqlplan.ColumnRef).Column != "superhero_name" {
				t.Fatalf("group %+v", q.GroupBy[0])
			}
		}},
		{"kinds", "SELECT CAST(COUNT(id) AS REAL) * 100 / COUNT(id), COUNT(id) / 2, IIF(height_cm > 1, 1.0, 0) FROM superhero", func(t *testing.T, q *sqlplan.Query) {
			for i, want := range []string{"number", "integer", "number"} {
				if k := sqlplan.Kind(q.Select[i].Expr); k != want {
					t.Errorf("item %d kind %q, want %q", i, k, want)
				}
			}
		}},
		{"correlated subquery", "SELECT superhero_name FROM superhero AS T1 WHERE EXISTS (SELECT 1 FROM colour AS T2 WHERE T2.id = T1.eye_colour_id)", func(t *testing.T, q *sqlplan.Query) {
			if !q.Correlated {
				t.Fatal("not marked correlated")
			}
		}},
		{"compound and limit", "SELECT id FROM superhero EXCEPT SELECT id FROM colour LIMIT 3 OFFSET 1", func(t *testing.T, q *sqlplan.Query) {
			if len(q.Compound) != 1 || q.Compound[0].Op != "EXCEPT" {
				t.Fatalf("compound %+v", q.Compound)
			}
		}},
		{"window function", "SELECT superhero_name, RANK() OVER (ORDER BY height_cm DESC) FROM superhero", func(t *testing.T, q *sqlplan.Query) {
			if !q.Window {
				t.Fatal("window not noticed")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := sqlplan.Build(tc.sql, cat)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, q)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	cat := heroCatalog()
	for _, tc := range []struct{ sql, reason string }{
		{"SELEC id FROM superhero", "parse"},
		{"SELECT id FROM superhero; SELECT 1", "parse"},
		{"DELETE FROM superhero", "not a SELECT"},
		{"SELECT nope FROM superhero", "unknown column"},
		{"SELECT id FROM heroes", "unknown table"},
		{"SELECT x.id FROM superhero", "unknown table"},
		{"SELECT id FROM superhero, colour", "ambiguous column"},
		{"SELECT id FROM superhero WHERE id = ?", "bind parameter"},
		{"SELECT id FROM superhero LIMIT height_cm", "non-literal LIMIT"},
		// A common table expression that names itself, directly or through
		// another, is refused (found by FuzzBuild: it used to expand forever).
		{"WITH c AS(SELECT d FROM c)SELECT*FROM c", "recursive WITH"},
		{"WITH superhero AS (SELECT * FROM superhero) SELECT id FROM superhero", "recursive WITH"},
		{"WITH a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a", "recursive WITH"},
		{"WITH c AS (SELECT id FROM colour) SELECT * FROM c WHERE id IN (WITH c AS (SELECT * FROM c) SELECT id FROM c)", "recursive WITH"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := sqlplan.Build(tc.sql, cat)
			var pe *sqlplan.Error
			if !errors.As(err, &pe) || pe.Reason != tc.reason {
				t.Fatalf("err = %v, want reason %q", err, tc.reason)
			}
		})
	}
}

func FuzzBuild(f *testing.F) {
	for _, s := range []string{
		"SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = 'Hulk'",
		"SELECT CAST(SUM(CASE WHEN height_cm > 200 THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(id) FROM superhero",
		"SELECT id FROM superhero WHERE superhero_name IN ('a', 'b') AND height_cm BETWEEN 1 AND 2 OR id IS NULL ORDER BY 1 DESC LIMIT 3",
		"SELECT (SELECT MAX(id) FROM colour) - -3, strftime('%Y', `date`) FROM Match GROUP BY id HAVING COUNT(*) > 1",
		"WITH c AS (SELECT id FROM colour) SELECT * FROM c",
	} {
		f.Add(s)
	}
	cat := heroCatalog()
	f.Fuzz(func(t *testing.T, sql string) {
		q, err := sqlplan.Build(sql, cat)
		if err != nil {
			var pe *sqlplan.Error
			if !errors.As(err, &pe) || pe.Reason == "" {
				t.Fatalf("error %v is not a *sqlplan.Error with a reason", err)
			}
			return
		}
		// Every literal's span lies in the text and spells it.
		for _, e := range allExprs(q) {
			sqlplan.Walk(e, func(x sqlplan.Expr) bool {
				if l, ok := x.(*sqlplan.Literal); ok && l.End > 0 {
					if l.Pos < 0 || l.End > len(sql) || l.Pos > l.End {
						t.Fatalf("literal span %d..%d outside %d bytes", l.Pos, l.End, len(sql))
					}
					if l.Kind != sqlplan.LitNull && !strings.Contains(sql[l.Pos:l.End], strings.TrimLeft(l.Raw, "-")) && l.Raw != "" {
						t.Fatalf("literal %q not at its span %q", l.Raw, sql[l.Pos:l.End])
					}
				}
				return true
			})
		}
		_ = sqlplan.String(q.Where)
	})
}

func allExprs(q *sqlplan.Query) []sqlplan.Expr {
	out := []sqlplan.Expr{q.Where, q.Having}
	for _, it := range q.Select {
		out = append(out, it.Expr)
	}
	out = append(out, q.GroupBy...)
	for _, o := range q.OrderBy {
		out = append(out, o.Expr)
	}
	for _, s := range q.From {
		out = append(out, s.On)
	}
	return out
}

func TestRankQuery(t *testing.T) {
	for _, c := range []struct {
		in, want      string
		limit, offset int64
		ok            bool
	}{
		{"SELECT name FROM t ORDER BY h DESC LIMIT 3", `SELECT name, (h) AS "__toolenv_rank_1" FROM t ORDER BY h DESC`, 3, 0, true},
		{"SELECT a AS x, COUNT(*) FROM t GROUP BY a ORDER BY x DESC, 2 LIMIT 2 OFFSET 1;",
			`SELECT a AS x, COUNT(*), (a) AS "__toolenv_rank_1", (COUNT(*)) AS "__toolenv_rank_2" FROM t GROUP BY a ORDER BY x DESC, 2`, 2, 1, true},
		{"SELECT * FROM t ORDER BY h", `SELECT *, (h) AS "__toolenv_rank_1" FROM t ORDER BY h`, -1, 0, true},
		{"SELECT DISTINCT a FROM t ORDER BY a LIMIT 1", "", 0, 0, false},
		{"SELECT a FROM t LIMIT 1", "", 0, 0, false},
		{"SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", "", 0, 0, false},
	} {
		r, ok := sqlplan.RankQuery(c.in)
		if ok != c.ok {
			t.Errorf("%s: ok %v", c.in, ok)
			continue
		}
		if ok && (r.SQL != c.want || r.Limit != c.limit || r.Offset != c.offset) {
			t.Errorf("%s:\n got %s %d %d\nwant %s %d %d", c.in, r.SQL, r.Limit, r.Offset, c.want, c.limit, c.offset)
		}
	}
}

// RankQuery never panics, and what it returns parses.
func FuzzRankQuery(f *testing.F) {
	for _, s := range []string{"SELECT a FROM t ORDER BY b DESC LIMIT 1", "SELECT a AS x FROM t ORDER BY x, 1 LIMIT 2, 3;", "SELECT * FROM t ORDER BY 9", "SELECT a FROM t ORDER BY (SELECT 1) LIMIT -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := sqlplan.RankQuery(s)
		if !ok {
			return
		}
		if _, err := sqlplan.Parse(r.SQL); err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, r.SQL, err)
		}
	})
}

func TestNestedRankings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // the rankings' SQL
	}{
		{"SELECT COUNT(*) FROM a WHERE x > (SELECT x FROM a ORDER BY h DESC LIMIT 1)", []string{`SELECT x, (h) AS "__toolenv_rank_1" FROM a ORDER BY h DESC`}},
		{"SELECT n FROM t WHERE id IN (SELECT id FROM u ORDER BY k LIMIT 3 OFFSET 1)", []string{`SELECT id, (k) AS "__toolenv_rank_1" FROM u ORDER BY k`}},
		{"SELECT T.n FROM (SELECT * FROM t ORDER BY k DESC LIMIT 5) AS T WHERE T.m > 1", []string{`SELECT *, (k) AS "__toolenv_rank_1" FROM t ORDER BY k DESC`}},
		{"SELECT n FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a ORDER BY u.k LIMIT 1)", []string{`SELECT 1, (u.k) AS "__toolenv_rank_1" FROM u WHERE u.a = t.a ORDER BY u.k`}},
		// The top-level ORDER BY is the answer's own ranking, not a
		// subquery's; a subquery without LIMIT keeps every row.
		{"SELECT n FROM t ORDER BY k LIMIT 1", nil},
		{"SELECT n FROM t WHERE k IN (SELECT k FROM u ORDER BY k)", nil},
		{"SELECT n FROM t WHERE k = (SELECT MAX(k) FROM u)", nil},
		{"not SQL", nil},
	} {
		var got []string
		for _, r := range sqlplan.NestedRankings(c.in) {
			got = append(got, r.SQL)
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
