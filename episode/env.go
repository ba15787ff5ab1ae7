package episode

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/statecheck"
	"github.com/toolenv/toolenv/perturb"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/store/epstore"
)

// Errors of episodes, wrapped in a *toolenv.Error whose status the
// front-ends map to their protocol; test them with errors.Is.
var (
	// ErrFull: the server holds Options.Max open episodes.
	ErrFull = errors.New("no room for another episode")
	// ErrUnknown: no episode of that id was issued to this client.
	ErrUnknown = errors.New("unknown episode")
	// ErrExpired: the episode was unused for Options.Idle and expired.
	ErrExpired = errors.New("episode expired")
	// ErrClosed: the episode was closed by its client.
	ErrClosed = errors.New("episode closed")
	// ErrDone: the episode has ended (final answer or step limit); only
	// its state and trajectory can still be read.
	ErrDone = errors.New("episode is done")
	// ErrConflict: another step of the episode was recorded at the same
	// time (by another replica or connection).
	ErrConflict = errors.New("concurrent step")
)

// Options configure an Env. The zero value means the defaults.
type Options struct {
	// Max caps the open episodes of this process (default 10,000;
	// negative: no cap). A reset over the cap is refused with ErrFull:
	// an open episode is never evicted to make room.
	Max int
	// Idle expires episodes unused this long (default 30 min; negative:
	// never); a later step is told ErrExpired.
	Idle time.Duration
	// MaxSteps is the step limit of episodes that set none (default 50).
	MaxSteps int
	// StepTime is how far an episode's fault clock advances per step
	// (default 1 s): rate limits and flaky windows of per-episode faults
	// are on this clock, so they depend on the steps taken, never on
	// wall time.
	StepTime time.Duration
	// Persist is where episodes live: "memory" (this process) or
	// "store" (the environment's store, so that every replica sharing it
	// serves every episode and episodes survive restarts; it needs the
	// environment's task sessions in the store too). "" means store when
	// the environment keeps its task sessions in the store.
	Persist string
	// Judge, when set, offers the pass_rate reward: StableToolBench's
	// judge reads the episode's calls and final answer (nil: pass_rate
	// is refused at reset).
	Judge *judge.Judge
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger logs expiries; nil discards.
	Logger *slog.Logger
}

// MaxFlag names the setting that raises Options.Max, for messages.
const MaxFlag = "--max-episodes"

