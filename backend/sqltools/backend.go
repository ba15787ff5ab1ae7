package sqltools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// BackendType is the Collection.Backend.Type this package serves.
const BackendType = "sqltools"

// The flavors of a sqltools collection.
const (
	FlavorSlot = "slot"
	FlavorSel  = "sel"
)

// Config is the backend configuration stored in collection.json.
type Config struct {
	// Flavor is "slot" or "sel"; it only changes how tools are named
	// (each tool's meta says which operation it runs).
	Flavor string `json:"flavor"`
	// Databases maps database names to SQLite files, relative to the
	// collection folder or absolute.
	Databases map[string]string `json:"databases"`
	// Obfuscation, for an obfuscated collection, is its mapping file
	// (relative to the collection folder): the tools' original operations
	// and argument names, which tools.json does not show.
	Obfuscation string `json:"obfuscation,omitempty"`
	// InitialStates are the collection's named initial states, which
	// initialize_world's initial_state names.
	InitialStates map[string]world.Spec `json:"initial_states,omitempty"`
}

// Options tune a Backend. The zero value is ready to use.
type Options struct {
	// MaxRows caps the rows (values) a list or rows result shows
	// (default 10000). A bigger result shows its first MaxRows, its full
	// size and a note; the session keeps it whole under its label.
	MaxRows int
	// PreviewRows is how many rows a table result shows (default 5).
	PreviewRows int
	// CallTimeout bounds each call (default 10s; negative: none). SQLite
	// is interrupted when it passes.
	CallTimeout time.Duration
	// SessionIdle drops sessions unused for longer (default 30 min;
	// negative: never).
	SessionIdle time.Duration
	// SessionMaxBytes caps the memory all sessions hold together (default
	// 256 MiB; negative: no cap); least recently used sessions go first.
	SessionMaxBytes int64
	// Log, when set, keeps every session's calls durably, shared by the
	// replicas of a fleet (see SessionLog): a session works on whichever
	// replica a call reaches, and one dropped from memory (idle, over the
	// cap) is rebuilt on its next call. Nil keeps sessions in memory only.
	Log SessionLog
	// MaxLabels caps the results one session may hold (default 1000).
	MaxLabels int
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Logger logs database problems; nil discards.
	Logger *slog.Logger
	// DB configures how databases are opened.
	DB rodb.Options
	// Databases are already-open databases by name, used instead of
	// opening the configured files (a build shares them between
	// flavors). The backend does not close them.
	Databases map[string]*rodb.DB
	// World configures the sessions' worlds (package world).
	World world.Options
	// RenderCacheBytes bounds the memory of what rendering results read
	// from the databases (row counts, previews, values), kept so that the
	// same query in another session is answered without running again:
	// the databases are read-only (default 16 MiB; negative: none).
	RenderCacheBytes int64
}

