package nl2api

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/endpoint"
)

// CollectionName is the name of a flavor's collection.
func CollectionName(flavor string) string { return "bird-" + flavor }

// backendConfig is the backend configuration of a flavor's collection
// written to dir: database paths relative to dir.
func backendConfig(flavor, dir string, dbs []*database) (toolenv.BackendSpec, error) {
	paths := map[string]string{}
	for _, d := range dbs {
		if d.err != nil {
			continue
		}
		p := d.db.Path
		if dir != "" {
			absDir, err := filepath.Abs(dir)
			if err != nil {
				return toolenv.BackendSpec{}, err
			}
			if rel, err := filepath.Rel(absDir, p); err == nil {
				p = filepath.ToSlash(rel)
			}
		}
		paths[d.name] = p
	}
	var raw []byte
	var err error
	typ := sqltools.BackendType
	if flavor == Rest {
		typ = sqlrest.BackendType
		raw, err = json.Marshal(sqlrest.Config{Databases: paths})
	} else {
		raw, err = json.Marshal(sqltools.Config{Flavor: flavor, Databases: paths})
	}
	return toolenv.BackendSpec{Type: typ, Config: raw}, err
}

// newCollection returns a flavor's collection with the given tools.
func newCollection(flavor string, tools []*toolenv.Tool, spec toolenv.BackendSpec, dbs []string) *toolenv.Collection {
	toolenv.SortTools(tools)
	c := toolenv.NewCollection(CollectionName(flavor), "nl2sql-"+flavor, tools)
	c.Version = "v1"
	c.Backend = spec
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: flavor != Rest}
	c.Meta = map[string]string{"source": "bird", "databases": strings.Join(dbs, ",")}
	switch flavor {
	case Slot:
		c.Description = "SLOT-BIRD: generic data tools (filter, sort, group, aggregate, transform, retrieve) with column slots, live over the BIRD dev databases. Calls run in task sessions started by the hidden initialize_active_data step (see meta.init of each task)."
	case Sel:
		c.Description = "SEL-BIRD: the SLOT operations with categorical arguments expanded into separate functions and one getter per column, live over the BIRD dev databases, in task sessions."
	case Rest:
		c.Description = "REST-BIRD: one GET endpoint per BIRD dev question (equivalent ones merged), its WHERE literals as typed query parameters, live over the BIRD dev databases."
	}
	return c
}

// toolColumns returns the union of the plans' starting-table columns.
func toolColumns(plans []*decompose.Plan) []sqltools.Column {
	var lists [][]sqltools.Column
	for _, p := range plans {
		lists = append(lists, p.Columns)
	}
	return sqltools.UnionColumns(lists...)
}

// sessionTools returns the SLOT or SEL tools for plans (over dbs).
func sessionTools(flavor string, plans []*decompose.Plan, dbs []string) []*toolenv.Tool {
	cols := toolColumns(plans)
	var tools []*toolenv.Tool
	if flavor == Slot {
		tools = sqltools.SlotTools(cols)
	} else {
		tools = sqltools.SelTools(cols)
	}
	return append(tools, sqltools.InitToolDef(dbs))
}

// sessionTask is the task of a question for SLOT or SEL.
func sessionTask(flavor string, c *candidate, p *decompose.Plan, tools []*toolenv.Tool) *toolenv.Task {
	var names []string
	getters := map[string]bool{}
	for _, col := range append(append([]sqltools.Column(nil), p.Columns...), sqltools.AddedColumns()...) {
		getters[sqltools.GetterName(col.Name)] = true
	}
	for _, t := range tools {
		if t.Hidden() {
			continue
		}
		if t.Meta[sqltools.MetaOp] == "get_column" && !getters[t.Name] {
			continue
		}
		names = append(names, t.Name)
	}
	sort.Strings(names)
	t := baseTask(flavor, c)
	t.Tools = names
	t.Gold = p.Calls
	t.Meta[sqltools.MetaInit] = p.Init
	t.Meta[sqltools.MetaAnswerLabels] = p.Answer
	t.Meta[sqltools.MetaColumns] = p.Columns
	t.Meta[sqltools.MetaOrdered] = c.ordered
	return t
}

func baseTask(flavor string, c *candidate) *toolenv.Task {
	ans, _ := json.Marshal(c.gold)
	return &toolenv.Task{
		ID:         fmt.Sprintf("bird-%d", c.q.ID),
		Collection: CollectionName(flavor),
		Query:      c.q.Question,
		Evidence:   c.q.Evidence,
		Answer:     ans,
		Source:     "bird",
		Group:      c.q.DB,
		Difficulty: c.q.Difficulty,
		Meta: map[string]any{
			"sql":         c.q.SQL,
			"db":          c.q.DB,
			"question_id": c.q.ID,
		},
	}
}

// RestLabel is the label of a REST task's one gold call.
const RestLabel = "RESULT"

// restTool is the tool of an endpoint.
func restTool(e *endpoint.Endpoint) *toolenv.Tool {
	in := toolenv.ObjectSchema()
	for _, p := range e.Params {
		in.SetProp(p.Name, &toolenv.Schema{Type: p.Type, Format: p.Format, Description: p.Description, Title: p.Title})
		in.Required = append(in.Required, p.Name)
	}
	in.AdditionalProperties = json.RawMessage("false")
	var nonEmpty []string
	for _, p := range e.Params {
		if p.NonEmpty {
			nonEmpty = append(nonEmpty, p.Name)
		}
	}
	out := toolenv.ObjectSchema()
	var cols []string
	for i, c := range e.Columns {
		if i < len(e.ColumnPhrases) && e.ColumnPhrases[i] != "" && e.ColumnPhrases[i] != c {
			c += " (" + e.ColumnPhrases[i] + ")"
		}
		cols = append(cols, c)
	}
	out.Description = "The rows the query returns; columns: " + strings.Join(cols, "; ")
	out.SetProp("columns", &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "string"}, Description: "result column names"})
	out.SetProp("row_count", &toolenv.Schema{Type: "integer", Description: "number of rows"})
	out.SetProp("rows", &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "array"}, Description: "the rows, each a list of values in column order"})
	t := &toolenv.Tool{
		Name:        e.Name,
		Title:       e.Title,
		Description: e.Description,
		Group:       e.DB,
		Input:       in,
		Output:      out,
		Binding:     &toolenv.Binding{Method: "GET", Path: e.Path},
		Meta:        map[string]string{sqlrest.MetaSQL: e.Template, sqlrest.MetaDatabase: e.DB},
	}
	if len(nonEmpty) > 0 {
		raw, _ := json.Marshal(nonEmpty)
		t.Meta[sqlrest.MetaNonEmpty] = string(raw)
	}
	return t
}

// restTask is the task of a question for REST; tools are the names of
// its database's endpoints.
func restTask(c *candidate, tools []string) *toolenv.Task {
	t := baseTask(Rest, c)
	args := map[string]any{}
	for k, v := range c.rest.Args {
		args[k] = v
	}
	t.Tools = tools
	t.Gold = []toolenv.GoldCall{{Name: c.rest.Endpoint.Name, Args: args, Label: RestLabel}}
	t.Meta[sqltools.MetaAnswerLabels] = []string{RestLabel}
	t.Meta[sqltools.MetaOrdered] = c.ordered
	return t
}
