package sqltools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
	"github.com/toolenv/toolenv/eval/endstate"
)

// The operations (meta.op) of the world tools: the hidden
// initialize_world and inspect_world, and the writes.
const (
	OpInitWorld = endstate.InitTool
	OpInspect   = endstate.InspectTool
	OpInsert    = "insert_rows"
	OpUpdate    = "update_rows"
	OpDelete    = "delete_rows"
)

// worldOps are the operations that act on a session's world rather
// than store a result.
var worldOps = map[string]bool{OpInitWorld: true, OpInspect: true, OpInsert: true, OpUpdate: true, OpDelete: true}

// writeOps are the world operations that write.
var writeOps = map[string]string{OpInsert: world.OpInsert, OpUpdate: world.OpUpdate, OpDelete: world.OpDelete}

// runWorld runs a world operation on ss (its mu held). Like run, a call
// that fails leaves ss as it was, and conflict says another replica
// appended the session's next log entry first.
func (b *Backend) runWorld(ctx context.Context, call *toolenv.Call, spec *toolSpec, m map[string]any, label string, ss *session) (*toolenv.Result, bool) {
	a := opArgs(m)
	switch spec.op {
	case OpInspect:
		return b.inspect(ctx, ss, a, call.Tool.Name), false
	case OpInitWorld:
		return b.initWorld(ctx, ss, a, m, label, call.Tool.Name)
	}
	return b.write(ctx, ss, spec.op, a, m, label, call.Tool.Name)
}

// initWorld starts the session's world from the initial state the
// arguments name. Starting it again from the same state changes
// nothing; from another, once it began, is refused.
func (b *Backend) initWorld(ctx context.Context, ss *session, a *args, m map[string]any, label, tool string) (*toolenv.Result, bool) {
	sp := world.Spec{Database: a.str("database", false), Name: a.str("initial_state", false), SQL: a.str("sql", false), File: a.str("from_file", false)}
	a.unknown("database", "initial_state", "sql", "from_file", LabelArg)
	if err := a.err(tool); err != nil {
		return toolenv.ResultOf(err), false
	}
	if sp.Database == "" && ss.dbName != "" {
		sp.Database = ss.dbName
	}
	if ss.world != nil {
		if ss.worldSpec != nil && *ss.worldSpec == sp {
			return b.worldBody(label, ss), false
		}
		return toolenv.ResultOf(&toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: "this session's world has begun already: one session is one world", Hint: "start a new session for another initial state"}), false
	}
	w, err := b.worlds.Start(ctx, sp)
	if err != nil {
		return toolenv.ResultOf(b.sqlError(err)), false
	}
	db := w.Base().DB.Name
	if ss.dbName != "" && ss.dbName != db {
		return toolenv.ResultOf(toolenv.Errorw(toolenv.StatusInvalidArguments, "start a new session for the other database",
			"this session works on database %s; the world would be over %s", ss.dbName, db)), false
	}
	sp.Database = db
	rec := world.StartRecord(sp, w)
	applied := ss.applied
	if conflict, err := b.logWorld(ctx, ss, OpInitWorld, m, label, rec); conflict || err != nil {
		return toolenv.ResultOf(err), conflict
	}
	ss.journalWorld(true, ss.world, ss.worldSpec, nil, world.Mark{}, applied)
	ss.world, ss.worldSpec = w, &sp
	return b.worldBody(label, ss), false
}

// worldBody is the answer of initialize_world.
func (b *Backend) worldBody(label string, ss *session) *toolenv.Result {
	body, err := marshal(map[string]any{"label": label, "type": "world", "database": ss.world.Base().DB.Name,
		"initial_state": ss.world.InitialHash(), "changed_rows": ss.world.ChangedRows()})
	if err != nil {
		return toolenv.ResultOf(err)
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body}
}

