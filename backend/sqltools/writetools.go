package sqltools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/internal/ident"
)

// Describer gives a column's description for tool schemas ("" : none).
type Describer func(database, table, column string) string

// WorldToolDefs are the hidden world tools of a collection whose
// databases are databases: initialize_world (start the session's world
// from an initial state) and inspect_world (report its state, run
// end-state checks in it). named are the collection's named initial
// states. REST collections (sqlrest) serve the same two.
func WorldToolDefs(databases, named []string) []*toolenv.Tool {
	init := object(
		"database", enumProp("the database the world is over (default: the session's, or the only one)", databases), false,
		"initial_state", enumProp("a named initial state of the collection", named), false,
		"sql", str("an SQL script (INSERT, UPDATE, DELETE) run over the database to make the initial state"), false,
		"from_file", str("an SQLite file inside the collection's folder to start from instead of the database"), false,
		"label", labelProp(), false)
	if len(named) == 0 {
		init.Properties["initial_state"].Enum = nil
	}
	check := object("name", str("what the check is for"), false, "sql", str("a read-only query run in the world"), true)
	inspect := object(
		"checks", &toolenv.Schema{Type: "array", Items: check, Description: "end-state checks: each query's rows are returned"}, false,
		"label", labelProp(), false)
	return []*toolenv.Tool{
		{Name: OpInitWorld, Description: "Hidden setup step: start this session's world — its own writable copy of the data — from an initial state. The harness calls it with the task's initial state before the first call; agents do not.",
			Input: init, Meta: map[string]string{toolenv.MetaHidden: "true", MetaOp: OpInitWorld, toolenv.MetaLabelArg: LabelArg}},
		{Name: OpInspect, Description: "Hidden: report what this session's world changed from its initial state (every changed row, before and after, and its hash) and run end-state checks in it. The harness calls it to reward the episode; agents do not.",
			Input: inspect, Meta: map[string]string{toolenv.MetaHidden: "true", MetaOp: OpInspect, toolenv.MetaLabelArg: LabelArg, toolenv.MetaState: toolenv.StateRead}},
	}
}