func (o *Options) defaults() {
	switch {
	case o.Max == 0:
		o.Max = 10000
	case o.Max < 0:
		o.Max = 0
	}
	switch {
	case o.Idle == 0:
		o.Idle = 30 * time.Minute
	case o.Idle < 0:
		o.Idle = 0
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 50
	}
	if o.StepTime <= 0 {
		o.StepTime = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Env serves RL episodes over an environment's tasks and call pipeline:
// Reset starts one, Step acts in it, State reads it, Close ends it. Every
// tool call goes through the environment's pipeline, exactly as a call
// from any front-end does. It is safe for concurrent use.
type Env struct {
	env  *environment.Environment
	opts Options
	log  *epstore.Log // nil: episodes live in this process only

	tasks  map[string][]*toolenv.Task // by collection, sorted as the harness sorts them
	byID   map[string]map[string]*toolenv.Task
	infoMu sync.Mutex
	infos  map[string]*taskInfo // by collection + "\x00" + task id
	sets   map[string]*toolset

	mu        sync.Mutex
	live      map[string]*Episode
	pending   int
	tombs     map[string]tomb
	tombOrder []string // ids of tombs, oldest first
	stop      chan struct{}
	stopOnce  sync.Once
}

// tomb says how an episode this process served ended.
type tomb struct {
	err error
	at  time.Time
	ep  *Episode // for its record, in memory
}

// New returns the episodes of env. Close it to stop its idle sweeper.
func New(ctx context.Context, env *environment.Environment, opts Options) (*Env, error) {
	opts.defaults()
	e := &Env{env: env, opts: opts, tasks: map[string][]*toolenv.Task{}, byID: map[string]map[string]*toolenv.Task{},
		infos: map[string]*taskInfo{}, sets: map[string]*toolset{}, live: map[string]*Episode{}, tombs: map[string]tomb{}, stop: make(chan struct{})}
	switch opts.Persist {
	case "memory":
	case "store", "":
		if opts.Persist == "store" && env.Sessions == nil {
			return nil, invalid("episodes in the store need the task sessions in the store too", "start the server with --sessions store (the default with a postgres:// store)")
		}
		if env.Sessions != nil {
			l, err := epstore.New(ctx, env.Store)
			if err != nil {
				return nil, err
			}
			e.log = l
		}
	default:
		return nil, invalid(fmt.Sprintf("episode persistence %q", opts.Persist), "want memory or store")
	}
	for name, ts := range env.Tasks {
		list := make([]*toolenv.Task, 0, len(ts))
		ids := map[string]*toolenv.Task{}
		for _, t := range ts {
			if t.Collection == "" {
				cp := *t
				cp.Collection = name
				t = &cp
			}
			list = append(list, t)
			ids[t.ID] = t
		}
		harness.SortTasks(list)
		e.tasks[name], e.byID[name] = list, ids
	}
	if opts.Idle > 0 {
		go e.sweeper()
	}
	env.WarmSessions() // MCP servers isolated per episode: instances ready for the first resets
	return e, nil
}

// Persistent reports whether episodes live in the store (any replica
// sharing it serves them).
func (e *Env) Persistent() bool { return e.log != nil }

// Idle returns the idle expiry (0: never).
func (e *Env) Idle() time.Duration { return e.opts.Idle }

// Max returns the cap on open episodes (0: none).
func (e *Env) Max() int { return e.opts.Max }

// Environment returns the environment the episodes run in.
func (e *Env) Environment() *environment.Environment { return e.env }

// Close stops the idle sweeper. Open episodes stay in the store (when
// persistent); their in-memory copies are dropped.
func (e *Env) Close() error {
	e.stopOnce.Do(func() { close(e.stop) })
	return nil
}

func (e *Env) sweeper() {
	every := e.opts.Idle / 4
	every = min(max(every, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.Sweep(context.Background())
		}
	}
}

// Sweep expires the episodes idle longer than Options.Idle and forgets
// how episodes ended an hour ago. It returns how many expired. The
// sweeper calls it; tests may too.
func (e *Env) Sweep(ctx context.Context) int {
	now := e.opts.Now()
	var expired []*Episode
	e.mu.Lock()
	if e.opts.Idle > 0 {
		for id, ep := range e.live {
			if ep.idleSince(now) > e.opts.Idle {
				expired = append(expired, ep)
				delete(e.live, id)
				e.bury(id, tomb{err: e.expiredErr(id, ep.lastUsedAt()), at: now})
			}
		}
	}
	for id, t := range e.tombs {
		if now.Sub(t.at) > time.Hour {
			delete(e.tombs, id)
		}
	}
	e.pruneOrder()
	e.mu.Unlock()
	for _, ep := range expired {
		e.release(ep.id)
		if e.log != nil {
			if err := e.log.End(ctx, ep.id, epstore.StateExpired, now); err != nil {
				e.opts.Logger.Warn("episode expiry not recorded", "episode", ep.id, "err", err)
			}
		}
	}
	if len(expired) > 0 {
		e.opts.Logger.Debug("episodes expired", "count", len(expired))
	}
	return len(expired)
}

// The bounds on what this process remembers of ended episodes: how they
// ended (for a late step's error), and the episode itself (for its
// record, without a store) for the most recent ones.
const (
	maxTombs   = 100000
	maxRecords = 10000
)

// bury remembers how episode id ended; e.mu is held. The oldest are
// forgotten beyond maxTombs, and the records of all but the newest
// maxRecords are dropped.
func (e *Env) bury(id string, t tomb) {
	e.tombs[id] = t
	e.tombOrder = append(e.tombOrder, id)
	if n := len(e.tombOrder) - maxRecords; n > 0 {
		if old, ok := e.tombs[e.tombOrder[n-1]]; ok && old.ep != nil {
			old.ep = nil
			e.tombs[e.tombOrder[n-1]] = old
		}
	}
	if len(e.tombOrder) > maxTombs {
		delete(e.tombs, e.tombOrder[0])
		e.tombOrder = e.tombOrder[1:]
	}
}

// pruneOrder drops the ids of forgotten tombs from tombOrder; e.mu is
// held.
func (e *Env) pruneOrder() {
	kept := e.tombOrder[:0]
	for _, id := range e.tombOrder {
		if _, ok := e.tombs[id]; ok {
			kept = append(kept, id)
		}
	}
	clear(e.tombOrder[len(kept):])
	e.tombOrder = kept
}

// Open returns how many episodes this process holds open.
func (e *Env) Open() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.live)
}

