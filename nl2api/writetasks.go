package nl2api

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
	"github.com/toolenv/toolenv/internal/ident"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/validate"
)

// writeState is what a build with writes shares between flavors: each
// database's schema and base, and its write task specs.
type writeState struct {
	schemas map[string]*world.Schema
	bases   map[string]*world.Base
	specs   []*writeSpec
	dbs     map[string]*database
	finds   map[string]*toolenv.Tool // REST find endpoints by spec id
}

func (ws *writeState) close() {
	for _, b := range ws.bases {
		b.Close()
	}
}

// newWriteState reads the databases' schemas and generates the write
// task specs.
func newWriteState(ctx context.Context, dbList []*database, cands []*candidate, opt *Options) *writeState {
	ws := &writeState{schemas: map[string]*world.Schema{}, bases: map[string]*world.Base{}, dbs: map[string]*database{}}
	for i, d := range dbList {
		opt.progress("write tasks", i, len(dbList))
		if d.db == nil {
			continue
		}
		b, err := world.NewBase(ctx, d.db, world.Options{Conns: 1})
		if err != nil {
			d.notes = append(d.notes, "no write tools: "+err.Error())
			continue
		}
		ws.bases[d.name], ws.schemas[d.name], ws.dbs[d.name] = b, b.Schema(), d
		ws.specs = append(ws.specs, writeSpecs(ctx, d, cands, b, opt)...)
	}
	opt.progress("write tasks", len(dbList), len(dbList))
	return ws
}

// describer gives BIRD's column descriptions to write tools.
func (ws *writeState) describer() sqltools.Describer {
	return func(db, table, column string) string {
		d := ws.dbs[db]
		if d == nil || d.desc.Column(table, column) == nil {
			return ""
		}
		return d.describe(table, column)
	}
}

// startTable is a write task's starting table: the condition's table
// alone, its columns named as initialize_active_data names them.
type startTable struct {
	prefix string
	names  map[*world.Column]string
	cols   []sqltools.Column
}

func (ws *writeState) start(sp *writeSpec) *startTable {
	prefix := ident.Column(sp.table.Name)
	if len(prefix) > 60 || prefix == "" {
		prefix = "t"
	}
	st := &startTable{prefix: prefix, names: map[*world.Column]string{}}
	rt := sp.db.db.Table(sp.table.Name)
	var cols []string
	for _, c := range rt.Columns {
		cols = append(cols, c.Name)
	}
	names := sqltools.StartColumnNames([]sqltools.StartTable{{Prefix: prefix, Columns: cols}})[0]
	for i, c := range rt.Columns {
		doc := sqltools.Column{Name: names[i], Type: c.Kind(), Description: sp.db.describe(sp.table.Name, c.Name)}
		st.cols = append(st.cols, doc)
		if wc := sp.table.Column(c.Name); wc != nil {
			st.names[wc] = names[i]
		}
	}
	return st
}

// writeColumns are the starting-table columns of the write tasks (for
// the SLOT and SEL column enums and getters).
func (ws *writeState) writeColumns() []sqltools.Column {
	var lists [][]sqltools.Column
	for _, sp := range ws.specs {
		if sp.reject == nil {
			lists = append(lists, ws.start(sp).cols)
		}
	}
	return sqltools.UnionColumns(lists...)
}

// keyCols are the columns that address a row of t: its primary key, or
// all its columns.
func keyCols(t *world.Table) []*world.Column {
	if len(t.Key) > 0 {
		return t.Key
	}
	return t.Columns
}