// WritableTables returns the tables of s that can be written, sorted by
// name.
func WritableTables(s *world.Schema) []*world.Table {
	var out []*world.Table
	for _, t := range s.Tables {
		if t.Writable() == "" {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WriteToolDefs returns the write tools of a SLOT or SEL collection over
// schemas (by database name): SLOT's insert_rows, update_rows and
// delete_rows take the table as an argument; SEL has one of each per
// writable table (insert_<table>, …), its columns as the schema's
// properties. Every write runs in the session's world.
func WriteToolDefs(flavor string, schemas map[string]*world.Schema, describe Describer) []*toolenv.Tool {
	dbs := make([]string, 0, len(schemas))
	for n := range schemas {
		dbs = append(dbs, n)
	}
	sort.Strings(dbs)
	if flavor == FlavorSel {
		return selWriteTools(dbs, schemas, describe)
	}
	var tables []string
	var doc strings.Builder
	seen := map[string]bool{}
	for _, db := range dbs {
		for _, t := range WritableTables(schemas[db]) {
			if !seen[t.Name] {
				seen[t.Name] = true
				tables = append(tables, t.Name)
			}
			fmt.Fprintf(&doc, "\n* `%s`", t.Name)
			if len(dbs) > 1 {
				fmt.Fprintf(&doc, " (%s)", db)
			}
			fmt.Fprintf(&doc, ": %s", tableDoc(t))
		}
	}
	sort.Strings(tables)
	table := enumProp("The table to write. Its columns (key marked):"+doc.String(), tables)
	keys := &toolenv.Schema{Description: "The rows to change, by key: a list of keys (a key is its value for a one-column key, else a list of the key columns' values in key order, or an object of key column → value; a table without a primary key is keyed by all its columns), or \"$label$\" of an earlier result whose rows are keys (retrieve_data of the key columns, select_unique_values of a one-column key)."}
	rows := &toolenv.Schema{Type: "array", MinItems: intp(1), Items: &toolenv.Schema{Type: "object", Description: "column → value; \"$label$\" of an earlier single value is that value"},
		Description: "The rows to add: objects of column → value. Columns left out take their default; NOT NULL columns without one and primary key columns (but an INTEGER PRIMARY KEY, which is numbered) must be given."}
	values := &toolenv.Schema{Type: "object", Description: "column → new value (\"$label$\" of an earlier single value is that value); primary key columns cannot be set."}
	tools := []*toolenv.Tool{
		{Name: OpInsert, Description: descInsert, Input: object("table", table, true, "rows", rows, true, "label", labelProp(), false)},
		{Name: OpUpdate, Description: descUpdate, Input: object("table", table, true, "keys", keys, true, "values", values, true, "label", labelProp(), false)},
		{Name: OpDelete, Description: descDelete, Input: object("table", table, true, "keys", keys, true, "label", labelProp(), false)},
	}
	for _, t := range tools {
		t.Meta = writeMeta(t.Name, nil)
	}
	return tools
}

const (
	descInsert = "Add rows to a table of this session's world (its own copy of the data: other sessions never see it). The table's rules hold: column types, NOT NULL, primary and unique keys, foreign keys (a row must refer to existing rows). Returns the rows added, as stored. Later reads of the session see them."
	descUpdate = "Change columns of rows of a table of this session's world, the rows given by their keys. The table's rules hold (types, NOT NULL, unique keys, foreign keys). Returns the rows changed, as they are now."
	descDelete = "Delete rows of a table of this session's world, given by their keys. A row other rows refer to (a foreign key) is deleted only when the key says what happens to them (ON DELETE CASCADE or SET NULL); otherwise delete those rows first. Returns the rows deleted."
)

// writeMeta is the Meta of a write tool: its operation, what its calls
// do to state (MCP's readOnlyHint false, destructiveHint for updates and
// deletes, idempotentHint: repeating an update or delete changes
// nothing more), its bound arguments.
func writeMeta(op string, fixed map[string]any) map[string]string {
	m := map[string]string{MetaOp: op, toolenv.MetaLabelArg: LabelArg, toolenv.MetaState: toolenv.StateWrite}
	switch op {
	case OpInsert:
		m[toolenv.MetaDestructive] = "false"
	default:
		m[toolenv.MetaIdempotent] = "true"
	}
	if len(fixed) > 0 {
		raw, _ := json.Marshal(fixed)
		m[MetaFixed] = string(raw)
	}
	return m
}

// tableDoc describes a table's columns in one line.
func tableDoc(t *world.Table) string {
	var parts []string
	for _, c := range t.Columns {
		p := c.Name
		if typ := strings.TrimSpace(c.Type); typ != "" {
			p += " " + strings.ToUpper(typ)
		}
		if c.PK > 0 {
			p += " (key)"
		} else if c.NotNull {
			p += " NOT NULL"
		}
		parts = append(parts, p)
	}
	s := strings.Join(parts, ", ")
	if len(t.Key) == 0 {
		s += "; no primary key: a row is keyed by all its columns"
	}
	for _, fk := range t.FKs {
		s += fmt.Sprintf("; %s refers to %s(%s)", names(fk.ChildCols), fk.Parent.Name, names(fk.ParentCols))
	}
	return s
}

func names(cols []*world.Column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return strings.Join(out, ", ")
}

// ColumnSchema is the schema of a column's value in a write tool.
func ColumnSchema(db string, t *world.Table, c *world.Column, describe Describer) *toolenv.Schema {
	s := &toolenv.Schema{}
	switch c.Kind {
	case "integer", "number", "string":
		s.Type = c.Kind
	}
	var desc []string
	if describe != nil {
		if d := describe(db, t.Name, c.Name); d != "" {
			desc = append(desc, d)
		}
	}
	typ := strings.ToUpper(strings.TrimSpace(c.Type))
	if typ == "" {
		typ = "no declared type"
	}
	note := fmt.Sprintf("(%s.%s, %s", t.Name, c.Name, typ)
	switch {
	case c.PK > 0 && c == t.Alias:
		note += ", primary key: numbered when left out"
	case c.PK > 0:
		note += ", primary key"
	case c.NotNull:
		note += ", NOT NULL"
	}
	if c.Default != "" {
		note += ", default " + c.Default
	}
	desc = append(desc, note+")")
	if !c.NotNull && c.PK == 0 && s.Type != "" {
		s.Type = ""
		s.AnyOf = []*toolenv.Schema{{Type: c.Kind}, {Type: "null"}}
	}
	s.Description = strings.Join(desc, " ")
	return s
}

// selWriteTools returns one insert, update and delete tool per writable
// table.
func selWriteTools(dbs []string, schemas map[string]*world.Schema, describe Describer) []*toolenv.Tool {
	type entry struct {
		db string
		t  *world.Table
	}
	byName := map[string][]entry{}
	var order []string
	for _, db := range dbs {
		for _, t := range WritableTables(schemas[db]) {
			n := ident.Column(t.Name)
			if byName[n] == nil {
				order = append(order, n)
			}
			byName[n] = append(byName[n], entry{db, t})
		}
	}
	sort.Strings(order)
	var tools []*toolenv.Tool
	used := map[string]bool{}
	for _, n := range order {
		for _, e := range byName[n] {
			base := n
			if len(byName[n]) > 1 {
				base = ident.Column(e.db) + "_" + n
			}
			for _, op := range []string{"insert", "update", "delete"} {
				name := ident.Limit(op+"_"+base, 64)
				for k := 2; used[name]; k++ {
					name = ident.Limit(fmt.Sprintf("%s_%s_%d", op, base, k), 64)
				}
				used[name] = true
				tools = append(tools, selWriteTool(op, name, e.db, e.t, len(dbs) > 1, describe))
			}
		}
	}
	return tools
}

func selWriteTool(op, name, db string, t *world.Table, manyDBs bool, describe Describer) *toolenv.Tool {
	fixed := map[string]any{"table": t.Name}
	if manyDBs {
		fixed["database"] = db
	}
	where := "table " + t.Name
	if manyDBs {
		where += " of database " + db
	}
	key := t.KeyNames()
	keyDoc := fmt.Sprintf("its primary key (%s)", strings.Join(key, ", "))
	if len(key) == 0 {
		key = t.Names()
		keyDoc = fmt.Sprintf("all its columns (%s): the table has no primary key", strings.Join(key, ", "))
	}
	keys := &toolenv.Schema{Description: fmt.Sprintf("The rows, by key — %s: a list of keys (a value for a one-column key, else a list of values in key order or an object of key column → value), or \"$label$\" of an earlier result whose rows are keys.", keyDoc)}
	var (
		desc  string
		input *toolenv.Schema
		opn   string
	)
	switch op {
	case "insert":
		row := toolenv.ObjectSchema()
		row.AdditionalProperties = json.RawMessage("false")
		for _, c := range t.Columns {
			row.SetProp(c.Name, ColumnSchema(db, t, c, describe))
			if c != t.Alias && (c.PK > 0 || (c.NotNull && c.Default == "")) {
				row.Required = append(row.Required, c.Name)
			}
		}
		row.Description = "a row: column → value (\"$label$\" of an earlier single value is that value)"
		input = object("rows", &toolenv.Schema{Type: "array", Items: row, MinItems: intp(1), Description: "the rows to add"}, true, "label", labelProp(), false)
		desc, opn = fmt.Sprintf("Add rows to %s in this session's world (its own copy of the data). The table's rules hold: types, NOT NULL, keys, foreign keys. Returns the rows added.", where), OpInsert
	case "update":
		vals := toolenv.ObjectSchema()
		vals.AdditionalProperties = json.RawMessage("false")
		for _, c := range t.Columns {
			if c.PK == 0 || len(t.Key) == 0 {
				vals.SetProp(c.Name, ColumnSchema(db, t, c, describe))
			}
		}
		vals.Description = "column → new value"
		input = object("keys", keys, true, "values", vals, true, "label", labelProp(), false)
		desc, opn = fmt.Sprintf("Change columns of rows of %s in this session's world, the rows given by key. The table's rules hold. Returns the rows changed.", where), OpUpdate
	default:
		input = object("keys", keys, true, "label", labelProp(), false)
		desc, opn = fmt.Sprintf("Delete rows of %s in this session's world, given by key. Rows other rows refer to are deleted only when their foreign key says what happens to those (ON DELETE CASCADE or SET NULL). Returns the rows deleted.", where), OpDelete
	}
	return &toolenv.Tool{Name: name, Description: desc, Input: input, Meta: writeMeta(opn, fixed)}
}
