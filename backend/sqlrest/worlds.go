package sqlrest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/internal/ident"
)

// The Tool.Meta keys of table endpoints (writes by key) and their
// operations.
const (
	// MetaOp is a table endpoint's operation (OpInsert, OpUpdate,
	// OpDelete), or a hidden world tool's (initialize_world,
	// inspect_world).
	MetaOp = "op"
	// MetaTable is the table a table endpoint writes.
	MetaTable = "table"
	// MetaKey lists (JSON) the parameters that are the row's key, in key
	// order.
	MetaKey = "key"
	// MetaColumns maps (JSON) each parameter to the column it sets.
	MetaColumns = "columns"
)

// The operations of table endpoints.
const (
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
)

// NoWorldHint says how to get a world for writes.
const NoWorldHint = "writes change a world of your own, never the shared database: get a session (POST /sessions; send its id as X-Toolenv-Session on every call, reads included), or run the task as an episode"

// openWorlds makes the backend that keeps the sessions' worlds: a
// sqltools backend over the same databases, serving the hidden world
// tools and the writes, whose log entries carry this collection's name.
func (b *Backend) openWorlds(ctx context.Context, c *toolenv.Collection, cfg Config) error {
	open := b.dbs.Open()
	names := make([]string, 0, len(open))
	for n := range open {
		names = append(names, n)
	}
	sort.Strings(names)
	var named []string
	for n := range cfg.InitialStates {
		named = append(named, n)
	}
	sort.Strings(named)
	tools := append(sqltools.WorldToolDefs(names, named), sqltools.WriteToolDefs(sqltools.FlavorSlot, nil, nil)...)
	wc := toolenv.NewCollection(c.Name, c.Kind, tools)
	wc.Dir = c.Dir
	files := map[string]string{}
	for n := range open {
		files[n] = n
	}
	raw, err := json.Marshal(sqltools.Config{Flavor: sqltools.FlavorSlot, Databases: files, InitialStates: cfg.InitialStates})
	if err != nil {
		return err
	}
	wc.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: raw}
	w, err := sqltools.Open(ctx, wc, sqltools.Options{Databases: open, Log: b.opt.Log, CallTimeout: b.opt.CallTimeout, Logger: b.opt.Logger,
		SessionIdle: b.opt.SessionIdle, SessionMaxBytes: b.opt.SessionMaxBytes, World: b.opt.World, Now: b.opt.Now, MaxRows: b.opt.MaxRows})
	if err != nil {
		return err
	}
	b.worlds, b.wcoll = w, wc
	return nil
}

// worldTool runs a hidden world tool (initialize_world, inspect_world)
// in the call's session.
func (b *Backend) worldTool(ctx context.Context, call *toolenv.Call, e *endpoint) *toolenv.Result {
	if b.worlds == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "%s: this collection keeps no worlds", call.Tool.Name)
	}
	if call.Session == "" {
		return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: call.Tool.Name + " runs in a session, and this call has none", Hint: NoWorldHint}
	}
	return b.worlds.Invoke(ctx, &toolenv.Call{Tool: b.wcoll.Tool(e.op), Collection: b.wcoll, Args: call.Args, Session: call.Session, Frontend: call.Frontend, RequestID: call.RequestID})
}

// write runs a table endpoint in the call's session's world. given
// holds the arguments by parameter (nil: an explicit null).
func (b *Backend) write(ctx context.Context, call *toolenv.Call, e *endpoint, given map[string]any) *toolenv.Result {
	if b.worlds == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "%s: this collection keeps no worlds", call.Tool.Name)
	}
	if call.Session == "" {
		return &toolenv.Result{Status: toolenv.StatusInvalidArguments,
			Error: fmt.Sprintf("%s writes, and this call has no session: outside a session the database is read-only", call.Tool.Name), Hint: NoWorldHint,
			Problems: []toolenv.Problem{{Code: "no_world", Message: "a write needs a session (a world)", Expected: "the X-Toolenv-Session header"}}}
	}
	isKey := map[string]bool{}
	key := make([]any, len(e.key))
	for i, p := range e.key {
		isKey[p] = true
		key[i] = given[p]
	}
	args := map[string]any{"table": e.table, "database": e.db}
	values := map[string]any{}
	for _, p := range e.params {
		v, ok := given[p.name]
		if !ok || (isKey[p.name] && e.op != OpInsert) {
			continue
		}
		values[p.column] = v
	}
	var op string
	switch e.op {
	case OpInsert:
		op, args["rows"] = sqltools.OpInsert, []any{values}
	case OpUpdate:
		op, args["keys"], args["values"] = sqltools.OpUpdate, []any{key}, values
	case OpDelete:
		op, args["keys"] = sqltools.OpDelete, []any{key}
	}
	res := b.worlds.Invoke(ctx, &toolenv.Call{Tool: b.wcoll.Tool(op), Collection: b.wcoll, Args: args, Session: call.Session, Frontend: call.Frontend, RequestID: call.RequestID})
	for i := range res.Problems {
		// The world names columns; the caller's parameters are named
		// after them (rows[0].x, values.x, keys[0] → x).
		res.Problems[i].Param = e.paramOf(res.Problems[i].Param)
	}
	return res
}

