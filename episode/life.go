package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/store/epstore"
)

// Env serves RL episodes over an environment's tasks and call pipeline:
// Reset starts one, Step acts in it, State reads it, End closes it.
// Every tool call goes through the environment's pipeline, exactly as a
// call from any front-end does. It is safe for concurrent use.
//
// An episode holds a slot of Options.Max from its reset until it ends:
// its final answer or its step limit (done), its client's close, or its
// idle expiry. An ended episode's record stays readable (Record, State):
// in the store, and the newest within Options.RecordBytes in memory.
type Env struct {
	env  *environment.Environment
	opts Options
	log  *epstore.Log // episodes in the store; nil: in this process
	// archive is where episodes kept in this process are written when
	// they end (nil without a store holding the episode tables).
	archive *epstore.Log

	tasks  map[string][]*toolenv.Task // by collection, sorted as the harness sorts them
	byID   map[string]map[string]*toolenv.Task
	infoMu sync.Mutex
	infos  map[string]*taskInfo // by collection + "\x00" + task id
	sets   map[string]*toolset

	mu        sync.Mutex
	live      map[string]*Episode
	pending   int
	clients   map[string]int // open and pending episodes by client
	tombs     map[string]tomb
	tombOrder []string // ids of tombs, oldest first
	kept      int64    // bytes of the records tombs hold
	keptFrom  int      // tombOrder before it holds no record
	counts    Counts
	stop      chan struct{}
	stopOnce  sync.Once

	// onCall, when set (by tests), is told of each call a step makes,
	// with its number in the step.
	onCall func(n int)

	// The writer of ended episodes to the store (archive.go).
	archMu      sync.Mutex
	archBusy    bool // a write is in progress
	archQ       chan archiving
	archDone    chan struct{}
	archPending map[string]*Episode
}

// Counts are what an Env has done since it started, for /metrics.
type Counts struct {
	// Open is the episodes open now.
	Open int `json:"open"`
	// Ended counts the episodes ended, by how: done (final answer or
	// step limit), closed (by their client), expired (idle).
	Done    int `json:"done"`
	Closed  int `json:"closed"`
	Expired int `json:"expired"`
	// Refused counts the resets refused for room: at Options.Max (full)
	// or at the client's share (client_share).
	RefusedFull   int `json:"refused_full"`
	RefusedClient int `json:"refused_client_share"`
}

// tomb says how an episode this process served ended.
type tomb struct {
	err error
	at  time.Time
	ep  *Episode // for its record and state, in memory (nil: forgotten)
}