// sessionWorld returns the session's world, or a new one over its
// database in the collection's default state (started says so: the
// caller logs the start with the write, or forgets the world when the
// write fails).
func (b *Backend) sessionWorld(ctx context.Context, ss *session, database string) (w *world.World, sp world.Spec, started bool, err error) {
	if ss.world != nil {
		if database != "" && ss.world.Base().DB.Name != database && (ss.worldSpec == nil || ss.worldSpec.Database != database) {
			return nil, sp, false, toolenv.Errorw(toolenv.StatusInvalidArguments, "start a new session for the other database",
				"this tool writes database %s; this session's world is over %s", database, ss.world.Base().DB.Name)
		}
		return ss.world, sp, false, nil
	}
	if database == "" {
		database = ss.dbName
	}
	if ss.dbName != "" && database != ss.dbName {
		return nil, sp, false, toolenv.Errorw(toolenv.StatusInvalidArguments, "start a new session for the other database",
			"this tool writes database %s; this session works on %s", database, ss.dbName)
	}
	sp = world.Spec{Database: database}
	w, err = b.worlds.Start(ctx, sp)
	if err != nil {
		return nil, sp, false, err
	}
	sp.Database = w.Base().DB.Name
	return w, sp, true, nil
}

// write runs insert_rows, update_rows or delete_rows.
func (b *Backend) write(ctx context.Context, ss *session, op string, a *args, m map[string]any, label, tool string) (*toolenv.Result, bool) {
	table := a.str("table", true)
	database := a.str("database", false)
	allowed := []string{"table", "database", LabelArg}
	switch op {
	case OpInsert:
		allowed = append(allowed, "rows")
	case OpUpdate:
		allowed = append(allowed, "keys", "values")
	case OpDelete:
		allowed = append(allowed, "keys")
	}
	var (
		rows   []any
		keys   any
		values map[string]any
	)
	switch op {
	case OpInsert:
		if v, ok := a.required("rows", "a list of rows (objects of column → value)"); ok {
			if rows, ok = v.([]any); !ok {
				a.fail("rows", "wrong_type", "a list of objects", "argument `rows` must be a list of objects (column → value), got %s", describe(v))
			}
		}
	case OpUpdate, OpDelete:
		keys, _ = a.required("keys", "keys of the rows: a list, or \"$label$\" of a result holding them")
		if op == OpUpdate {
			if v, ok := a.required("values", "an object of column → new value"); ok {
				if values, ok = v.(map[string]any); !ok {
					a.fail("values", "wrong_type", "an object", "argument `values` must be an object of column → new value, got %s", describe(v))
				}
			}
		}
	}
	a.unknown(allowed...)
	if err := a.err(tool); err != nil {
		return toolenv.ResultOf(err), false
	}
	w, sp, started, err := b.sessionWorld(ctx, ss, database)
	if err != nil {
		return toolenv.ResultOf(b.sqlError(err)), false
	}
	mark := w.Marker()
	var out *world.Written
	switch op {
	case OpInsert:
		list := make([]map[string]any, len(rows))
		var problems []toolenv.Problem
		for i, r := range rows {
			row, ok := r.(map[string]any)
			if !ok {
				problems = append(problems, toolenv.Problem{Param: fmt.Sprintf("rows[%d]", i), Code: "wrong_type", Expected: "an object of column → value", Message: fmt.Sprintf("rows[%d] must be an object of column → value, got %s", i, describe(r))})
				continue
			}
			if list[i], err = b.resolveValues(ctx, ss, w, row, fmt.Sprintf("rows[%d]", i)); err != nil {
				return toolenv.ResultOf(err), false
			}
		}
		if len(problems) > 0 {
			return toolenv.ResultOf(&toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: problems[0].Message, Problems: problems}), false
		}
		out, err = w.Insert(ctx, table, list, "rows")
	case OpUpdate, OpDelete:
		var k world.Keys
		if k, err = b.keysArg(ctx, ss, w, keys, table); err == nil {
			if op == OpUpdate {
				var vals map[string]any
				if vals, err = b.resolveValues(ctx, ss, w, values, "values"); err == nil {
					out, err = w.Update(ctx, table, k, vals, "values")
				}
			} else {
				out, err = w.Delete(ctx, table, k)
			}
		}
	}
	if err != nil {
		return toolenv.ResultOf(b.sqlError(err)), false
	}
	rec := &world.Record{Changes: out.Changes, Hash: w.Digest()}
	if started {
		rec.Start, rec.Initial = &sp, w.InitialHash()
	}
	applied := ss.applied
	conflict, err := b.logWorld(ctx, ss, op, m, label, rec)
	if conflict || err != nil {
		if !started {
			if rerr := w.Revert(out.Changes, mark); rerr != nil {
				b.opt.Logger.Error("a write that could not be logged could not be undone", "session", ss.id, "err", rerr)
			}
		}
		return toolenv.ResultOf(err), conflict
	}
	ss.journalWorld(started, ss.world, ss.worldSpec, out.Changes, mark, applied)
	if started {
		ss.world, ss.worldSpec = w, &sp
	}
	return b.writtenBody(label, out)
}