func (o *Options) defaults() {
	if o.MaxRows <= 0 {
		o.MaxRows = 10000
	}
	if o.PreviewRows <= 0 {
		o.PreviewRows = 5
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.SessionIdle == 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.SessionMaxBytes == 0 {
		o.SessionMaxBytes = 256 << 20
	}
	if o.MaxLabels <= 0 {
		o.MaxLabels = 1000
	}
	if o.RenderCacheBytes == 0 {
		o.RenderCacheBytes = 16 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Backend executes SLOT and SEL tools over SQLite inside task sessions.
// It is a toolenv.Handler and safe for concurrent use; calls of one
// session run one at a time.
type Backend struct {
	opt    Options
	name   string // the collection's
	flavor string
	dbs    *rodb.Set
	tools  map[string]*toolSpec
	store  *store
	memo   *renderMemo // nil: none
	worlds *world.Set
}

var (
	_ toolenv.Handler = (*Backend)(nil)
	_ io.Closer       = (*Backend)(nil)
)

// toolSpec says which operation a tool runs: SEL tools bind some
// arguments (meta "fixed"), obfuscated tools rename them (meta "arg_map",
// public name → operation argument).
type toolSpec struct {
	op     string
	fixed  map[string]any
	argMap map[string]string
}

// The Tool.Meta keys the backend reads.
const (
	MetaOp     = "op"
	MetaFixed  = "fixed"
	MetaArgMap = "arg_map"
)

// Open returns the backend of collection c (its Backend.Config is a
// Config). A database that cannot be opened does not fail Open: calls on
// it fail with unavailable and say why.
func Open(ctx context.Context, c *toolenv.Collection, opt Options) (*Backend, error) {
	opt.defaults()
	var cfg Config
	if len(c.Backend.Config) > 0 {
		if err := toolenv.DecodeJSON(c.Backend.Config, &cfg); err != nil {
			return nil, fmt.Errorf("sqltools: collection %s: backend config: %w", c.Name, err)
		}
	}
	dbs, err := rodb.OpenSet(ctx, cfg.Databases, rodb.SetOptions{Dir: c.Dir, Shared: opt.Databases, DB: opt.DB, Logger: opt.Logger.With("collection", c.Name)})
	if err != nil {
		return nil, fmt.Errorf("sqltools: collection %s: %w", c.Name, err)
	}
	b := &Backend{opt: opt, name: c.Name, flavor: cfg.Flavor, dbs: dbs, tools: map[string]*toolSpec{},
		store: newStore(opt.SessionIdle, opt.SessionMaxBytes, opt.Now), memo: newRenderMemo(opt.RenderCacheBytes),
		worlds: world.NewSet(dbs, world.SetOptions{Dir: c.Dir, Named: cfg.InitialStates, World: opt.World, DB: opt.DB})}
	tools, err := Deobfuscated(c, cfg.Obfuscation)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("sqltools: collection %s: %w", c.Name, err)
	}
	for _, t := range tools {
		spec, err := specOf(t)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("sqltools: collection %s: %w", c.Name, err)
		}
		b.tools[t.Name] = spec
	}
	return b, nil
}

func specOf(t *toolenv.Tool) (*toolSpec, error) {
	s := &toolSpec{op: t.Meta[MetaOp]}
	if s.op == "" {
		s.op = t.Name
	}
	if _, ok := operations[s.op]; !ok && !worldOps[s.op] {
		return nil, fmt.Errorf("tool %s: unknown operation %q", t.Name, s.op)
	}
	if raw := t.Meta[MetaFixed]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &s.fixed); err != nil {
			return nil, fmt.Errorf("tool %s: meta.fixed: %w", t.Name, err)
		}
	}
	if raw := t.Meta[MetaArgMap]; raw != "" {
		if err := toolenv.DecodeJSON([]byte(raw), &s.argMap); err != nil {
			return nil, fmt.Errorf("tool %s: meta.arg_map: %w", t.Name, err)
		}
	}
	return s, nil
}

// operation runs one tool operation in a session.
type operation func(b *Backend, ctx context.Context, ss *session, a *args) (*result, error)

var operations = map[string]operation{
	InitTool: func(b *Backend, ctx context.Context, ss *session, a *args) (*result, error) {
		return b.initialize(ctx, ss, a)
	},
	"filter_data":          func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.filter(ss, a) },
	"combine_filters":      func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.combine(ss, a) },
	"sort_data":            func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.sort(ss, a) },
	"group_data_by":        func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.groupBy(ss, a) },
	"aggregate_data":       func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.aggregate(ss, a) },
	"transform_data":       func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.transform(ss, a) },
	"retrieve_data":        func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.retrieve(ss, a) },
	"select_unique_values": func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.unique(ss, a) },
	"calculate":            func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.calculate(ss, a) },
	"get_column":           func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.get(ss, a) },
	"limit_data":           func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.limitRows(ss, a) },
	"set_operation":        func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.setOp(ss, a) },
	"rank_data":            func(b *Backend, _ context.Context, ss *session, a *args) (*result, error) { return b.rank(ss, a) },
}

// Invoke runs one call. Every outcome, failures included, is a Result
// with Source live.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	res := b.invoke(ctx, call)
	res.Source = toolenv.SourceLive
	return res
}