// New returns the episodes of env. Close it to stop its idle sweeper.
func New(ctx context.Context, env *environment.Environment, opts Options) (*Env, error) {
	opts.defaults()
	e := &Env{env: env, opts: opts, tasks: map[string][]*toolenv.Task{}, byID: map[string]map[string]*toolenv.Task{},
		infos: map[string]*taskInfo{}, sets: map[string]*toolset{}, live: map[string]*Episode{}, clients: map[string]int{},
		tombs: map[string]tomb{}, stop: make(chan struct{})}
	switch opts.Persist {
	case "memory", "store", "":
		if opts.Persist == "store" && env.Sessions == nil {
			return nil, invalid("episodes in the store need the task sessions in the store too", "start the server with --sessions store (the default with a postgres:// store)")
		}
	default:
		return nil, invalid(fmt.Sprintf("episode persistence %q", opts.Persist), "want memory or store")
	}
	if env.Store != nil {
		if l, err := epstore.New(ctx, env.Store); err == nil {
			e.archive = l
		} else if opts.Persist == "store" || env.Sessions != nil {
			return nil, err
		}
	}
	if opts.Persist != "memory" && env.Sessions != nil {
		e.log = e.archive
	}
	if e.log == nil && e.archive != nil {
		e.archQ, e.archDone, e.archPending = make(chan archiving, 1024), make(chan struct{}), map[string]*Episode{}
		go e.archiver(e.archQ, e.archDone)
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
	if env.Metrics != nil {
		env.Metrics.CountEpisodes(func() map[string]int {
			c := e.Counts()
			return map[string]int{"open": c.Open, "done": c.Done, "closed": c.Closed, "expired": c.Expired,
				"refused_full": c.RefusedFull, "refused_client_share": c.RefusedClient}
		})
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

// Counts returns what the episodes have done so far.
func (e *Env) Counts() Counts {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.counts
	c.Open = len(e.live)
	return c
}

// Close stops the idle sweeper and writes the ended episodes still
// queued for the store. Open episodes stay in the store (when
// persistent); their in-memory copies are dropped, and what the backends
// hold of their sessions is released (environment.EndSession: their MCP
// instances, their pinned task sessions).
func (e *Env) Close() error {
	e.stopOnce.Do(func() {
		close(e.stop)
		e.mu.Lock()
		open := make([]string, 0, len(e.live))
		for id := range e.live {
			open = append(open, id)
		}
		e.mu.Unlock()
		for _, id := range open {
			e.release(id)
		}
		e.closeArchive()
	})
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
				e.leaveLocked(ep)
				e.counts.Expired++
				e.bury(id, tomb{err: e.expiredErr(id, ep.lastUsedAt()), at: now, ep: ep})
			}
		}
	}
	for id, t := range e.tombs {
		if now.Sub(t.at) > time.Hour {
			e.forget(id, t)
		}
	}
	e.pruneOrder()
	e.mu.Unlock()
	for _, ep := range expired {
		e.release(ep.id)
		e.ended(ctx, ep, epstore.StateExpired, now)
	}
	if len(expired) > 0 {
		e.opts.Logger.Debug("episodes expired", "count", len(expired))
	}
	return len(expired)
}

// The bound on how many ended episodes this process remembers the end
// of (for a late step's error); their records are bounded by
// Options.RecordBytes.
const maxTombs = 100000

// bury remembers how episode id ended; e.mu is held. The oldest are
// forgotten beyond maxTombs, and the records of the oldest are dropped
// while those kept hold more than Options.RecordBytes (or always, with
// episodes in the store, where their records are read).
func (e *Env) bury(id string, t tomb) {
	if t.ep != nil {
		if e.log != nil || e.opts.RecordBytes == 0 {
			t.ep = nil
		} else {
			e.kept += t.ep.bytes
		}
	}
	if old, ok := e.tombs[id]; ok {
		e.forget(id, old)
	}
	e.tombs[id] = t
	e.tombOrder = append(e.tombOrder, id)
	for ; e.kept > e.opts.RecordBytes && e.keptFrom < len(e.tombOrder); e.keptFrom++ {
		old, ok := e.tombs[e.tombOrder[e.keptFrom]]
		if ok && old.ep != nil {
			e.kept -= old.ep.bytes
			old.ep = nil
			e.tombs[e.tombOrder[e.keptFrom]] = old
		}
	}
	if len(e.tombOrder) > maxTombs {
		if old, ok := e.tombs[e.tombOrder[0]]; ok {
			e.forget(e.tombOrder[0], old)
		}
		e.tombOrder = e.tombOrder[1:]
		e.keptFrom = max(e.keptFrom-1, 0)
	}
}

// forget drops tomb t of id; e.mu is held (tombOrder is pruned later).
func (e *Env) forget(id string, t tomb) {
	if t.ep != nil {
		e.kept -= t.ep.bytes
	}
	delete(e.tombs, id)
}

// pruneOrder drops the ids of forgotten tombs from tombOrder; e.mu is
// held.
func (e *Env) pruneOrder() {
	kept := e.tombOrder[:0]
	seen := make(map[string]bool, len(e.tombs))
	for _, id := range e.tombOrder {
		if _, ok := e.tombs[id]; ok && !seen[id] {
			seen[id] = true
			kept = append(kept, id)
		}
	}
	clear(e.tombOrder[len(kept):])
	e.tombOrder = kept
	e.keptFrom = 0 // the indices moved; bury walks past the dropped again
}