// writeTask makes sp's task for flavor over collection c (its tools),
// or says why it has none.
func (ws *writeState) writeTask(flavor string, sp *writeSpec, c *toolenv.Collection, finds map[string]*toolenv.Tool) (*toolenv.Task, *rejection) {
	t := &toolenv.Task{ID: sp.id, Collection: c.Name, Query: sp.query(), Source: "bird", Group: sp.db.name, Difficulty: "write",
		Meta: map[string]any{MetaWrite: sp.kind, "db": sp.db.name, "question_id": sp.source, "condition": sp.whereSQL(),
			"change_sql": sp.changeSQL(), endstate.MetaEndState: sp.expected}}
	initWorld := toolenv.GoldCall{Name: sqltools.OpInitWorld, Args: map[string]any{"database": sp.db.name}}
	var gold []toolenv.GoldCall
	switch flavor {
	case Slot, Sel:
		st := ws.start(sp)
		t.Meta[sqltools.MetaColumns] = st.cols
		t.Meta[sqltools.MetaInit] = []toolenv.GoldCall{initWorld, {Name: sqltools.InitTool, Label: sqltools.DefaultStartLabel,
			Args: map[string]any{"database": sp.db.name, "tables": []any{map[string]any{"name": sp.table.Name, "alias": "T1", "prefix": st.prefix}}}}}
		prev := "$" + sqltools.DefaultStartLabel + "$"
		for i, p := range sp.preds {
			args := map[string]any{"data_source": prev, "key_name": st.names[p.col]}
			switch len(p.vals) {
			case 0:
			case 1:
				args["value"] = p.vals[0]
			default:
				args["value"] = p.vals
			}
			name := "filter_data"
			if flavor == Sel {
				name = "select_data_" + p.cond
			} else {
				args["condition"] = p.cond
			}
			label := fmt.Sprintf("FOUND_%d", i+1)
			gold = append(gold, toolenv.GoldCall{Name: name, Args: args, Label: label})
			prev = "$" + label + "$"
		}
		read := func(cols []*world.Column, label string) (toolenv.GoldCall, *rejection) {
			if flavor == Slot {
				var names []any
				for _, c := range cols {
					names = append(names, st.names[c])
				}
				return toolenv.GoldCall{Name: "retrieve_data", Args: map[string]any{"data_source": prev, "key_names": names}, Label: label}, nil
			}
			if len(cols) != 1 {
				return toolenv.GoldCall{}, &rejection{Stage: "write", Reason: "SEL: the key has several columns", Detail: "SEL getters read one column at a time, and a key of several columns is one value per row: " + names(cols)}
			}
			return toolenv.GoldCall{Name: sqltools.GetterName(st.names[cols[0]]), Args: map[string]any{"data_source": prev}, Label: label}, nil
		}
		writeTool := func(op string, table *world.Table) string {
			if flavor == Slot {
				return op
			}
			return selWriteTool(c, op, sp.db.name, table.Name)
		}
		switch sp.kind {
		case WriteUpdate, WriteDelete:
			g, rj := read(keyCols(sp.table), "KEYS")
			if rj != nil {
				return nil, rj
			}
			gold = append(gold, g)
			args := map[string]any{"keys": "$KEYS$"}
			op := sqltools.OpDelete
			if sp.kind == WriteUpdate {
				op = sqltools.OpUpdate
				args["values"] = map[string]any{sp.setCol.Name: sp.setVal}
			}
			if flavor == Slot {
				args["table"] = sp.table.Name
			}
			gold = append(gold, toolenv.GoldCall{Name: writeTool(op, sp.table), Args: args, Label: "WRITTEN"})
		case WriteInsert:
			row := map[string]any{}
			for k, v := range sp.row {
				row[k] = v
			}
			for i, pc := range sp.fk.ParentCols {
				label := fmt.Sprintf("PARENT_%d", i+1)
				g, rj := read([]*world.Column{pc}, label)
				if rj != nil {
					return nil, rj
				}
				gold = append(gold, g)
				row[sp.fk.ChildCols[i].Name] = "$" + label + "$"
			}
			args := map[string]any{"rows": []any{row}}
			if flavor == Slot {
				args["table"] = sp.child.Name
			}
			gold = append(gold, toolenv.GoldCall{Name: writeTool(sqltools.OpInsert, sp.child), Args: args, Label: "WRITTEN"})
		}
		for _, g := range gold {
			if c.Tool(g.Name) == nil {
				return nil, &rejection{Stage: "write", Reason: "no tool for a gold call", Detail: g.Name}
			}
		}
		t.Tools = writeTaskTools(flavor, c, sp, st)
	case Rest:
		t.Meta[sqltools.MetaInit] = []toolenv.GoldCall{initWorld}
		find := finds[sp.id]
		if find == nil {
			return nil, &rejection{Stage: "write", Reason: "no find endpoint", Detail: sp.whereSQL()}
		}
		gold = append(gold, toolenv.GoldCall{Name: find.Name, Args: findArgs(sp), Label: "FOUND"})
		cols := sp.table.Columns
		ref := func(row int, c *world.Column) string {
			for j, x := range cols {
				if x == c {
					return fmt.Sprintf("$FOUND.rows[%d][%d]$", row, j)
				}
			}
			return ""
		}
		switch sp.kind {
		case WriteUpdate, WriteDelete:
			op := sqlrest.OpDelete
			if sp.kind == WriteUpdate {
				op = sqlrest.OpUpdate
			}
			tool := restTableTool(c, op, sp.db.name, sp.table.Name)
			if tool == nil {
				return nil, &rejection{Stage: "write", Reason: "no table endpoint", Detail: op + " " + sp.table.Name}
			}
			n := sp.found
			if len(sp.table.Key) == 0 {
				n = sp.distinct
			}
			for i := 0; i < n; i++ {
				args := map[string]any{}
				for _, kc := range keyCols(sp.table) {
					args[restParam(tool, kc.Name)] = ref(i, kc)
				}
				if sp.kind == WriteUpdate {
					args[restParam(tool, sp.setCol.Name)] = sp.setVal
				}
				gold = append(gold, toolenv.GoldCall{Name: tool.Name, Args: args, Label: fmt.Sprintf("WRITTEN_%d", i+1)})
			}
		case WriteInsert:
			tool := restTableTool(c, sqlrest.OpInsert, sp.db.name, sp.child.Name)
			if tool == nil {
				return nil, &rejection{Stage: "write", Reason: "no table endpoint", Detail: "create " + sp.child.Name}
			}
			args := map[string]any{}
			for k, v := range sp.row {
				args[restParam(tool, k)] = v
			}
			for i, pc := range sp.fk.ParentCols {
				args[restParam(tool, sp.fk.ChildCols[i].Name)] = ref(0, pc)
			}
			gold = append(gold, toolenv.GoldCall{Name: tool.Name, Args: args, Label: "WRITTEN"})
		}
		t.Tools = restTaskTools(c, sp.db.name)
	}
	t.Gold = gold
	return t, nil
}