// WriteBody is the answer of a write: the rows written (after an insert
// or update, before a delete), as a rows result, and every row the
// write changed, cascades included.
type WriteBody struct {
	Label     string   `json:"label,omitempty"`
	Type      string   `json:"type"`
	Operation string   `json:"operation"`
	Table     string   `json:"table"`
	Columns   []string `json:"columns"`
	RowCount  int      `json:"row_count"`
	Rows      [][]any  `json:"rows"`
	// Changed counts the rows the write changed in every table (a delete
	// may cascade).
	Changed int `json:"changed_rows"`
}

func (b *Backend) writtenBody(label string, out *world.Written) (*toolenv.Result, bool) {
	body := WriteBody{Label: label, Type: string(kindRows), Operation: out.Op, Table: out.Table.Name, Columns: out.Table.Names(), RowCount: len(out.Rows), Rows: world.Export(out.Rows), Changed: len(out.Changes)}
	raw, err := marshal(body)
	if err != nil {
		return toolenv.ResultOf(err), false
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: raw}, false
}

// keysArg reads the keys of an update or delete: "$label$" of a result
// whose rows are keys, or a list of keys (a value for a one-column key,
// a list of values, or an object of key column → value).
func (b *Backend) keysArg(ctx context.Context, ss *session, w *world.World, v any, table string) (world.Keys, error) {
	k := world.Keys{Param: "keys"}
	if label, ok := refLabel(v, false); ok {
		r, err := lookup(ss, label)
		if err != nil {
			return k, err
		}
		if r.q == nil || r.kind == kindGrouped {
			return k, toolenv.Errorw(toolenv.StatusInvalidArguments, "retrieve_data the key columns of the rows first, and pass that result",
				"$%s$ holds %s data, not rows of keys", label, r.kind)
		}
		s := r.q.sql(false)
		k.Query, k.Args = s.sql, s.args
		return k, nil
	}
	list, ok := v.([]any)
	if !ok {
		return k, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "argument `keys` must be a list of keys or \"$label$\" of a result holding them, got %s", describe(v))
	}
	t := w.Base().Schema().Table(table)
	var kcols []string
	if t != nil {
		kcols = t.KeyNames()
		if len(kcols) == 0 {
			kcols = t.Names()
		}
	}
	for i, e := range list {
		switch x := e.(type) {
		case []any:
			k.Values = append(k.Values, x)
		case map[string]any:
			key := make([]any, len(kcols))
			for j, c := range kcols {
				found := false
				for n, val := range x {
					if strings.EqualFold(n, c) {
						key[j], found = val, true
					}
				}
				if !found {
					return k, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("keys[%d] lacks key column %s", i, c),
						Problems: []toolenv.Problem{{Param: fmt.Sprintf("keys[%d].%s", i, c), Code: "missing_required", Expected: strings.Join(kcols, ", "), Message: "missing key column"}}}
				}
			}
			k.Values = append(k.Values, key)
		default:
			k.Values = append(k.Values, []any{x})
		}
	}
	for i, key := range k.Values {
		for j, val := range key {
			rv, err := b.refValue(ctx, ss, w, val, fmt.Sprintf("keys[%d]", i))
			if err != nil {
				return k, err
			}
			k.Values[i][j] = rv
		}
	}
	return k, nil
}