func (e *Env) expiredErr(id string, last time.Time) error {
	return &toolenv.Error{Status: toolenv.StatusGone, Err: ErrExpired,
		Message: fmt.Sprintf("episode %s was unused for %s (since %s) and expired", clip(id), e.opts.Idle, last.UTC().Format(time.RFC3339)),
		Hint:    "reset a new episode; episodes expire after --episode-idle without a step"}
}

func closedErr(id string) error {
	return &toolenv.Error{Status: toolenv.StatusGone, Err: ErrClosed,
		Message: fmt.Sprintf("episode %s was closed by its client", clip(id)), Hint: "reset a new episode"}
}

func unknownErr(id string) error {
	return &toolenv.Error{Status: toolenv.StatusNotFound, Err: ErrUnknown,
		Message: fmt.Sprintf("episode %q was not issued to this client", clip(id)),
		Hint:    "use the episode_id a reset returned to you, with the same token"}
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// release drops what the backends hold of an episode's session.
func (e *Env) release(id string) {
	server.DropSessions(e.env.Registry)(id)
}

// Tasks returns the tasks episodes can be reset to, by collection, in
// the order a split's seed draws from.
func (e *Env) Tasks() map[string][]*toolenv.Task { return e.tasks }

// pick resolves the task of o.
func (e *Env) pick(o *ResetOptions, seed int64) (*toolenv.Collection, *toolenv.Task, error) {
	names := make([]string, 0, len(e.tasks))
	for n := range e.tasks {
		if e.env.Registry.Collection(n) != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	coll := o.Collection
	if coll == "" && o.TaskID != "" {
		var found []string
		for _, n := range names {
			if e.byID[n][o.TaskID] != nil {
				found = append(found, n)
			}
		}
		switch len(found) {
		case 0:
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("no task %q in any collection served (%s)", o.TaskID, strings.Join(names, ", ")), Hint: "list the tasks with GET /openenv/tasks"}
		case 1:
			coll = found[0]
		default:
			return nil, nil, invalid(fmt.Sprintf("task %q is in several collections (%s)", o.TaskID, strings.Join(found, ", ")), "name the collection too")
		}
	}
	if coll == "" {
		switch len(names) {
		case 0:
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: "no collection served has tasks", Hint: "serve a collection folder with a tasks.jsonl (toolenv build bird writes them) or StableToolBench queries"}
		case 1:
			coll = names[0]
		default:
			return nil, nil, invalid("several collections have tasks: "+strings.Join(names, ", "), "name the collection in the reset options")
		}
	}
	c := e.env.Registry.Collection(coll)
	if c == nil {
		hint := "the collections with tasks are " + strings.Join(names, ", ")
		return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("no collection %q is served", coll), Hint: hint}
	}
	if o.TaskID != "" {
		t := e.byID[coll][o.TaskID]
		if t == nil {
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no task %q", coll, o.TaskID), Hint: "list its tasks with GET /openenv/tasks?collection=" + coll}
		}
		return c, t, nil
	}
	pool := e.tasks[coll]
	if o.Split != "" {
		var in []*toolenv.Task
		for _, t := range pool {
			if t.Group == o.Split {
				in = append(in, t)
			}
		}
		if len(in) == 0 {
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no split %q", coll, o.Split), Hint: "its splits are " + strings.Join(e.Splits(coll), ", ")}
		}
		pool = in
	}
	if len(pool) == 0 {
		return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no tasks", coll), Hint: "serve its folder with its tasks.jsonl"}
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x746f6f6c656e76)) // "toolenv"
	return c, pool[r.IntN(len(pool))], nil
}

