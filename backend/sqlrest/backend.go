package sqlrest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// BackendType is the Collection.Backend.Type this package serves.
const BackendType = "sqlrest"

// The Tool.Meta keys of REST tools.
const (
	MetaSQL      = "sql"      // the SQL template with :name placeholders
	MetaDatabase = "database" // the database it runs on
	MetaArgMap   = "arg_map"  // obfuscation: public argument name → template parameter
	// MetaNonEmpty lists (JSON) the template parameters compared for
	// equality with text: an empty value for one of them is refused.
	MetaNonEmpty = "non_empty"
)

// EncodingHint is the hint given for an empty value where one is
// required: over HTTP, an unencoded '#' ends the URL's query, '&' ends
// the value and '+' reads as a space.
const EncodingHint = "percent-encode the query string: a raw '#' ends the URL (send %23), '&' ends the value (send %26), '+' reads as a space (send %2B), '%' must be %25"

// Config is the backend configuration stored in collection.json.
type Config struct {
	// Databases maps database names to SQLite files, relative to the
	// collection folder or absolute.
	Databases map[string]string `json:"databases"`
	// Obfuscation, for an obfuscated collection, is its mapping file
	// (relative to the collection folder): the endpoints' SQL and
	// argument names, which tools.json does not show.
	Obfuscation string `json:"obfuscation,omitempty"`
	// InitialStates are the collection's named initial states, which
	// initialize_world's initial_state names.
	InitialStates map[string]world.Spec `json:"initial_states,omitempty"`
}

// Options tune a Backend; the zero value is ready to use.
type Options struct {
	// MaxRows caps the rows a call may return (default 10000).
	MaxRows int
	// CallTimeout bounds each call (default 10s; negative: none).
	CallTimeout time.Duration
	// Logger logs database problems; nil discards.
	Logger *slog.Logger
	// DB configures how databases are opened.
	DB rodb.Options
	// Databases are already-open databases by name (not closed by Close).
	Databases map[string]*rodb.DB
	// Log keeps the sessions' worlds durably, shared by a fleet's
	// replicas (sqltools.Options.Log); nil keeps them in memory.
	Log sqltools.SessionLog
	// SessionIdle, SessionMaxBytes and World configure the sessions'
	// worlds as sqltools.Options does; Now is their clock.
	SessionIdle     time.Duration
	SessionMaxBytes int64
	World           world.Options
	Now             func() time.Time
}

// Backend runs REST tools over SQLite. It is a toolenv.Handler, safe for
// concurrent use.
type Backend struct {
	opt   Options
	dbs   *rodb.Set
	tools map[string]*endpoint
	// worlds keeps the sessions' worlds of a collection with write
	// endpoints (nil: a read-only collection, whose calls ignore
	// sessions).
	worlds *sqltools.Backend
	wcoll  *toolenv.Collection
}

var (
	_ toolenv.Handler = (*Backend)(nil)
	_ io.Closer       = (*Backend)(nil)
)

type endpoint struct {
	sql    string
	db     string
	params []param
	byName map[string]*param
	// op is a table endpoint's operation (OpInsert, OpUpdate, OpDelete)
	// or a world tool's; "" for an SQL template. table is its table, key
	// the parameters that are the key (in key order).
	op    string
	table string
	key   []string
}

type param struct {
	public   string // argument name callers use
	name     string // template parameter
	column   string // the column a table endpoint's parameter sets
	typ      string
	required bool
	nonEmpty bool
}

// Open returns the backend of collection c. A database that cannot be
// opened does not fail Open: calls on it fail with unavailable.
func Open(ctx context.Context, c *toolenv.Collection, opt Options) (*Backend, error) {
	if opt.MaxRows <= 0 {
		opt.MaxRows = 10000
	}
	if opt.CallTimeout == 0 {
		opt.CallTimeout = 10 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	var cfg Config
	if len(c.Backend.Config) > 0 {
		if err := toolenv.DecodeJSON(c.Backend.Config, &cfg); err != nil {
			return nil, fmt.Errorf("sqlrest: collection %s: backend config: %w", c.Name, err)
		}
	}
	dbs, err := rodb.OpenSet(ctx, cfg.Databases, rodb.SetOptions{Dir: c.Dir, Shared: opt.Databases, DB: opt.DB, Logger: opt.Logger.With("collection", c.Name)})
	if err != nil {
		return nil, fmt.Errorf("sqlrest: collection %s: %w", c.Name, err)
	}
	b := &Backend{opt: opt, dbs: dbs, tools: map[string]*endpoint{}}
	tools, err := sqltools.Deobfuscated(c, cfg.Obfuscation)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("sqlrest: collection %s: %w", c.Name, err)
	}
	writable := false
	for _, t := range tools {
		e, err := endpointOf(t)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("sqlrest: collection %s: %w", c.Name, err)
		}
		b.tools[t.Name] = e
		writable = writable || e.op != ""
	}
	if writable {
		if err := b.openWorlds(ctx, c, cfg); err != nil {
			b.Close()
			return nil, fmt.Errorf("sqlrest: collection %s: %w", c.Name, err)
		}
	}
	return b, nil
}