// resolveValues replaces "$label$" values of row by the single value
// their result holds (in the world as it is now).
func (b *Backend) resolveValues(ctx context.Context, ss *session, w *world.World, row map[string]any, param string) (map[string]any, error) {
	out := make(map[string]any, len(row))
	names := make([]string, 0, len(row))
	for n := range row {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v, err := b.refValue(ctx, ss, w, row[n], param+"."+n)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// refValue returns v, or for "$label$" the one value that result holds.
func (b *Backend) refValue(ctx context.Context, ss *session, w *world.World, v any, param string) (any, error) {
	label, ok := refLabel(v, false)
	if !ok {
		return v, nil
	}
	r, err := lookup(ss, label)
	if err != nil {
		return nil, err
	}
	if r.q == nil || r.kind == kindGrouped {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%s: $%s$ holds %s data, not one value", param, label, r.kind)
	}
	s := r.q.sql(false)
	rows, err := w.Query(ctx, "SELECT * FROM ("+s.sql+") LIMIT 2", s.args, 2)
	if err != nil {
		return nil, err
	}
	if len(rows.Rows) != 1 || len(rows.Columns) != 1 {
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: fmt.Sprintf("%s: $%s$ must hold exactly one value; it holds %s of %d column(s)", param, label, map[bool]string{true: "one row", false: "several rows or none"}[len(rows.Rows) == 1], len(rows.Columns)),
			Hint:    "narrow it to one row and retrieve one column", Problems: []toolenv.Problem{{Param: param, Code: "wrong_shape", Expected: "one value", Message: "not one value"}}}
	}
	return rows.Rows[0][0], nil
}

// inspect reports the session's world and runs the end-state checks of
// the arguments in it. A session without a world reports its
// database's state (no changes).
func (b *Backend) inspect(ctx context.Context, ss *session, a *args, tool string) *toolenv.Result {
	var checks []world.Check
	if v, ok := a.raw("checks"); ok {
		list, isList := v.([]any)
		if !isList {
			a.fail("checks", "wrong_type", "a list of {name, sql}", "argument `checks` must be a list of {\"name\", \"sql\"}, got %s", describe(v))
		}
		for i, e := range list {
			m, _ := e.(map[string]any)
			q, _ := m["sql"].(string)
			if q == "" {
				a.fail(fmt.Sprintf("checks[%d].sql", i), "missing_required", "an SQL query", "checks[%d] has no sql", i)
				continue
			}
			name, _ := m["name"].(string)
			checks = append(checks, world.Check{Name: name, SQL: q})
		}
	}
	a.unknown("checks", LabelArg)
	if err := a.err(tool); err != nil {
		return toolenv.ResultOf(err)
	}
	w := ss.world
	if w == nil {
		var err error
		if w, _, _, err = b.sessionWorld(ctx, ss, ""); err != nil {
			return toolenv.ResultOf(b.sqlError(err))
		}
	}
	body, err := marshal(world.Inspect(ctx, w, checks, b.opt.MaxRows))
	if err != nil {
		return toolenv.ResultOf(err)
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body}
}

// reader is what a result of ss is read from: the session's world when
// it has one, else the database itself. memo says the render memo may
// answer (the state read is the database's own).
func (b *Backend) reader(ss *session, r *result) (q querier, memo bool) {
	if ss == nil || ss.world == nil {
		return r.db, true
	}
	return ss.world, !ss.world.Changed() && ss.world.Base().DB == r.db
}

// querier runs read-only queries: a database, or a world.
type querier interface {
	Query(ctx context.Context, q string, args []any, max int) (*rodb.Rows, error)
	QueryValue(ctx context.Context, q string, args []any) (any, error)
}

var (
	_ querier = (*rodb.DB)(nil)
	_ querier = (*world.World)(nil)
)

// ReadWorld runs fn with session id's world, holding the session so
// that its other calls wait: nil when the session has none (no session,
// one that never wrote), and fn then reads the databases. With a log,
// the session is brought up to date first; a session that ended is an
// error. The REST backend (sqlrest) keeps its sessions' worlds in a
// Backend of this package and reads through it.
func (b *Backend) ReadWorld(ctx context.Context, id string, fn func(w *world.World) error) error {
	if id == "" {
		return fn(nil)
	}
	ss, err := b.store.get(id, b.opt.Log != nil)
	if err != nil {
		return fn(nil) // in memory, a session that never wrote
	}
	defer b.store.release(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if b.opt.Log != nil {
		if _, err := b.opt.Log.Read(ctx, id, ss.applied); errors.Is(err, ErrNoSession) {
			b.store.dropUnused(ss)
			return fn(nil)
		}
		if err := b.syncLog(ctx, ss, false); err != nil {
			if ss.applied == 0 {
				b.store.dropUnused(ss)
			}
			return err
		}
	}
	return fn(ss.world)
}