// selWriteTool finds the SEL write tool of op for table of db.
func selWriteTool(c *toolenv.Collection, op, db, table string) string {
	for _, t := range c.Tools {
		if t.Meta[sqltools.MetaOp] != op {
			continue
		}
		var fixed map[string]any
		if json.Unmarshal([]byte(t.Meta[sqltools.MetaFixed]), &fixed) != nil {
			continue
		}
		if fixed["table"] == table && (fixed["database"] == nil || fixed["database"] == db) {
			return t.Name
		}
	}
	return ""
}

// restTableTool finds the REST table endpoint of op for table of db.
func restTableTool(c *toolenv.Collection, op, db, table string) *toolenv.Tool {
	for _, t := range c.Tools {
		if t.Meta[sqlrest.MetaOp] == op && t.Meta[sqlrest.MetaTable] == table && t.Meta[sqlrest.MetaDatabase] == db {
			return t
		}
	}
	return nil
}

// restParam is the parameter of table endpoint t that sets column.
func restParam(t *toolenv.Tool, column string) string {
	var cols map[string]string
	_ = json.Unmarshal([]byte(t.Meta[sqlrest.MetaColumns]), &cols)
	for p, c := range cols {
		if c == column {
			return p
		}
	}
	return column
}

// writeTaskTools are the tools a SLOT or SEL write task offers: the
// read tools (SEL: the getters of its starting table's columns) and the
// write tools of its database.
func writeTaskTools(flavor string, c *toolenv.Collection, sp *writeSpec, st *startTable) []string {
	getters := map[string]bool{}
	for _, col := range append(append([]sqltools.Column(nil), st.cols...), sqltools.AddedColumns()...) {
		getters[sqltools.GetterName(col.Name)] = true
	}
	var out []string
	for _, t := range c.Tools {
		if t.Hidden() {
			continue
		}
		op := t.Meta[sqltools.MetaOp]
		if op == "get_column" && !getters[t.Name] {
			continue
		}
		if flavor == Sel && (op == sqltools.OpInsert || op == sqltools.OpUpdate || op == sqltools.OpDelete) {
			var fixed map[string]any
			_ = json.Unmarshal([]byte(t.Meta[sqltools.MetaFixed]), &fixed)
			if db, ok := fixed["database"]; ok && db != sp.db.name {
				continue
			}
			if ws := sp.schema.Table(fmt.Sprint(fixed["table"])); ws == nil {
				continue
			}
		}
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// restTaskTools are the REST endpoints of db.
func restTaskTools(c *toolenv.Collection, db string) []string {
	var out []string
	for _, t := range c.Tools {
		if !t.Hidden() && t.Meta[sqlrest.MetaDatabase] == db {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// query is the task's request, in words.
func (sp *writeSpec) query() string {
	rows := fmt.Sprintf("the %s row", sp.table.Name)
	if sp.found > 1 {
		rows = fmt.Sprintf("every %s row", sp.table.Name)
	}
	cond := sp.condPhrase()
	switch sp.kind {
	case WriteUpdate:
		return fmt.Sprintf("In the %s database, set %s to %s for %s whose %s.", sp.db.name, sp.setCol.Name, phraseValue(sp.setVal), rows, cond)
	case WriteDelete:
		return fmt.Sprintf("In the %s database, delete %s whose %s.", sp.db.name, rows, cond)
	}
	var vals []string
	var keys []string
	for k := range sp.row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals = append(vals, k+" "+phraseValue(sp.row[k]))
	}
	what := "with " + strings.Join(vals, ", ")
	if len(vals) == 0 {
		what = "with the defaults"
	}
	return fmt.Sprintf("In the %s database, add a %s row that refers (through %s) to the %s row whose %s, %s.", sp.db.name, sp.child.Name, names(sp.fk.ChildCols), sp.table.Name, cond, what)
}

func names(cols []*world.Column) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return strings.Join(out, ", ")
}

// condPhrase is the condition in words.
func (sp *writeSpec) condPhrase() string {
	var parts []string
	for _, p := range sp.preds {
		n := p.col.Name
		switch p.cond {
		case "equal_to":
			parts = append(parts, fmt.Sprintf("%s is %s", n, phraseValue(p.vals[0])))
		case "not_equal_to":
			parts = append(parts, fmt.Sprintf("%s is not %s", n, phraseValue(p.vals[0])))
		case "greater_than":
			parts = append(parts, fmt.Sprintf("%s is greater than %s", n, phraseValue(p.vals[0])))
		case "greater_than_equal_to":
			parts = append(parts, fmt.Sprintf("%s is at least %s", n, phraseValue(p.vals[0])))
		case "less_than":
			parts = append(parts, fmt.Sprintf("%s is less than %s", n, phraseValue(p.vals[0])))
		case "less_than_equal_to":
			parts = append(parts, fmt.Sprintf("%s is at most %s", n, phraseValue(p.vals[0])))
		case "like":
			parts = append(parts, fmt.Sprintf("%s matches the pattern %s (SQL LIKE)", n, phraseValue(p.vals[0])))
		case "not_like":
			parts = append(parts, fmt.Sprintf("%s does not match the pattern %s (SQL LIKE)", n, phraseValue(p.vals[0])))
		case "between":
			parts = append(parts, fmt.Sprintf("%s is between %s and %s", n, phraseValue(p.vals[0]), phraseValue(p.vals[1])))
		case "in", "not_in":
			var vs []string
			for _, v := range p.vals {
				vs = append(vs, phraseValue(v))
			}
			neg := ""
			if p.cond == "not_in" {
				neg = "not "
			}
			parts = append(parts, fmt.Sprintf("%s is %sone of %s", n, neg, strings.Join(vs, ", ")))
		case "is_null":
			parts = append(parts, n+" is empty (NULL)")
		case "is_not_null":
			parts = append(parts, n+" is not empty (not NULL)")
		}
	}
	return strings.Join(parts, " and ")
}

func phraseValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// findTools makes the REST find endpoints of the specs: one per
// condition template (conditions that differ only in their literals
// share one), returning the rows of the condition's table (every
// column; a table without a key its distinct rows) ordered by key.
func findTools(specs []*writeSpec) (map[string]*toolenv.Tool, []*toolenv.Tool) {
	byID := map[string]*toolenv.Tool{}
	byTemplate := map[string]*toolenv.Tool{}
	used := map[string]bool{}
	var list []*toolenv.Tool
	for _, sp := range specs {
		if sp.reject != nil {
			continue
		}
		tmpl, params := findTemplate(sp)
		key := sp.db.name + "\x00" + tmpl
		if t := byTemplate[key]; t != nil {
			byID[sp.id] = t
			continue
		}
		var pnames []string
		in := toolenv.ObjectSchema()
		for _, p := range params {
			in.SetProp(p.name, &toolenv.Schema{Type: p.typ, Description: p.desc})
			in.Required = append(in.Required, p.name)
			pnames = append(pnames, p.name)
		}
		in.AdditionalProperties = json.RawMessage("false")
		base := "find_" + ident.Column(sp.table.Name)
		if len(pnames) > 0 {
			base += "_by_" + strings.Join(pnames, "_and_")
		}
		name := ident.Limit(base, 64)
		for k := 2; used[name]; k++ {
			name = ident.Limit(fmt.Sprintf("%s_v%d", base, k), 64)
		}
		used[name] = true
		out := toolenv.ObjectSchema()
		out.Description = "The rows found; columns: " + names(sp.table.Columns)
		t := &toolenv.Tool{Name: name, Title: endpointTitle(name), Group: sp.db.name,
			Description: fmt.Sprintf("Returns the rows of %s (every column: %s) whose %s, ordered by %s; in the caller's world when the call has a session.", sp.table.Name, names(sp.table.Columns), sp.paramPhrase(params), names(keyCols(sp.table))),
			Input:       in, Output: out,
			Binding: &toolenv.Binding{Method: "GET", Path: "/v1/bird/" + ident.Column(sp.db.name) + "/" + strings.TrimPrefix(name, "get_")},
			Meta:    map[string]string{sqlrest.MetaSQL: tmpl, sqlrest.MetaDatabase: sp.db.name, toolenv.MetaState: toolenv.StateRead}}
		byTemplate[key], byID[sp.id] = t, t
		list = append(list, t)
	}
	return byID, list
}

func endpointTitle(name string) string {
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// findParam is one parameter of a find endpoint.
type findParam struct {
	name, typ, desc string
	val             any
}

// findTemplate is a find endpoint's SQL, its literals made parameters.
func findTemplate(sp *writeSpec) (string, []findParam) {
	var params []findParam
	used := map[string]bool{}
	add := func(base string, v any, desc string) string {
		name := base
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s_%d", base, k)
		}
		used[name] = true
		typ := "string"
		switch v.(type) {
		case int64:
			typ = "integer"
		case float64:
			typ = "number"
		}
		params = append(params, findParam{name: name, typ: typ, desc: desc, val: v})
		return ":" + name
	}
	var parts []string
	for _, p := range sp.preds {
		col := rodb.Quote(p.col.Name)
		n := ident.Column(p.col.Name)
		what := fmt.Sprintf("(%s.%s)", sp.table.Name, p.col.Name)
		switch p.cond {
		case "like", "not_like":
			parts = append(parts, col+map[bool]string{true: " NOT LIKE ", false: " LIKE "}[p.cond == "not_like"]+add(n+"_pattern", p.vals[0], "the LIKE pattern "+what))
		case "between":
			parts = append(parts, col+" BETWEEN "+add("min_"+n, p.vals[0], "the lowest value "+what)+" AND "+add("max_"+n, p.vals[1], "the highest value "+what))
		case "in", "not_in":
			var vs []string
			for i, v := range p.vals {
				vs = append(vs, add(fmt.Sprintf("%s_%d", n, i+1), v, fmt.Sprintf("value %d %s", i+1, what)))
			}
			parts = append(parts, col+map[bool]string{true: " NOT IN (", false: " IN ("}[p.cond == "not_in"]+strings.Join(vs, ", ")+")")
		case "is_null":
			parts = append(parts, col+" IS NULL")
		case "is_not_null":
			parts = append(parts, col+" IS NOT NULL")
		default:
			prefix := map[string]string{"not_equal_to": "excluded_", "greater_than": "min_", "greater_than_equal_to": "min_", "less_than": "max_", "less_than_equal_to": "max_"}[p.cond]
			parts = append(parts, col+" "+sqlOps[p.cond]+" "+add(prefix+n, p.vals[0], "the value compared "+what))
		}
	}
	sel := "SELECT "
	if len(sp.table.Key) == 0 {
		sel += "DISTINCT "
	}
	q := sel + colList(sp.table.Columns) + " FROM " + rodb.Quote(sp.table.Name) + " WHERE " + strings.Join(parts, " AND ") + " ORDER BY " + colList(keyCols(sp.table))
	return q, params
}

// paramPhrase describes a find endpoint's condition by its parameters.
func (sp *writeSpec) paramPhrase(params []findParam) string {
	if len(params) == 0 {
		return sp.condPhrase()
	}
	var ps []string
	for _, p := range params {
		ps = append(ps, "`"+p.name+"`")
	}
	return "columns compare with " + strings.Join(ps, ", ") + " as the condition says (" + sp.condPhraseGeneric() + ")"
}

// condPhraseGeneric is the condition without its values.
func (sp *writeSpec) condPhraseGeneric() string {
	var parts []string
	for _, p := range sp.preds {
		parts = append(parts, p.col.Name+" "+strings.ReplaceAll(p.cond, "_", " "))
	}
	return strings.Join(parts, " and ")
}

// findArgs are the find call's arguments: the condition's literals.
func findArgs(sp *writeSpec) map[string]any {
	_, params := findTemplate(sp)
	out := map[string]any{}
	for _, p := range params {
		out[p.name] = p.val
	}
	return out
}

// verifyWrite runs a write task's init and gold calls through h in a
// fresh session (references to earlier outputs resolved as the oracle
// resolves them), reads the world's changes and compares them with the
// task's gold end state: "" when they are exactly it.
func verifyWrite(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, t *toolenv.Task, session string) (reason, detail string) {
	if d, ok := h.(sessionDropper); ok {
		defer d.DropSession(session)
	}
	var cols []sqltools.Column
	if _, ok := t.Meta[sqltools.MetaColumns]; ok {
		var err error
		if cols, err = sqltools.TaskColumns(t); err != nil {
			return "task tools", err.Error()
		}
	}
	var v validate.Validator
	inits, err := sqltools.InitCalls(t)
	if err != nil {
		return "bad task", err.Error()
	}
	outputs := map[string]json.RawMessage{}
	run := func(g toolenv.GoldCall) *toolenv.Result {
		tool := c.Tool(g.Name)
		if tool == nil {
			return toolenv.Errorf(toolenv.StatusUnknownTool, "", "no tool %s", g.Name)
		}
		args := g.Args
		if tool.LabelArg() == "" {
			if args, err = agent.ResolveRefs(g.Args, outputs); err != nil {
				return toolenv.Errorf(toolenv.StatusInvalidArguments, "", "%v", err)
			}
		}
		callArgs := sqltools.CallArgs(toolenv.GoldCall{Name: g.Name, Args: args, Label: g.Label}, tool)
		// Every call, its references resolved, is checked strictly
		// against the schema of the tool as the task shows it.
		shown := tool
		if cols != nil {
			shown = sqltools.ForColumns([]*toolenv.Tool{tool}, cols)[0]
		}
		if out := v.Args(shown.Input, callArgs, false); len(out.Problems) > 0 {
			p := out.Problems[0]
			return &toolenv.Result{Status: "schema", Error: fmt.Sprintf("%s: %s", p.Param, p.Message)}
		}
		res := h.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: c, Args: callArgs, Session: session, Frontend: "go"})
		if res.OK() && g.Label != "" && tool.LabelArg() == "" {
			outputs[g.Label] = res.Body
		}
		return res
	}
	for _, g := range append(append([]toolenv.GoldCall(nil), inits...), t.Gold...) {
		if res := run(g); !res.OK() {
			if res.Status == "schema" {
				return "gold call fails schema", fmt.Sprintf("%s (%s): %s", g.Name, g.Label, res.Error)
			}
			return "gold call fails: " + string(res.Status), fmt.Sprintf("%s: %s", g.Name, res.Error)
		}
	}
	res := run(toolenv.GoldCall{Name: sqltools.OpInspect, Args: map[string]any{}})
	if !res.OK() {
		return "world unreadable", res.Error
	}
	var rep endstate.Report
	if err := toolenv.DecodeJSON(res.Body, &rep); err != nil {
		return "world unreadable", err.Error()
	}
	gold, _, err := endstate.GoldChanges(t)
	if err != nil || gold == nil {
		return "bad task", fmt.Sprint(err)
	}
	d := endstate.Compare(gold, rep.Changes)
	switch {
	case d.Collateral > 0:
		return "gold calls change other rows", strings.Join(d.Examples, "; ")
	case !d.StateMatch:
		return "gold calls do not make the change", strings.Join(d.Examples, "; ")
	}
	return "", ""
}

// WriteReport counts a flavor's write tasks: kept and dropped, by
// database, and every drop with its reason.
type WriteReport struct {
	// Candidates are the write tasks generated for the flavor.
	Candidates int            `json:"candidates"`
	Kept       int            `json:"kept"`
	KeptByDB   map[string]int `json:"kept_by_db"`
	Dropped    int            `json:"dropped"`
	// DroppedByDB counts the drops by database.
	DroppedByDB map[string]int `json:"dropped_by_db"`
	// ByKind counts the kept tasks by kind (update, delete, insert).
	ByKind     map[string]int     `json:"kept_by_kind"`
	Rejections []WriteReasonGroup `json:"rejections"`
	// Tools counts the write tools (and REST find endpoints) added.
	Tools int `json:"tools"`
}

// WriteReasonGroup is the write tasks dropped for one reason.
type WriteReasonGroup struct {
	Stage  string         `json:"stage"`
	Reason string         `json:"reason"`
	Count  int            `json:"count"`
	Tasks  []WriteDropped `json:"tasks"`
}

// WriteDropped is one dropped write task.
type WriteDropped struct {
	ID     string `json:"id"`
	DB     string `json:"db"`
	Detail string `json:"detail,omitempty"`
}

func newWriteReport() *WriteReport {
	return &WriteReport{KeptByDB: map[string]int{}, DroppedByDB: map[string]int{}, ByKind: map[string]int{}}
}

// drop records a dropped task.
func (r *WriteReport) drop(db, id string, rj *rejection) {
	if r == nil {
		return
	}
	r.Dropped++
	r.DroppedByDB[db]++
	for i := range r.Rejections {
		g := &r.Rejections[i]
		if g.Stage == rj.Stage && g.Reason == rj.Reason {
			g.Count++
			g.Tasks = append(g.Tasks, WriteDropped{ID: id, DB: db, Detail: rj.Detail})
			return
		}
	}
	r.Rejections = append(r.Rejections, WriteReasonGroup{Stage: rj.Stage, Reason: rj.Reason, Count: 1, Tasks: []WriteDropped{{ID: id, DB: db, Detail: rj.Detail}}})
}

func (r *WriteReport) sort() {
	sort.SliceStable(r.Rejections, func(i, j int) bool {
		if r.Rejections[i].Count != r.Rejections[j].Count {
			return r.Rejections[i].Count > r.Rejections[j].Count
		}
		return r.Rejections[i].Reason < r.Rejections[j].Reason
	})
}

// sessionTools are the SLOT or SEL tools of a writable collection: the
// read tools (their column enums holding the write tasks' columns too),
// the hidden tools, the write tools.
func (ws *writeState) sessionTools(flavor string, plans []*decompose.Plan, dbs []string) []*toolenv.Tool {
	cols := sqltools.UnionColumns(toolColumns(plans), ws.writeColumns())
	var tools []*toolenv.Tool
	if flavor == Slot {
		tools = sqltools.SlotTools(cols)
	} else {
		tools = sqltools.SelTools(cols)
	}
	for _, t := range tools {
		t.Meta[toolenv.MetaState] = toolenv.StateRead
	}
	tools = append(tools, sqltools.InitToolDef(dbs))
	tools = append(tools, sqltools.WorldToolDefs(dbs, nil)...)
	return append(tools, sqltools.WriteToolDefs(flavor, ws.schemas, ws.describer())...)
}

// restTools are the table endpoints and hidden world tools of a
// writable REST collection.
func (ws *writeState) restTools(dbs []string) []*toolenv.Tool {
	return append(sqlrest.TableToolDefs(ws.schemas, ws.describer()), sqltools.WorldToolDefs(dbs, nil)...)
}

// setFinds remembers the REST find endpoints of the specs.
func (ws *writeState) setFinds(finds map[string]*toolenv.Tool) {
	if ws != nil {
		ws.finds = finds
	}
}

// readOnly drops the write tools from names (a question's task).
func readOnly(c *toolenv.Collection, names []string) []string {
	out := names[:0]
	for _, n := range names {
		if t := c.Tool(n); t == nil || t.State() != toolenv.StateWrite {
			out = append(out, n)
		}
	}
	return out
}

// build makes, verifies and reports flavor's write tasks over c.
func (ws *writeState) build(ctx context.Context, flavor string, c *toolenv.Collection, shared map[string]*rodb.DB, opt *Options) ([]*toolenv.Task, *WriteReport, error) {
	rep := newWriteReport()
	finds := map[*toolenv.Tool]bool{}
	for _, t := range ws.finds {
		finds[t] = true
	}
	for _, t := range c.Tools {
		switch op := t.Meta[sqltools.MetaOp]; {
		case op == sqltools.OpInitWorld, op == sqltools.OpInspect, t.State() == toolenv.StateWrite, t.Meta[sqlrest.MetaTable] != "", finds[t]:
			rep.Tools++
		}
	}
	var tasks []*toolenv.Task
	var specs []*writeSpec
	for _, sp := range ws.specs {
		rep.Candidates++
		if sp.reject != nil {
			rep.drop(sp.db.name, sp.id, sp.reject)
			continue
		}
		t, rj := ws.writeTask(flavor, sp, c, ws.finds)
		if rj == nil {
			var err error
			if t, err = marshalMeta(t); err != nil {
				rj = &rejection{Stage: "build", Reason: "task not writable as JSON", Detail: err.Error()}
			}
		}
		if rj != nil {
			rep.drop(sp.db.name, sp.id, rj)
			continue
		}
		tasks, specs = append(tasks, t), append(specs, sp)
	}
	h, closer, err := openBackend(ctx, c, shared, opt.MaxCallTimeout, opt)
	if err != nil {
		return nil, nil, err
	}
	defer closer()
	var kept []*toolenv.Task
	for i, t := range tasks {
		opt.progress("verify writes "+flavor, i, len(tasks))
		if reason, detail := verifyWrite(ctx, h, c, t, fmt.Sprintf("verify-%s-%s", flavor, t.ID)); reason != "" {
			rep.drop(specs[i].db.name, t.ID, &rejection{Stage: "verify", Reason: reason, Detail: detail})
			continue
		}
		kept = append(kept, t)
		rep.Kept++
		rep.KeptByDB[t.Group]++
		rep.ByKind[specs[i].kind]++
	}
	opt.progress("verify writes "+flavor, len(tasks), len(tasks))
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	rep.sort()
	return kept, rep, nil
}