func endpointOf(t *toolenv.Tool) (*endpoint, error) {
	e := &endpoint{sql: t.Meta[MetaSQL], db: t.Meta[MetaDatabase], op: t.Meta[MetaOp], table: t.Meta[MetaTable], byName: map[string]*param{}}
	if raw := t.Meta[MetaKey]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &e.key); err != nil {
			return nil, fmt.Errorf("tool %s: meta.%s: %w", t.Name, MetaKey, err)
		}
	}
	switch {
	case e.op == sqltools.OpInitWorld || e.op == sqltools.OpInspect:
		return e, nil
	case e.op != "":
		if e.table == "" || e.db == "" || (e.op != OpInsert && e.op != OpUpdate && e.op != OpDelete) {
			return nil, fmt.Errorf("tool %s: a table endpoint needs meta.op (insert, update or delete), meta.table and meta.database", t.Name)
		}
	case e.sql == "" || e.db == "":
		return nil, fmt.Errorf("tool %s has no meta.sql or meta.database", t.Name)
	}
	var argMap map[string]string
	if raw := t.Meta[MetaArgMap]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &argMap); err != nil {
			return nil, fmt.Errorf("tool %s: meta.arg_map: %w", t.Name, err)
		}
	}
	var columns map[string]string
	if raw := t.Meta[MetaColumns]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &columns); err != nil {
			return nil, fmt.Errorf("tool %s: meta.%s: %w", t.Name, MetaColumns, err)
		}
	}
	var nonEmpty []string
	if raw := t.Meta[MetaNonEmpty]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &nonEmpty); err != nil {
			return nil, fmt.Errorf("tool %s: meta.%s: %w", t.Name, MetaNonEmpty, err)
		}
	}
	for _, name := range t.Input.Names() {
		p := param{public: name, name: name, typ: schemaType(t.Input.Prop(name)), required: t.Input.IsRequired(name)}
		if n, ok := argMap[name]; ok {
			p.name = n
		}
		for _, n := range nonEmpty {
			p.nonEmpty = p.nonEmpty || n == p.name
		}
		p.column = columns[p.name]
		if p.column == "" {
			p.column = p.name
		}
		e.params = append(e.params, p)
	}
	for i := range e.params {
		e.byName[e.params[i].public] = &e.params[i]
	}
	return e, nil
}

// Invoke runs one endpoint call. Every outcome is a Result with Source
// live.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	res := b.invoke(ctx, call)
	res.Source = toolenv.SourceLive
	return res
}

// maxValueLen is the longest string argument accepted.
const maxValueLen = 10000