func (b *Backend) invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "the call names no tool")
	}
	spec := b.tools[call.Tool.Name]
	if spec == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "list the collection's tools", "%s is not a tool of this collection", call.Tool.Name)
	}
	if call.Session == "" {
		return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: call.Tool.Name + " runs inside a task session, and this call has none",
			Hint: "send a session id (the X-Toolenv-Session header, or an MCP session) and start the session with initialize_active_data"}
	}
	if len(call.Session) > 256 {
		return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: "the session id is longer than 256 characters"}
	}
	m, err := spec.args(call.Args)
	if err != nil {
		return toolenv.ResultOf(err)
	}
	a := newArgs(m)
	label, err := labelArg(a)
	if err != nil {
		return toolenv.ResultOf(err)
	}
	if b.opt.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.opt.CallTimeout)
		defer cancel()
	}
	create := spec.op == InitTool || spec.op == OpInitWorld || writeOps[spec.op] != ""
	ss, err := b.store.get(call.Session, create || b.opt.Log != nil)
	if err != nil {
		return toolenv.ResultOf(err)
	}
	defer b.store.release(ss)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for try := 1; ; try++ {
		if b.opt.Log != nil {
			if err := b.syncLog(ctx, ss, create); err != nil {
				if toolenv.StatusOf(err) == toolenv.StatusNotFound {
					b.store.drop(ss.id) // it ended
				} else if ss.applied == 0 {
					b.store.dropUnused(ss) // nothing of it is held here
				}
				return toolenv.ResultOf(err)
			}
		}
		var (
			res      *toolenv.Result
			conflict bool
		)
		if worldOps[spec.op] {
			res, conflict = b.runWorld(ctx, call, spec, m, label, ss)
		} else {
			res, conflict = b.run(ctx, call, spec, m, label, ss)
		}
		if !conflict {
			if !res.OK() && ss.applied == 0 && len(ss.results) == 0 && ss.world == nil {
				b.store.dropUnused(ss) // a failed start leaves nothing behind
			}
			return res
		}
		if try == maxAppendTries {
			return toolenv.Errorf(toolenv.StatusUnavailable, "retry the call; send the calls of one session one at a time",
				"session %q is being changed by calls on other replicas at the same time", ss.id)
		}
	}
}

// run runs one call on ss (with ss.mu held) and, with a log, appends it
// before acknowledging it. A call that fails leaves ss as it was.
// conflict says another replica appended the session's next entry first:
// the caller catches up and runs the call again.
func (b *Backend) run(ctx context.Context, call *toolenv.Call, spec *toolSpec, m map[string]any, label string, ss *session) (res *toolenv.Result, conflict bool) {
	pre, preApplied := ss.save(), ss.applied // what RollbackSession returns to
	if label == "" {
		if spec.op == InitTool {
			label = DefaultStartLabel
		} else {
			for n := ss.auto; label == "" || ss.results[label] != nil; {
				n++
				label = fmt.Sprintf("result_%d", n)
				ss.auto = n
			}
		}
	}
	before := ss.save()
	fail := func(err error) (*toolenv.Result, bool) {
		ss.restore(before)
		return toolenv.ResultOf(err), false
	}
	if ss.results[label] == nil && len(ss.results) >= b.opt.MaxLabels {
		return fail(toolenv.Errorw(toolenv.StatusTooLarge, "reuse labels or start a new session", "this session already holds %d results, the most it may", b.opt.MaxLabels))
	}
	if spec.op != InitTool && ss.db == nil {
		return fail(toolenv.Errorw(toolenv.StatusNotFound, "call initialize_active_data first", "this session has no data yet"))
	}
	a := opArgs(m)
	r, err := operations[spec.op](b, ctx, ss, a)
	if err == nil && r == nil {
		err = a.err(call.Tool.Name)
	}
	if err != nil {
		return fail(b.sqlError(err))
	}
	r.label = label
	body, err := b.render(ctx, r, ss)
	if err != nil {
		return fail(b.sqlError(err))
	}
	r.bodyLen = len(body)
	if err := b.store.fits(ss, b.delta(ss, r)); err != nil {
		return fail(err)
	}
	data, err := b.record(spec.op, m, r, before, ss)
	if err != nil {
		return fail(fmt.Errorf("session log: %w", err))
	}
	if conflict, err := b.logCall(ctx, ss, data); conflict || err != nil {
		ss.restore(before)
		if conflict {
			return nil, true
		}
		return toolenv.ResultOf(err), false
	}
	if err := b.commit(ss, r, pre, preApplied); err != nil {
		return toolenv.ResultOf(err), false
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body}, false
}

// opArgs are an operation's arguments, the label already read.
func opArgs(m map[string]any) *args {
	a := newArgs(m)
	if _, ok := m[LabelArg]; ok {
		a.used[LabelArg] = true
	}
	return a
}