// Splits returns the task groups of a collection, sorted.
func (e *Env) Splits(coll string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range e.tasks[coll] {
		if t.Group != "" && !seen[t.Group] {
			seen[t.Group] = true
			out = append(out, t.Group)
		}
	}
	sort.Strings(out)
	return out
}

// newID returns a fresh unguessable episode id.
func newID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "ep_" + hex.EncodeToString(b[:])
}

// spec is what the store keeps of an episode's reset, from which any
// replica rebuilds it.
type spec struct {
	Options    ResetOptions `json:"options"`
	Collection string       `json:"collection"`
	TaskID     string       `json:"task_id"`
	Seed       int64        `json:"seed"`
	Version    string       `json:"version,omitempty"`
}

// Reset starts an episode for principal (the client's token, as
// guard.Principal gives it; "" without tokens) and returns its first
// observation. Problems with o are *toolenv.Error values (invalid
// arguments, not found); a server at its cap refuses with ErrFull.
func (e *Env) Reset(ctx context.Context, principal string, o *ResetOptions) (*StepResult, error) {
	if o == nil {
		o = &ResetOptions{}
	}
	ep, err := e.build(ctx, principal, newID(), o)
	if err != nil {
		return nil, err
	}
	if err := e.reserve(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		e.mu.Lock()
		e.pending--
		if ok {
			e.live[ep.id] = ep
		}
		e.mu.Unlock()
		if !ok {
			e.release(ep.id)
		}
	}()
	if e.log != nil {
		raw, err := json.Marshal(ep.spec)
		if err != nil {
			return nil, err
		}
		if err := e.log.Create(ctx, ep.id, principal, raw, e.opts.Now()); err != nil {
			return nil, err
		}
	}
	if err := e.env.StartSession(ctx, ep.coll.Name, ep.id, ep.task.Initial); err != nil {
		if e.log != nil {
			_ = e.log.End(context.WithoutCancel(ctx), ep.id, epstore.StateClosed, e.opts.Now())
		}
		return nil, err
	}
	if err := e.initialize(ctx, ep); err != nil {
		if e.log != nil {
			_ = e.log.End(context.WithoutCancel(ctx), ep.id, epstore.StateClosed, e.opts.Now())
		}
		return nil, err
	}
	ep.touch(e.opts.Now())
	ok = true
	return ep.resetResult(), nil
}

// reserve takes a slot under the cap.
func (e *Env) reserve() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts.Max > 0 && len(e.live)+e.pending >= e.opts.Max {
		e.mu.Unlock()
		e.Sweep(context.Background())
		e.mu.Lock()
		if len(e.live)+e.pending >= e.opts.Max {
			return &toolenv.Error{Status: toolenv.StatusUnavailable, Err: ErrFull,
				Message: fmt.Sprintf("this server holds its cap of %d open episodes", e.opts.Max),
				Hint:    "close episodes you have finished (a close message, or POST /openenv/close), retry later, or start the server with a larger " + MaxFlag}
		}
	}
	e.pending++
	return nil
}