func (b *Backend) invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "the call names no tool")
	}
	e := b.tools[call.Tool.Name]
	if e == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "list the collection's tools", "%s is not a tool of this collection", call.Tool.Name)
	}
	if e.op == sqltools.OpInitWorld || e.op == sqltools.OpInspect {
		return b.worldTool(ctx, call, e)
	}
	var problems []toolenv.Problem
	var names []string
	for k := range call.Args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if e.byName[k] == nil {
			var known []string
			for _, p := range e.params {
				known = append(known, p.public)
			}
			problems = append(problems, toolenv.Problem{Param: k, Code: "unknown_param", Message: fmt.Sprintf("unknown argument `%s`", k), Expected: strings.Join(known, ", ")})
		}
	}
	args := make([]any, 0, len(e.params))
	given := map[string]any{} // a table endpoint's values by parameter (nil: null)
	for _, p := range e.params {
		v, ok := call.Args[p.public]
		if e.op != "" && ok && v == nil && !p.required {
			given[p.name] = nil // an explicit null
			continue
		}
		if !ok || v == nil {
			if p.required {
				problems = append(problems, toolenv.Problem{Param: p.public, Code: "missing_required", Message: fmt.Sprintf("missing required argument `%s` (%s)", p.public, p.typ), Expected: p.typ})
			} else {
				args = append(args, sql.Named(p.name, nil))
			}
			continue
		}
		bv, prob := bindValue(p, v)
		if prob != nil {
			problems = append(problems, *prob)
			continue
		}
		if s, isStr := bv.(string); isStr && s == "" && p.nonEmpty {
			problems = append(problems, toolenv.Problem{Param: p.public, Code: "empty", Expected: "a non-empty string",
				Message: fmt.Sprintf("argument `%s` is empty; no row has an empty value here (was the value cut at an unencoded '#' or '&'?)", p.public)})
			continue
		}
		args = append(args, sql.Named(p.name, bv))
		given[p.name] = bv
	}
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Message
		}
		hint := "fix the arguments listed in problems and call again"
		for _, p := range problems {
			if p.Code == "empty" {
				hint = EncodingHint
			}
		}
		return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: call.Tool.Name + ": " + strings.Join(msgs, "; "), Problems: problems, Hint: hint}
	}
	if e.op != "" {
		return b.write(ctx, call, e, given)
	}
	db, err := b.dbs.Get(e.db)
	if err != nil {
		return toolenv.ResultOf(err)
	}
	if b.opt.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.opt.CallTimeout)
		defer cancel()
	}
	var rows *rodb.Rows
	if b.worlds != nil && call.Session != "" {
		// In a session, the endpoint reads the session's world.
		err = b.worlds.ReadWorld(ctx, call.Session, func(w *world.World) error {
			var qerr error
			if w != nil && w.Base().DB.Name == e.db {
				rows, qerr = w.Query(ctx, e.sql, args, b.opt.MaxRows)
			} else {
				rows, qerr = db.Query(ctx, e.sql, args, b.opt.MaxRows)
			}
			return qerr
		})
	} else {
		rows, err = db.Query(ctx, e.sql, args, b.opt.MaxRows)
	}
	if err != nil {
		return toolenv.ResultOf(rodb.QueryError(err, b.opt.Logger.With("backend", BackendType, "tool", call.Tool.Name)))
	}
	if rows.Truncated {
		return &toolenv.Result{Status: toolenv.StatusTooLarge, Error: fmt.Sprintf("the result has more than %d rows, the most a call may return", b.opt.MaxRows),
			Hint: "narrow the request with more selective parameter values"}
	}
	body, err := json.Marshal(Body{Columns: rows.Columns, RowCount: len(rows.Rows), Rows: rows.Rows})
	if err != nil {
		return &toolenv.Result{Status: toolenv.StatusInternal, Error: err.Error()}
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body}
}

// Body is a REST tool's response.
type Body struct {
	Columns  []string `json:"columns"`
	RowCount int      `json:"row_count"`
	Rows     [][]any  `json:"rows"`
}

// bindValue converts an argument to the value bound for p's type.
func bindValue(p param, v any) (any, *toolenv.Problem) {
	bad := func(expected string) *toolenv.Problem {
		return &toolenv.Problem{Param: p.public, Code: "wrong_type", Expected: expected, Message: fmt.Sprintf("argument `%s` must be %s, got %v", p.public, expected, describe(v))}
	}
	switch p.typ {
	case "integer":
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n, nil
			}
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n, nil
			}
		}
		return nil, bad("an integer")
	case "number":
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return float64(n), nil
			}
			if f, err := x.Float64(); err == nil {
				return f, nil
			}
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				return f, nil
			}
		}
		return nil, bad("a number")
	case "boolean":
		if x, ok := v.(bool); ok {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
		return nil, bad("true or false")
	default:
		s, ok := v.(string)
		if !ok {
			if n, isNum := v.(json.Number); isNum {
				s = n.String()
			} else {
				return nil, bad("a string")
			}
		}
		if len(s) > maxValueLen {
			return nil, &toolenv.Problem{Param: p.public, Code: "out_of_range", Expected: fmt.Sprintf("at most %d characters", maxValueLen), Message: fmt.Sprintf("argument `%s` is %d characters long; at most %d are accepted", p.public, len(s), maxValueLen)}
		}
		return s, nil
	}
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return strconv.Quote(x)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// Close closes the sessions' worlds and the databases the backend
// opened.
func (b *Backend) Close() error {
	var err error
	if b.worlds != nil {
		err = b.worlds.Close()
	}
	return errors.Join(err, b.dbs.Close())
}

// schemaType is a parameter's type: its schema's, or for a nullable one
// (anyOf [T, null]) T's.
func schemaType(s *toolenv.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	for _, a := range s.AnyOf {
		if a != nil && a.Type != "" && a.Type != "null" {
			return a.Type
		}
	}
	return ""
}