// delta is how many bytes ss grows by when r is stored under its label.
func (b *Backend) delta(ss *session, r *result) int64 {
	d := r.size()
	if old := ss.results[r.label]; old != nil {
		d -= old.size()
	}
	return d
}

// commit stores r under its label and accounts for its memory; before
// and applied are the session's state before the call, which a rollback
// returns to.
func (b *Backend) commit(ss *session, r *result, before state, applied int64) error {
	d := b.delta(ss, r)
	ss.journal(r, before, applied, d)
	ss.results[r.label] = r
	return b.store.grew(ss, d)
}

// args applies the tool's renaming and bound arguments to the call's.
func (s *toolSpec) args(in map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(in)+len(s.fixed))
	var problems []toolenv.Problem
	if s.argMap != nil {
		in, problems = renameArgs(in, s.argMap, LabelArg)
	}
	for k, v := range in {
		name := k
		if _, bound := s.fixed[name]; bound {
			problems = append(problems, toolenv.Problem{Param: k, Code: "unknown_param", Message: fmt.Sprintf("unknown argument `%s`: this tool fixes it", k)})
			continue
		}
		out[name] = v
	}
	if len(problems) > 0 {
		sort.Slice(problems, func(i, j int) bool { return problems[i].Param < problems[j].Param })
		return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: problems[0].Message, Problems: problems}
	}
	for k, v := range s.fixed {
		out[k] = v
	}
	return out, nil
}

// labelArg reads and checks the optional label argument.
func labelArg(a *args) (string, error) {
	v, ok := a.raw(LabelArg)
	if !ok {
		return "", nil
	}
	s, isStr := v.(string)
	if m := refRE.FindStringSubmatch(s); isStr && m != nil {
		s = m[1]
	}
	if !isStr || !labelRE.MatchString(s) || len(s) > maxLabelLen {
		return "", &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("`label` must be letters, digits and _ (at most %d, not starting with a digit), got %s", maxLabelLen, describe(v)),
			Problems: []toolenv.Problem{{Param: "label", Code: "bad_format", Message: "not a valid label", Expected: "[A-Za-z_][A-Za-z0-9_]*"}}}
	}
	return s, nil
}

// database returns an open database or says why it is not available.
func (b *Backend) database(name string) (*rodb.DB, error) {
	db, err := b.dbs.Get(name)
	if !errors.Is(err, rodb.ErrNoDatabase) {
		return db, err
	}
	known := b.dbs.Names()
	return nil, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: fmt.Sprintf("unknown database %q", name), Hint: "databases: " + strings.Join(known, ", "),
		Problems: []toolenv.Problem{{Param: "database", Code: "not_in_enum", Message: "unknown database", Expected: strings.Join(known, ", ")}}}
}

// sqlError classifies an error from SQLite that is not already a toolenv
// error: limits hit by a value are the caller's, anything else is ours.
func (b *Backend) sqlError(err error) error {
	return rodb.QueryError(err, b.opt.Logger.With("backend", BackendType))
}

// Close closes the worlds' writable copies and the databases the
// backend opened.
func (b *Backend) Close() error { return errors.Join(b.worlds.Close(), b.dbs.Close()) }

// DropSession ends a session now; it reports whether it existed.
func (b *Backend) DropSession(id string) bool { return b.store.drop(id) }

// Stats are a backend's session figures.
type Stats struct {
	// Sessions are the sessions held in memory, Bytes what they hold.
	Sessions int   `json:"sessions"`
	Bytes    int64 `json:"bytes"`
	// Pinned counts the sessions their owners hold (PinSession).
	Pinned int `json:"pinned,omitempty"`
	// Evictions counts sessions dropped from memory (idle, or over the
	// memory cap). With a log they are rebuilt on their next call.
	Evictions int `json:"evictions"`
	// Restored counts sessions rebuilt from their log (Options.Log),
	// Replayed the logged calls replayed to do it and to catch up with
	// calls served by other replicas.
	Restored int `json:"restored,omitempty"`
	Replayed int `json:"replayed,omitempty"`
	// MemoHits and MemoMisses count the results rendered from the render
	// memo and from the databases (Options.RenderCacheBytes).
	MemoHits   int64 `json:"memo_hits,omitempty"`
	MemoMisses int64 `json:"memo_misses,omitempty"`
}

