package endpoint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/nl2api/endpoint"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

func catalog() *sqlplan.Catalog {
	return sqlplan.NewCatalog([]*sqlplan.Table{
		{Name: "superhero", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "superhero_name", Kind: "string"}, {Name: "height_cm", Kind: "integer"},
			{Name: "eye_colour_id", Kind: "integer"}, {Name: "hair_colour_id", Kind: "integer"}, {Name: "full_name", Kind: "string"}}},
		{Name: "colour", Columns: []sqlplan.Column{{Name: "id", Kind: "integer"}, {Name: "colour", Kind: "string"}}},
		{Name: "event", Columns: []sqlplan.Column{{Name: "event_date", Kind: "string"}, {Name: "type", Kind: "string"}}},
	})
}

func describe(table, column string) endpoint.Column {
	if column == "superhero_name" {
		return endpoint.Column{Description: "the name of the superhero"}
	}
	return endpoint.Column{}
}

func make1(t *testing.T, sql string) *endpoint.Instance {
	t.Helper()
	q, err := sqlplan.Build(sql, catalog())
	if err != nil {
		t.Fatal(err)
	}
	in, err := endpoint.Make(q, sql, "superhero", describe)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestMake(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		template string
		params   string // name:type ...
		args     string
		name     string
	}{
		{"SELECT height_cm FROM superhero WHERE superhero_name = 'Hulk'",
			"SELECT height_cm FROM superhero WHERE superhero_name = :superhero_name", "superhero_name:string", "map[superhero_name:Hulk]", "get_height_cm_by_superhero_name"},
		{"SELECT superhero_name FROM superhero WHERE height_cm > 200 AND height_cm <= -3.5",
			"SELECT superhero_name FROM superhero WHERE height_cm > :min_height_cm AND height_cm <= :max_height_cm", "min_height_cm:integer max_height_cm:number", "map[max_height_cm:-3.5 min_height_cm:200]", "get_superhero_name_by_min_height_cm_and_max_height_cm"},
		{"SELECT COUNT(*) FROM superhero WHERE superhero_name IN ('A', 'B') OR full_name LIKE 'Bru%'",
			`SELECT COUNT(*) AS "count" FROM superhero WHERE superhero_name IN (:superhero_name_1, :superhero_name_2) OR full_name LIKE :full_name_pattern`, "superhero_name_1:string superhero_name_2:string full_name_pattern:string", "map[full_name_pattern:Bru% superhero_name_1:A superhero_name_2:B]", "get_count_by_superhero_name_and_full_name_pattern"},
		{"SELECT type FROM event WHERE SUBSTR(event_date, 1, 4) = '2019' AND event_date BETWEEN '2019-01' AND '2019-06'",
			"SELECT type FROM event WHERE SUBSTR(event_date, 1, 4) = :event_date_year AND event_date BETWEEN :min_event_date AND :max_event_date", "event_date_year:string min_event_date:string max_event_date:string", "map[event_date_year:2019 max_event_date:2019-06 min_event_date:2019-01]", "get_event_type_by_event_date_year_and_min_event_date_and_max_event_date"},
		{"SELECT superhero_name FROM superhero WHERE height_cm > (SELECT AVG(height_cm) FROM superhero WHERE full_name = 'X') ORDER BY height_cm DESC LIMIT 1",
			"SELECT superhero_name FROM superhero WHERE height_cm > (SELECT AVG(height_cm) FROM superhero WHERE full_name = :full_name) ORDER BY height_cm DESC LIMIT 1", "full_name:string", "map[full_name:X]", "get_superhero_name_with_highest_height_cm_by_full_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make1(t, tc.sql)
			e := in.Endpoint
			if e.Template != tc.template {
				t.Errorf("template\n %s\nwant\n %s", e.Template, tc.template)
			}
			var ps []string
			for _, p := range e.Params {
				ps = append(ps, p.Name+":"+p.Type)
				if p.Description == "" {
					t.Errorf("parameter %s has no description", p.Name)
				}
			}
			if got := strings.Join(ps, " "); got != tc.params {
				t.Errorf("params %q, want %q", got, tc.params)
			}
			if got := fmt.Sprint(in.Args); got != tc.args {
				t.Errorf("args %s, want %s", got, tc.args)
			}
			if e.Name != tc.name {
				t.Errorf("name %q, want %q", e.Name, tc.name)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a := make1(t, "SELECT height_cm FROM superhero WHERE superhero_name = 'Hulk'")
	b := make1(t, "select height_cm   from superhero\nwhere superhero_name = 'Thor'")
	c := make1(t, "SELECT height_cm FROM superhero WHERE full_name = 'Hulk'")
	d := make1(t, "SELECT full_name FROM superhero WHERE superhero_name = 'Hulk' AND height_cm > 3") // same name start, other template
	e := make1(t, "SELECT height_cm FROM superhero WHERE superhero_name = 'Hulk' LIMIT 1")           // same name, other template
	eps := endpoint.Merge([]*endpoint.Instance{a, b, c, d, e})
	if len(eps) != 4 {
		t.Fatalf("%d endpoints, want 4", len(eps))
	}
	if a.Endpoint != b.Endpoint || b.Args["superhero_name"] != "Thor" {
		t.Fatal("equivalent templates were not merged, or lost their arguments")
	}
	if e.Endpoint.Name != "get_height_cm_by_superhero_name_v2" || e.Endpoint.Path != "/v1/bird/superhero/height_cm_by_superhero_name_v2" {
		t.Fatalf("second endpoint of a name: %s %s", e.Endpoint.Name, e.Endpoint.Path)
	}
	long := make1(t, "SELECT superhero_name, full_name, height_cm, eye_colour_id FROM superhero WHERE superhero_name = 'a' AND full_name = 'b' AND height_cm = 1 AND eye_colour_id = 2 AND hair_colour_id = 3")
	endpoint.Merge([]*endpoint.Instance{long})
	if n := long.Endpoint.Name; len(n) > 64 {
		t.Fatalf("name %q is %d bytes", n, len(n))
	}
}

func ExampleMake() {
	sql := "SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = 'Hulk'"
	q, _ := sqlplan.Build(sql, catalog())
	in, _ := endpoint.Make(q, sql, "superhero", describe)
	endpoint.Merge([]*endpoint.Instance{in})
	fmt.Println(in.Endpoint.Name)
	fmt.Println("GET", in.Endpoint.Path)
	fmt.Println(in.Endpoint.Template)
	fmt.Println(in.Endpoint.Params[0].Description)
	fmt.Println(in.Args)
	// Output:
	// get_colour_by_superhero_name
	// GET /v1/bird/superhero/colour_by_superhero_name
	// SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = :superhero_name
	// The name of the superhero (superhero.superhero_name): the rows where it equals this value.
	// map[superhero_name:Hulk]
}

// Names are unique after they are cut to 64 bytes: two different
// templates whose names are equal and long used to end up with the same
// cut name (the build then failed with "tool name ... is used twice").
func TestMergeLongNamesUniqueAfterCut(t *testing.T) {
	long := strings.Repeat("very_long_column_name_", 4)
	var ins []*endpoint.Instance
	for i := 0; i < 4; i++ {
		in := &endpoint.Instance{Endpoint: &endpoint.Endpoint{DB: "db", Name: "get_" + long, Key: fmt.Sprintf("template %d", i)}}
		ins = append(ins, in)
	}
	ins = append(ins, &endpoint.Instance{Endpoint: &endpoint.Endpoint{DB: "db", Name: "get_" + long + "_v2", Key: "other"}})
	seen := map[string]bool{}
	for _, e := range endpoint.Merge(ins) {
		if len(e.Name) > 64 {
			t.Errorf("name %q is %d bytes", e.Name, len(e.Name))
		}
		if seen[e.Name] {
			t.Errorf("name %q is used twice", e.Name)
		}
		seen[e.Name] = true
	}
	if len(seen) != 5 {
		t.Errorf("%d endpoints, want 5", len(seen))
	}
}

// Non-ASCII names are transliterated for names (ä→ae, ß→ss), never
// mangled (get_s_nger_name_by_jahr), and kept in titles.
func TestUnicodeNames(t *testing.T) {
	cat := sqlplan.NewCatalog([]*sqlplan.Table{{Name: "sänger", Columns: []sqlplan.Column{{Name: "sänger_name", Kind: "string"}, {Name: "jahr", Kind: "integer"}, {Name: "größe", Kind: "number"}}}})
	sql := "SELECT sänger_name FROM sänger WHERE jahr = 2014 AND größe > 1.8"
	q, err := sqlplan.Build(sql, cat)
	if err != nil {
		t.Fatal(err)
	}
	in, err := endpoint.Make(q, sql, "konzert_sänger", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := endpoint.Merge([]*endpoint.Instance{in})[0]
	if e.Name != "get_saenger_name_by_jahr_and_min_groesse" || e.Title != "Sänger Name By Jahr And Min Größe" {
		t.Errorf("name %q, title %q", e.Name, e.Title)
	}
	if e.Path != "/v1/bird/konzert_saenger/saenger_name_by_jahr_and_min_groesse" {
		t.Errorf("path %q", e.Path)
	}
	var names, titles []string
	for _, p := range e.Params {
		names, titles = append(names, p.Name), append(titles, p.Title)
	}
	if fmt.Sprint(names) != "[jahr min_groesse]" || fmt.Sprint(titles) != "[Jahr Min Größe]" {
		t.Errorf("params %v, titles %v", names, titles)
	}
}

// TestDateParamsHaveTheDateFormat: a parameter whose value in the query
// was a date (YYYY-MM-DD) is marked format date, so that a strict
// collection refuses a bound that is not one; a year, a year-month and
// other text are not.
func TestDateParamsHaveTheDateFormat(t *testing.T) {
	in := make1(t, "SELECT type FROM event WHERE event_date >= '2019-01-31' AND event_date < '2019-06' AND type = '2019-13-01' AND SUBSTR(event_date, 1, 4) = '2019'")
	got := map[string]string{}
	for _, p := range in.Endpoint.Params {
		got[p.Name] = p.Format
	}
	want := map[string]string{"min_event_date": "date", "max_event_date": "", "event_type": "", "event_date_year": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("formats %v, want %v", got, want)
	}
}