// Open returns how many episodes this process holds open.
func (e *Env) Open() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.live)
}

// leaveLocked takes ep out of the open episodes and its client's count;
// e.mu is held.
func (e *Env) leaveLocked(ep *Episode) {
	if e.live[ep.id] != ep {
		return
	}
	delete(e.live, ep.id)
	if ep.client != "" {
		if e.clients[ep.client]--; e.clients[ep.client] <= 0 {
			delete(e.clients, ep.client)
		}
	}
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

func doneErr(id string, steps int, truncated bool) error {
	return &toolenv.Error{Status: toolenv.StatusBadRequest, Err: ErrDone,
		Message: fmt.Sprintf("episode %s is done (after %d steps%s): it takes no more steps", clip(id), steps, map[bool]string{true: ", truncated at its step limit"}[truncated]),
		Hint:    "read its state or record, and reset a new episode"}
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

// release drops what the backends hold of an episode's session
// (environment.EndSession: a task session, an MCP server's own instance
// of the episode, reached through the wrappers of drifted collections).
// Every way an episode leaves the open ones (done, closed, expired, a
// reset that failed, Close) calls it.
func (e *Env) release(id string) { e.env.EndSession(id) }

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
// arguments, not found); a server at its cap, or a client at its share
// of it, is refused with ErrFull.
func (e *Env) Reset(ctx context.Context, principal string, o *ResetOptions) (*StepResult, error) {
	if o == nil {
		o = &ResetOptions{}
	}
	ep, err := e.build(ctx, principal, newID(), o)
	if err != nil {
		return nil, err
	}
	ep.client = o.Client
	if ep.client == "" {
		ep.client = "principal:" + ep.principal
	}
	if err := e.reserve(ep.client); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		e.mu.Lock()
		e.pending--
		if ok {
			e.live[ep.id] = ep
		} else if e.clients[ep.client]--; e.clients[ep.client] <= 0 {
			delete(e.clients, ep.client)
		}
		e.mu.Unlock()
		if !ok {
			e.release(ep.id)
		}
	}()
	e.pin(ep)
	if err := e.env.StartSession(ctx, ep.coll.Name, ep.id, ep.task.Initial); err != nil {
		return nil, err // (released above: an instance half-started is dropped)
	}
	u := e.begin(ep)
	if err := e.initialize(ctx, ep); err != nil {
		if rerr := u.undo(ctx, ep.id); rerr != nil {
			e.opts.Logger.Warn("episode reset not rolled back", "episode", ep.id, "err", rerr)
		}
		return nil, err
	}
	now := e.opts.Now()
	if e.log != nil {
		raw, err := json.Marshal(ep.spec)
		if err != nil {
			return nil, err
		}
		if err := e.log.Create(ctx, ep.id, principal, raw, now, u.writer()); err != nil {
			_ = u.undo(ctx, ep.id)
			return nil, err
		}
	} else if err := u.write(ctx); err != nil {
		_ = u.undo(ctx, ep.id)
		return nil, err
	}
	u.end()
	ep.created = now
	ep.touch(now)
	ok = true
	return ep.resetResult(), nil
}

// reserve takes a slot under the cap and the client's share of it.
func (e *Env) reserve(client string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts.Max > 0 && len(e.live)+e.pending >= e.opts.Max {
		e.mu.Unlock()
		e.Sweep(context.Background())
		e.mu.Lock()
		if len(e.live)+e.pending >= e.opts.Max {
			e.counts.RefusedFull++
			return &toolenv.Error{Status: toolenv.StatusUnavailable, Err: ErrFull,
				Message: fmt.Sprintf("this server holds its cap of %d open episodes (%s)", e.opts.Max, MaxFlag),
				Hint:    "close episodes you have finished (a close message, or POST /openenv/close), retry later, or start the server with a larger " + MaxFlag}
		}
	}
	if e.opts.MaxPerClient > 0 && e.clients[client] >= e.opts.MaxPerClient {
		e.counts.RefusedClient++
		return &toolenv.Error{Status: toolenv.StatusUnavailable, Err: ErrFull,
			Message: fmt.Sprintf("this client holds its share of %d open episodes (%s; the server holds %d of %d)", e.opts.MaxPerClient, MaxPerClientFlag, len(e.live)+e.pending, e.opts.Max),
			Hint:    "close episodes you have finished (a close message, or POST /openenv/close), retry later, or start the server with a larger " + MaxPerClientFlag}
	}
	e.pending++
	e.clients[client]++
	return nil
}

// acquire returns principal's open episode id, locked, loading it from
// the store when this process does not hold it. The caller unlocks
// ep.mu. An episode that ended is the error saying how.
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
				if errors.Is(err, ErrDone) {
					e.finish(ctx, ep, now)
				}
				return nil, err
			}
		}
		return ep, nil
	}
	if dead {
		if tb.ep != nil && tb.ep.principal != digest {
			return nil, unknownErr(id)
		}
		return nil, tb.err
	}
	if e.log == nil {
		return nil, unknownErr(id)
	}
	return e.load(ctx, principal, id, now)
}