// paramOf turns a problem's path in the world's arguments into the
// parameter of the endpoint it came from.
func (e *endpoint) paramOf(path string) string {
	col := path
	if i := strings.LastIndex(col, "."); i >= 0 {
		col = col[i+1:]
	} else if strings.HasPrefix(col, "keys") && len(e.key) == 1 {
		return e.key[0]
	}
	for _, p := range e.params {
		if strings.EqualFold(p.column, col) {
			return p.public
		}
	}
	return path
}

// DropSession ends a session's world now; it reports whether it
// existed.
func (b *Backend) DropSession(id string) bool {
	return b.worlds != nil && b.worlds.DropSession(id)
}

// CheckpointSession returns how many successful calls session id's
// world holds (see sqltools.Backend.CheckpointSession): a REST
// episode's step is atomic as a SLOT or SEL one is.
func (b *Backend) CheckpointSession(id string) int64 {
	if b.worlds == nil {
		return 0
	}
	return b.worlds.CheckpointSession(id)
}

// RollbackSession takes session id's world back to its first n
// successful calls (see sqltools.Backend.RollbackSession): the rows a
// cut step wrote are gone.
func (b *Backend) RollbackSession(ctx context.Context, id string, n int64) error {
	if b.worlds == nil {
		return nil
	}
	return b.worlds.RollbackSession(ctx, id, n)
}

// PinSession keeps session id's world out of the idle and memory
// evictions until DropSession (see sqltools.Backend.PinSession).
func (b *Backend) PinSession(id string) {
	if b.worlds != nil {
		b.worlds.PinSession(id)
	}
}

// Stats reports the sessions' worlds this backend holds.
func (b *Backend) Stats() sqltools.Stats {
	if b.worlds == nil {
		return sqltools.Stats{}
	}
	return b.worlds.Stats()
}

// TableToolDefs returns the table endpoints of schemas (by database
// name): per writable table, create_<table> (POST), and with a primary
// key get_<table>_by_key (GET), update_<table> (PATCH) and
// delete_<table> (DELETE) by key in the path; a table without one is
// deleted by all its columns, in the query. Every write runs in the
// caller's session's world; outside a session the database is read-only.
func TableToolDefs(schemas map[string]*world.Schema, describe sqltools.Describer) []*toolenv.Tool {
	dbs := make([]string, 0, len(schemas))
	for n := range schemas {
		dbs = append(dbs, n)
	}
	sort.Strings(dbs)
	count := map[string]int{}
	for _, db := range dbs {
		for _, t := range sqltools.WritableTables(schemas[db]) {
			count[ident.Column(t.Name)]++
		}
	}
	var tools []*toolenv.Tool
	used := map[string]bool{}
	uniq := func(name string) string {
		name = ident.Limit(name, 64)
		for k := 2; used[name]; k++ {
			name = ident.Limit(fmt.Sprintf("%s_%d", name, k), 64)
		}
		used[name] = true
		return name
	}
	for _, db := range dbs {
		for _, t := range sqltools.WritableTables(schemas[db]) {
			base := ident.Column(t.Name)
			if count[base] > 1 {
				base = ident.Column(db) + "_" + base
			}
			tools = append(tools, tableTools(db, t, base, uniq, describe)...)
		}
	}
	return tools
}

