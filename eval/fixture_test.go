package eval_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	_ "modernc.org/sqlite"
)

// fixture is a SLOT collection over BIRD's superhero database served by
// the real sqltools backend, with tasks whose gold answers are the
// results of their SQL on the database.
type fixture struct {
	coll  *toolenv.Collection
	env   *agent.Local
	tasks []*toolenv.Task
}

var heroColumns = []sqltools.Column{
	{Name: "superhero_superhero_name", Type: "string", Description: "the superhero's name"},
	{Name: "superhero_height_cm", Type: "integer", Description: "height in cm"},
	{Name: "eye_colour_colour", Type: "string", Description: "eye colour"},
	{Name: "publisher_publisher_name", Type: "string", Description: "publisher"},
}

type spec struct {
	id, query, sql string
	ordered        bool
	gold           []toolenv.GoldCall
}

var specs = []spec{
	{"hero-1", "What is the eye colour of 3-D Man?",
		`SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = '3-D Man'`, false,
		[]toolenv.GoldCall{
			{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "condition": "equal_to", "value": "3-D Man"}, Label: "HERO"},
			{Name: "retrieve_data", Args: map[string]any{"data_source": "$HERO$", "key_names": []any{"eye_colour_colour"}}, Label: "EYES"},
		}},
	{"hero-2", "Which superheroes published by Dark Horse Comics have blue eyes?",
		`SELECT T1.superhero_name FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id LEFT JOIN publisher AS T3 ON T1.publisher_id = T3.id WHERE T3.publisher_name = 'Dark Horse Comics' AND T2.colour = 'Blue'`, false,
		[]toolenv.GoldCall{
			{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$", "key_name": "publisher_publisher_name", "condition": "equal_to", "value": "Dark Horse Comics"}, Label: "DH"},
			{Name: "filter_data", Args: map[string]any{"data_source": "$DH$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue"}, Label: "BLUE"},
			{Name: "retrieve_data", Args: map[string]any{"data_source": "$BLUE$", "key_names": []any{"superhero_superhero_name"}}, Label: "NAMES"},
		}},
	{"hero-3", "List the three tallest superheroes of Marvel Comics, tallest first.",
		`SELECT T1.superhero_name FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id LEFT JOIN publisher AS T3 ON T1.publisher_id = T3.id WHERE T3.publisher_name = 'Marvel Comics' ORDER BY T1.height_cm DESC, T1.superhero_name LIMIT 3`, true,
		[]toolenv.GoldCall{
			{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$", "key_name": "publisher_publisher_name", "condition": "equal_to", "value": "Marvel Comics"}, Label: "M"},
			{Name: "sort_data", Args: map[string]any{"data_source": "$M$", "key_name": "superhero_superhero_name", "ascending": true}, Label: "S1"},
			{Name: "sort_data", Args: map[string]any{"data_source": "$S1$", "key_name": "superhero_height_cm", "ascending": false}, Label: "S2"},
			{Name: "retrieve_data", Args: map[string]any{"data_source": "$S2$", "key_names": []any{"superhero_superhero_name"}, "limit": 3}, Label: "TOP"},
		}},
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dbPath := shareddata.Require(t, "bird", "dev_databases", "superhero", "superhero.sqlite")
	cfg, _ := json.Marshal(sqltools.Config{Flavor: sqltools.FlavorSlot, Databases: map[string]string{"superhero": dbPath}})
	tools := sqltools.SlotTools(heroColumns)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"superhero"}))
	c := toolenv.NewCollection("bird-slot", "nl2sql-slot", tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	b, err := sqltools.Open(context.Background(), c, sqltools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	reg := invoke.NewRegistry()
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	f := &fixture{coll: c, env: agent.NewLocal(invoke.New(reg, invoke.Options{}), []*toolenv.Collection{c}, agent.LocalOptions{TaskTools: sqltools.TaskTools})}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := []any{}
	for _, col := range heroColumns {
		cols = append(cols, map[string]any{"name": col.Name, "type": col.Type, "description": col.Description})
	}
	for _, s := range specs {
		rows, err := db.Query(s.sql)
		if err != nil {
			t.Fatal(err)
		}
		ans := map[string]any{"columns": []string{"c"}, "rows": [][]any{}}
		var rs [][]any
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, []any{v})
		}
		rows.Close()
		ans["rows"] = rs
		raw, _ := json.Marshal(ans)
		f.tasks = append(f.tasks, &toolenv.Task{
			ID: s.id, Collection: c.Name, Group: "superhero", Source: "bird", Query: s.query, Tools: names, Gold: s.gold, Answer: raw,
			Meta: map[string]any{
				"ordered": s.ordered,
				"columns": cols,
				"init": []any{map[string]any{"name": agent.InitTool, "label": "starting_table", "arguments": map[string]any{
					"database": "superhero",
					"tables": []any{
						map[string]any{"name": "superhero", "alias": "T1"},
						map[string]any{"name": "colour", "alias": "T2", "prefix": "eye_colour", "on": []any{[]any{"T1.eye_colour_id", "T2.id"}}},
						map[string]any{"name": "publisher", "alias": "T3", "join": "left", "on": []any{[]any{"T1.publisher_id", "T3.id"}}},
					}}}},
			},
		})
	}
	return f
}