// view returns principal's episode id, open or ended, locked, to read
// its state or record: an open one (brought up to date with the store),
// one this process keeps the record of, or any the store holds. The
// caller unlocks ep.mu.
func (e *Env) view(ctx context.Context, principal, id string) (*Episode, error) {
	e.mu.Lock()
	ep := e.live[id]
	tb, dead := e.tombs[id]
	e.mu.Unlock()
	digest := epstore.Principal(principal)
	if ep == nil && dead && tb.ep == nil {
		tb.ep = e.pendingArchive(id) // not kept, not written yet
	}
	if ep == nil && dead && tb.ep != nil {
		if tb.ep.principal != digest {
			return nil, unknownErr(id)
		}
		tb.ep.mu.Lock()
		return tb.ep, nil
	}
	if ep != nil || (e.log != nil && !dead) {
		ep, err := e.acquire(ctx, principal, id)
		if err == nil {
			return ep, nil
		}
		if !errors.Is(err, ErrExpired) && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrDone) {
			return nil, err
		}
	}
	src := e.log
	if src == nil {
		src = e.archive
	}
	if src != nil {
		row, steps, err := src.Read(ctx, id, principal, 0)
		if err == nil {
			ep, err := e.rebuild(ctx, principal, row, steps)
			if err != nil {
				return nil, err
			}
			ep.mu.Lock()
			return ep, nil
		}
		if !errors.Is(err, epstore.ErrNotFound) {
			return nil, err
		}
	}
	if dead {
		return nil, tb.err
	}
	return nil, unknownErr(id)
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
	case epstore.StateDone:
		return nil, doneErr(id, int(row.Steps), false)
	}
	if e.opts.Idle > 0 && now.Sub(row.LastUsed) > e.opts.Idle {
		_ = e.log.End(ctx, id, epstore.StateExpired, now)
		return nil, e.expiredErr(id, row.LastUsed)
	}
	ep, err := e.rebuild(ctx, principal, row, steps)
	if err != nil {
		return nil, err
	}
	e.pin(ep)
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
	ep.principal = row.Principal()
	for _, s := range steps {
		if err := ep.applyLogged(s); err != nil {
			return nil, err
		}
	}
	ep.created, ep.lastUsed = row.Created, row.LastUsed
	return ep, nil
}

// expire ends an idle episode.
func (e *Env) expire(ctx context.Context, ep *Episode, now time.Time) {
	e.mu.Lock()
	left := e.live[ep.id] == ep
	if left {
		e.leaveLocked(ep)
		e.counts.Expired++
		e.bury(ep.id, tomb{err: e.expiredErr(ep.id, ep.lastUsedAt()), at: now, ep: ep})
	}
	e.mu.Unlock()
	if left {
		e.release(ep.id)
		e.ended(ctx, ep, epstore.StateExpired, now)
	}
}