// tableTools are one table's endpoints.
func tableTools(db string, t *world.Table, base string, uniq func(string) string, describe sqltools.Describer) []*toolenv.Tool {
	path := "/v1/bird/" + ident.Column(db) + "/" + ident.Column(t.Name)
	params := map[*world.Column]string{}
	usedP := map[string]bool{}
	cols := map[string]string{}
	for _, c := range t.Columns {
		p := ident.Column(c.Name)
		for k := 2; usedP[strings.ToLower(p)]; k++ {
			p = fmt.Sprintf("%s_%d", ident.Column(c.Name), k)
		}
		usedP[strings.ToLower(p)] = true
		params[c] = p
		cols[p] = c.Name
	}
	colsJSON, _ := json.Marshal(cols)
	var keyParams []string
	for _, c := range t.Key {
		keyParams = append(keyParams, params[c])
	}
	keyJSON, _ := json.Marshal(keyParams)
	meta := func(op string, state string) map[string]string {
		m := map[string]string{MetaDatabase: db, MetaTable: t.Name, MetaColumns: string(colsJSON), toolenv.MetaState: state}
		if op != "" {
			m[MetaOp] = op
		}
		switch op {
		case OpInsert:
			m[toolenv.MetaDestructive] = "false"
		case OpUpdate, OpDelete:
			m[toolenv.MetaIdempotent] = "true"
		}
		return m
	}
	where := t.Name
	keyDoc := strings.Join(t.KeyNames(), ", ")
	var tools []*toolenv.Tool
	// create
	in := toolenv.ObjectSchema()
	bin := map[string]string{}
	for _, c := range t.Columns {
		s := sqltools.ColumnSchema(db, t, c, describe)
		in.SetProp(params[c], s)
		bin[params[c]] = "body"
		if c != t.Alias && (c.PK > 0 || (c.NotNull && c.Default == "")) {
			in.Required = append(in.Required, params[c])
		}
	}
	in.AdditionalProperties = json.RawMessage("false")
	m := meta(OpInsert, toolenv.StateWrite)
	m[MetaKey] = string(keyJSON)
	tools = append(tools, &toolenv.Tool{Name: uniq("create_" + base), Title: "Create " + t.Name,
		Description: fmt.Sprintf("Adds a row to %s in the caller's world (the session's own copy of the data; outside a session the database is read-only). The table's rules hold: types, NOT NULL, primary and unique keys, foreign keys. Returns the row as stored.", where),
		Input:       in, Binding: &toolenv.Binding{Method: "POST", Path: path, In: bin}, Meta: m})
	if len(t.Key) == 0 {
		del := toolenv.ObjectSchema()
		for _, c := range t.Columns {
			s := sqltools.ColumnSchema(db, t, c, describe)
			del.SetProp(params[c], s)
			del.Required = append(del.Required, params[c])
		}
		del.AdditionalProperties = json.RawMessage("false")
		var all []string
		for _, c := range t.Columns {
			all = append(all, params[c])
		}
		allJSON, _ := json.Marshal(all)
		m := meta(OpDelete, toolenv.StateWrite)
		m[MetaKey] = string(allJSON)
		tools = append(tools, &toolenv.Tool{Name: uniq("delete_" + base), Title: "Delete " + t.Name + " rows",
			Description: fmt.Sprintf("Deletes the rows of %s (which has no primary key) equal to the values given, every column, in the caller's world. A null value matches NULL. Returns the rows deleted.", where),
			Input:       del, Binding: &toolenv.Binding{Method: "DELETE", Path: path}, Meta: m})
		return tools
	}
	keyPath := path
	keyIn := toolenv.ObjectSchema()
	kb := map[string]string{}
	for _, c := range t.Key {
		keyPath += "/{" + params[c] + "}"
		s := sqltools.ColumnSchema(db, t, c, describe)
		s.AnyOf, s.Type = nil, c.Kind
		if c.Kind == "any" {
			s.Type = "string"
		}
		keyIn.SetProp(params[c], s)
		keyIn.Required = append(keyIn.Required, params[c])
		kb[params[c]] = "path"
	}
	keyIn.AdditionalProperties = json.RawMessage("false")
	// get by key: an SQL template
	var conds []string
	for _, c := range t.Key {
		conds = append(conds, quote(c.Name)+" = :"+params[c])
	}
	var selCols []string
	for _, c := range t.Columns {
		selCols = append(selCols, quote(c.Name))
	}
	gm := meta("", toolenv.StateRead)
	gm[MetaSQL] = "SELECT " + strings.Join(selCols, ", ") + " FROM " + quote(t.Name) + " WHERE " + strings.Join(conds, " AND ")
	tools = append(tools, &toolenv.Tool{Name: uniq("get_" + base + "_by_key"), Title: "Get a " + t.Name + " row by key",
		Description: fmt.Sprintf("Returns the row of %s whose key (%s) is given, in the caller's world when the call has a session (its writes included), else in the database.", where, keyDoc),
		Input:       keyIn, Binding: &toolenv.Binding{Method: "GET", Path: keyPath, In: kb}, Meta: gm})
	// update
	up := keyIn.Clone()
	ub := map[string]string{}
	for k, v := range kb {
		ub[k] = v
	}
	for _, c := range t.Columns {
		if c.PK > 0 {
			continue
		}
		up.SetProp(params[c], sqltools.ColumnSchema(db, t, c, describe))
		ub[params[c]] = "body"
	}
	um := meta(OpUpdate, toolenv.StateWrite)
	um[MetaKey] = string(keyJSON)
	tools = append(tools, &toolenv.Tool{Name: uniq("update_" + base), Title: "Update a " + t.Name + " row",
		Description: fmt.Sprintf("Sets the columns given (others are left as they are; null sets NULL) of the row of %s whose key (%s) is in the path, in the caller's world. The table's rules hold. A key cannot be changed: delete the row and create it anew. Returns the row as it is now.", where, keyDoc),
		Input:       up, Binding: &toolenv.Binding{Method: "PATCH", Path: keyPath, In: ub}, Meta: um})
	dm := meta(OpDelete, toolenv.StateWrite)
	dm[MetaKey] = string(keyJSON)
	tools = append(tools, &toolenv.Tool{Name: uniq("delete_" + base), Title: "Delete a " + t.Name + " row",
		Description: fmt.Sprintf("Deletes the row of %s whose key (%s) is in the path, in the caller's world. A row other rows refer to is deleted only when their foreign key says what happens to them (CASCADE, SET NULL); otherwise delete them first. Returns the row deleted.", where, keyDoc),
		Input:       keyIn.Clone(), Binding: &toolenv.Binding{Method: "DELETE", Path: keyPath, In: kb}, Meta: dm})
	return tools
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