// Stats reports the sessions held, the memory they hold, how many were
// evicted and how many were rebuilt from their logs.
func (b *Backend) Stats() Stats {
	st := b.store.stats()
	if b.memo != nil {
		st.MemoHits, st.MemoMisses = b.memo.hits.Load(), b.memo.misses.Load()
	}
	return st
}

// render executes a result's queries and returns its response body.
func (b *Backend) render(ctx context.Context, r *result, ss *session) (json.RawMessage, error) {
	db, memoOK := b.reader(ss, r)
	var (
		key  memoKey
		memo *memoEntry
	)
	memos := b.memo
	if !memoOK {
		memos = nil
	}
	if memos != nil && r.q != nil {
		key = memos.key(r.db, string(r.kind), r.q.sql(false))
		memo, _ = memos.get(key)
	}
	switch r.kind {
	case kindTable:
		if memo == nil {
			p := r.q.previewSQL(b.opt.PreviewRows)
			rows, err := db.Query(ctx, p.sql, p.args, 0)
			if err != nil {
				return nil, err
			}
			// The preview is the query's first rows: when it holds fewer
			// than it may, it holds them all, and they are the count.
			n := int64(len(rows.Rows))
			if len(rows.Rows) >= b.opt.PreviewRows {
				if n, err = count(ctx, db, r.q); err != nil {
					return nil, err
				}
			}
			memo = &memoEntry{key: key, n: n, rows: rows.Rows}
			memos.put(memo)
		}
		return marshal(tableBody{Label: r.label, Type: r.kind, Columns: r.q.colNames(), RowCount: memo.n, Preview: memo.rows})
	case kindGrouped:
		if memo == nil {
			n, err := count(ctx, db, r.q)
			if err != nil {
				return nil, err
			}
			memo = &memoEntry{key: key, n: n}
			memos.put(memo)
		}
		return marshal(groupedBody{Label: r.label, Type: r.kind, Columns: r.group.src.colNames(), GroupBy: r.group.keys, GroupCount: memo.n})
	case kindValue:
		if memo == nil {
			s := r.q.sql(false)
			v, err := db.QueryValue(ctx, s.sql, s.args)
			if err != nil {
				return nil, err
			}
			memo = &memoEntry{key: key, value: v}
			memos.put(memo)
		}
		return marshal(valueBody{Label: r.label, Type: r.kind, Value: memo.value})
	case kindList, kindRows:
		if memo == nil {
			s := r.q.sql(false)
			rows, err := db.Query(ctx, s.sql, s.args, b.opt.MaxRows)
			if err != nil {
				return nil, err
			}
			// The row cap bounds what a call shows, not what the session
			// holds: a bigger result shows its first page and its size, and
			// stays usable under its label.
			total := int64(len(rows.Rows))
			if rows.Truncated {
				if total, err = count(ctx, db, r.q); err != nil {
					return nil, err
				}
			}
			memo = &memoEntry{key: key, n: total, rows: rows.Rows, trunc: rows.Truncated}
			memos.put(memo)
		}
		total := memo.n
		var shown *int
		note := ""
		if memo.trunc {
			n := len(memo.rows)
			shown = &n
			note = fmt.Sprintf("showing the first %d of %d; the whole result is kept as $%s$: filter, group, aggregate or limit it", n, total, r.label)
		}
		if r.kind == kindRows {
			return marshal(rowsBody{Label: r.label, Type: r.kind, Columns: r.q.colNames(), RowCount: total, Shown: shown, Note: note, Rows: memo.rows})
		}
		vals := make([]any, len(memo.rows))
		for i, row := range memo.rows {
			vals[i] = row[0]
		}
		return marshal(listBody{Label: r.label, Type: r.kind, KeyName: r.listCol, Count: total, Shown: shown, Note: note, Values: vals})
	}
	return nil, fmt.Errorf("render: unknown kind %s", r.kind)
}

func count(ctx context.Context, db querier, q *query) (int64, error) {
	c := q.countSQL()
	v, err := db.QueryValue(ctx, c.sql, c.args)
	if err != nil {
		return 0, err
	}
	n, _ := v.(int64)
	return n, nil
}