// finish ends an episode that is done (its final answer, or its step
// limit): its slot is free at once, its record stays readable.
func (e *Env) finish(ctx context.Context, ep *Episode, now time.Time) {
	e.mu.Lock()
	left := e.live[ep.id] == ep
	if left {
		e.leaveLocked(ep)
		e.counts.Done++
		e.bury(ep.id, tomb{err: doneErr(ep.id, len(ep.history), ep.truncated), at: now, ep: ep})
	}
	e.mu.Unlock()
	if left {
		e.release(ep.id)
		if e.log == nil {
			e.ended(ctx, ep, epstore.StateDone, now)
		}
	}
}

// ended records how an episode ended: with episodes in the store, on its
// row; otherwise by writing the whole episode to the store, so that it
// can be exported after the fact.
func (e *Env) ended(ctx context.Context, ep *Episode, state string, now time.Time) {
	ctx = context.WithoutCancel(ctx)
	if e.log != nil {
		if err := e.log.End(ctx, ep.id, state, now); err != nil {
			e.opts.Logger.Warn("episode end not recorded", "episode", ep.id, "state", state, "err", err)
		}
		return
	}
	if e.archive == nil {
		return
	}
	e.queueArchive(ep, state, now)
}

// Step acts in principal's episode id. Bad input (an action of the wrong
// shape, a tool the episode does not offer, a step after the end) is an
// error and changes nothing; a tool call that fails is an observation, a
// step like any other. A step either happens whole (recorded and
// applied) or not at all; a step resent with the RequestID of one
// already taken gets that step's answer again.
func (e *Env) Step(ctx context.Context, principal, id string, a *Action) (*StepResult, error) {
	if a == nil {
		return nil, invalid("no action", "send an action")
	}
	ep, err := e.acquire(ctx, principal, id)
	if err != nil {
		if a.RequestID != "" && (errors.Is(err, ErrDone) || errors.Is(err, ErrClosed) || errors.Is(err, ErrExpired)) {
			// A resent step whose first answer ended the episode.
			if old, verr := e.view(ctx, principal, id); verr == nil {
				defer old.mu.Unlock()
				if sr, found, rerr := old.resent(a); found || rerr != nil {
					return sr, rerr
				}
			}
		}
		return nil, err
	}
	sr, err := ep.step(ctx, a)
	done := ep.done
	ep.mu.Unlock()
	if err == nil && done {
		e.finish(ctx, ep, e.opts.Now())
	}
	return sr, err
}

// State returns the state of principal's episode id, open or ended.
func (e *Env) State(ctx context.Context, principal, id string) (*State, error) {
	ep, err := e.view(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.state(), nil
}

// Tools returns the tools of principal's episode id, as list_tools
// gives them, and the episode's own: its task's, with SubmitTool last.
func (e *Env) Tools(ctx context.Context, principal, id string) ([]*toolenv.Tool, error) {
	ep, err := e.view(ctx, principal, id)
	if err != nil {
		return nil, err
	}
	defer ep.mu.Unlock()
	return ep.info.offered, nil
}

// End closes principal's episode id (OpenEnv's close). Its record stays
// readable (Record). Closing an episode that is done is not an error.
func (e *Env) End(ctx context.Context, principal, id string) error {
	ep, err := e.acquire(ctx, principal, id)
	if errors.Is(err, ErrDone) {
		return nil
	}
	if err != nil {
		return err
	}
	ep.gone = closedErr(id)
	ep.mu.Unlock()
	now := e.opts.Now()
	e.mu.Lock()
	e.leaveLocked(ep)
	e.counts.Closed++
	e.bury(id, tomb{err: ep.gone, at: now, ep: ep})
	e.mu.Unlock()
	e.release(id)
	e.ended(ctx, ep, epstore.StateClosed, now)
	return nil
}