// build makes an episode of o (not yet initialised, not yet live).
func (e *Env) build(ctx context.Context, principal, id string, o *ResetOptions) (*Episode, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	var seed int64
	if o.Seed != nil {
		seed = *o.Seed
	}
	c, task, err := e.pick(o, seed)
	if err != nil {
		return nil, err
	}
	if o.Version != "" && o.Version != c.Version {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound,
			Message: fmt.Sprintf("collection %s is served at version %q, not %q", c.Name, c.Version, o.Version),
			Hint:    "serve the folder of that version (toolenv drift writes each version's folder), or leave version out"}
	}
	info, err := e.taskInfo(c, task)
	if err != nil {
		return nil, err
	}
	ep := &Episode{env: e, id: id, principal: epstore.Principal(principal), coll: c, task: task, info: info,
		spec: spec{Options: *o, Collection: c.Name, TaskID: task.ID, Seed: seed, Version: c.Version}}
	ep.maxSteps = o.MaxSteps
	if ep.maxSteps == 0 {
		ep.maxSteps = e.opts.MaxSteps
	}
	if o.Perturbation != "" {
		if o.Perturbation == perturb.Paraphrase || !containsStr(perturb.Modes, o.Perturbation) {
			return nil, invalid(fmt.Sprintf("perturbation %q", o.Perturbation), "want distractor, case_mix or punctuation (paraphrases need a model: make them with toolenv perturb and serve the tasks it writes)")
		}
		ts, _, err := perturb.Perturb(ctx, []*toolenv.Task{task}, perturb.Options{Mode: o.Perturbation, Seed: uint64(seed)})
		if err != nil {
			return nil, err
		}
		ep.query = ts[0].Query
	}
	if ep.success, ep.successWhy, err = successFor(&o.Reward, task, info.hasAnswer, e.opts.Judge != nil); err != nil {
		return nil, err
	}
	if len(o.Faults) > 0 {
		if ep.faults, err = newEpisodeFaults(o.Faults, seed, e.opts.StepTime); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// initialize runs the task's hidden initialisation calls (the NL2SQL
// starting table) in the episode's session.
func (e *Env) initialize(ctx context.Context, ep *Episode) error {
	for i, g := range agent.InitCalls(ep.task) {
		t := ep.coll.Tool(g.Name)
		if t == nil {
			return &toolenv.Error{Status: toolenv.StatusInternal, Message: fmt.Sprintf("task %s: initialisation call %d names tool %s, which collection %s lacks", ep.task.ID, i+1, g.Name, ep.coll.Name)}
		}
		res := e.invoke(ctx, ep, t, agent.WithLabel(t, g.Args, g.Label))
		if !res.OK() {
			return &toolenv.Error{Status: res.Status, Message: fmt.Sprintf("task %s: initialisation call %d (%s) failed: %s", ep.task.ID, i+1, g.Name, res.Error), Hint: res.Hint}
		}
	}
	return nil
}

// invoke runs one call of ep through the pipeline.
func (e *Env) invoke(ctx context.Context, ep *Episode, t *toolenv.Tool, args map[string]any) *toolenv.Result {
	if args == nil {
		args = map[string]any{}
	}
	call := &toolenv.Call{Tool: t, Collection: ep.coll, Args: args, Session: ep.id, Frontend: "episode", RequestID: ep.id,
		Options: toolenv.CallOptions{Feedback: ep.spec.Options.Feedback}}
	res := e.env.Pipeline.Invoke(ctx, call)
	if res == nil {
		return toolenv.Errorf(toolenv.StatusInternal, "", "the pipeline returned no result")
	}
	return res
}

// acquire returns principal's episode id, locked, loading it from the
// store when this process does not hold it. The caller unlocks ep.mu.
func (e *Env) acquire(ctx context.Context, principal, id string) (*Episode, error) {
	now := e.opts.Now()
	e.mu.Lock()
	ep := e.live[id]
	tb, dead := e.tombs[id]
	e.mu.Unlock()
	digest := epstore.Principal(principal)
	if ep != nil {
		if ep.principal != digest {
			return nil, unknownErr(id)
		}
		ep.mu.Lock()
		if e.opts.Idle > 0 && ep.idleSince(now) > e.opts.Idle {
			ep.mu.Unlock()
			e.expire(ctx, ep, now)
			return nil, e.expiredErr(id, ep.lastUsedAt())
		}
		if ep.gone != nil {
			err := ep.gone
			ep.mu.Unlock()
			return nil, err
		}
		if e.log != nil {
			if err := ep.catchUp(ctx); err != nil {
				ep.mu.Unlock()
				return nil, err
			}
		}
		return ep, nil
	}
	if dead {
		return nil, tb.err
	}
	if e.log == nil {
		return nil, unknownErr(id)
	}
	return e.load(ctx, principal, id, now)
}

// load rebuilds an episode another replica (or an earlier run of this
// one) served, from its row and steps.
func (e *Env) load(ctx context.Context, principal, id string, now time.Time) (*Episode, error) {
	row, steps, err := e.log.Read(ctx, id, principal, 0)
	if errors.Is(err, epstore.ErrNotFound) {
		return nil, unknownErr(id)
	}
	if err != nil {
		return nil, err
	}
	switch row.State {
	case epstore.StateClosed:
		return nil, closedErr(id)
	case epstore.StateExpired:
		return nil, e.expiredErr(id, row.LastUsed)
	}
	if e.opts.Idle > 0 && now.Sub(row.LastUsed) > e.opts.Idle {
		_ = e.log.End(ctx, id, epstore.StateExpired, now)
		return nil, e.expiredErr(id, row.LastUsed)
	}
	ep, err := e.rebuild(ctx, principal, row, steps)
	if err != nil {
		return nil, err
	}
	// An episode another replica opened is served whatever this
	// replica's count: the cap refuses resets, never a step.
	e.mu.Lock()
	if other := e.live[id]; other != nil { // loaded at the same time
		ep = other
	} else {
		e.live[id] = ep
	}
	e.mu.Unlock()
	ep.mu.Lock()
	ep.touch(now)
	return ep, nil
}

// rebuild makes an episode from its stored spec and steps.
func (e *Env) rebuild(ctx context.Context, principal string, row *epstore.Row, steps []epstore.Step) (*Episode, error) {
	var sp spec
	if err := json.Unmarshal(row.Spec, &sp); err != nil {
		return nil, fmt.Errorf("episode %s: its stored reset does not decode: %w", clip(row.ID), err)
	}
	o := sp.Options
	o.Collection, o.TaskID = sp.Collection, sp.TaskID
	seed := sp.Seed
	o.Seed = &seed
	ep, err := e.build(ctx, principal, row.ID, &o)
	if err != nil {
		return nil, fmt.Errorf("episode %s cannot be served here: %w (every replica must serve the same collections and tasks)", clip(row.ID), err)
	}
	if sp.Version != ep.coll.Version {
		return nil, &toolenv.Error{Status: toolenv.StatusUnavailable, Message: fmt.Sprintf("episode %s ran on version %q of %s; this replica serves %q", clip(row.ID), sp.Version, sp.Collection, ep.coll.Version), Hint: "every replica must serve the same collection version"}
	}
	ep.spec.Options = sp.Options
	for _, s := range steps {
		if err := ep.applyLogged(s); err != nil {
			return nil, err
		}
	}
	ep.lastUsed = row.LastUsed
	return ep, nil
}

// expire ends an idle episode.
func (e *Env) expire(ctx context.Context, ep *Episode, now time.Time) {
	e.mu.Lock()
	if e.live[ep.id] == ep {
		delete(e.live, ep.id)
		e.bury(ep.id, tomb{err: e.expiredErr(ep.id, ep.lastUsedAt()), at: now})
	}
	e.mu.Unlock()
	e.release(ep.id)
	if e.log != nil {
		_ = e.log.End(ctx, ep.id, epstore.StateExpired, now)
	}
}

// Step acts in principal's episode id. Bad input (an action of the wrong
// shape, a tool the episode does not offer, a step after the end) is an
// error and changes nothing; a tool call that fails is an observation, a
// step like any other.
func (e *Env) Step(ctx context.Context, principal, id string, a *Action) (*StepResult, error) {
	if a == nil {
		return nil, invalid("no action", "send an action")
	}
	ep, err := e.acquire(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.step(ctx, a)
}

// State returns the state of principal's episode id.
func (e *Env) State(ctx context.Context, principal, id string) (*State, error) {
	ep, err := e.acquire(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.state(), nil
}

// Tools returns the tools of principal's episode id, as list_tools
// gives them, and the episode's own: its task's, with SubmitTool last.
func (e *Env) Tools(ctx context.Context, principal, id string) ([]*toolenv.Tool, error) {
	ep, err := e.acquire(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.info.offered, nil
}

// End closes principal's episode id (OpenEnv's close). Its record stays
// readable (Record) while it is remembered: in the store, or for an hour
// in this process.
func (e *Env) End(ctx context.Context, principal, id string) error {
	ep, err := e.acquire(ctx, principal, id)
	if err != nil {
		return err
	}
	ep.gone = closedErr(id)
	ep.mu.Unlock()
	now := e.opts.Now()
	e.mu.Lock()
	delete(e.live, id)
	e.bury(id, tomb{err: ep.gone, at: now, ep: ep})
	e.mu.Unlock()
	e.release(id)
	if e.log != nil {
		return e.log.End(ctx, id, epstore.StateClosed, now)
	}
	return nil
}

// taskInfo is what every episode of one task shares: the tools offered
// and their renderings (shared by every task offering the same tools),
// the instructions.
type taskInfo struct {
	*toolset
	instructions string
	hasAnswer    bool
}

// toolset is a set of offered tools and its renderings.
type toolset struct {
	offered     []*toolenv.Tool // the task's tools, then SubmitTool
	byName      map[string]*toolenv.Tool
	openai, mcp json.RawMessage
	listed      json.RawMessage // OpenEnv's list_tools form
}

func (e *Env) taskInfo(c *toolenv.Collection, t *toolenv.Task) (*taskInfo, error) {
	key := c.Name + "\x00" + t.ID
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if in := e.infos[key]; in != nil {
		return in, nil
	}
	if err := statecheck.Validate(t.Checks, c); err != nil {
		return nil, invalid(fmt.Sprintf("task %s: %v", t.ID, err), "fix the task's checks")
	}
	_, hasAnswer, _ := answer.Gold(t)
	// Tasks offering the same tools (the same names, and for NL2SQL
	// tasks the same columns) share one rendering.
	cols, _ := json.Marshal(t.Meta["columns"])
	setKey := fmt.Sprintf("%s\x00%v\x00%s\x00%s\x00%t", c.Name, t.Tools, cols, c.Version, hasAnswer)
	ts := e.sets[setKey]
	if ts == nil {
		var err error
		if ts, err = newToolset(c, t, hasAnswer); err != nil {
			return nil, err
		}
		e.sets[setKey] = ts
	}
	in := &taskInfo{toolset: ts, hasAnswer: hasAnswer, instructions: instructions(c, t, hasAnswer)}
	e.infos[key] = in
	return in, nil
}

func newToolset(c *toolenv.Collection, t *toolenv.Task, hasAnswer bool) (*toolset, error) {
	tools, err := harness.TaskTools(c, t)
	if err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: err.Error(), Hint: "check the task's tools against the collection"}
	}
	if len(tools) == 0 {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("task %s offers no tool of collection %s", t.ID, c.Name), Hint: "check the task's tools against the collection"}
	}
	ts := &toolset{byName: map[string]*toolenv.Tool{}}
	for _, tl := range tools {
		if tl.Name == SubmitTool {
			return nil, &toolenv.Error{Status: toolenv.StatusInternal, Message: fmt.Sprintf("collection %s has a tool named %s, which episodes reserve", c.Name, SubmitTool)}
		}
		ts.byName[tl.Name] = tl
	}
	ts.offered = append(append([]*toolenv.Tool(nil), tools...), submitTool(hasAnswer))
	if ts.openai, err = renderOpenAI(ts.offered); err != nil {
		return nil, err
	}
	if ts.mcp, err = renderMCP(ts.offered, "inputSchema"); err != nil {
		return nil, err
	}
	if ts.listed, err = renderMCP(ts.offered, "input_schema"); err != nil {
		return nil, err
	}
	return ts, nil
}
