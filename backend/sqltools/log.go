package sqltools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// SessionLog keeps every session's successful calls in order, durably and
// shared by the replicas of a fleet (package tasksession keeps it in the
// store). With a log, a session is its calls: the databases are read-only,
// so replaying the calls in order rebuilds the session's labelled results
// exactly. A replica that has not seen a session (it was started on
// another replica, or dropped from this one's memory) rebuilds it from the
// log, and before every call a replica replays the calls other replicas
// appended since it last saw the session.
//
// Errors other than ErrNoSession and ErrLogConflict reach the caller: a
// *toolenv.Error keeps its status (a session that ended is not_found with
// a hint saying why), anything else is reported as unavailable.
type SessionLog interface {
	// Start makes the empty log of a new session, or finds the log of a
	// live one (a session made when its id was issued).
	Start(ctx context.Context, session string) error
	// Read returns the session's entries after seq after, in order;
	// ErrNoSession when no session of that id was ever started.
	Read(ctx context.Context, session string, after int64) ([]LogEntry, error)
	// Append adds e as the entry e.Seq; ErrLogConflict when the session
	// already holds an entry e.Seq (another replica appended one first).
	Append(ctx context.Context, session string, e LogEntry) error
}

// LogEntry is one call in a session's log. Data is opaque to the log.
type LogEntry struct {
	Seq  int64
	Data []byte
}

var (
	// ErrNoSession is returned by SessionLog.Read for a session never
	// started.
	ErrNoSession = errors.New("no such session")
	// ErrLogConflict is returned by SessionLog.Append when the entry's
	// sequence number is taken.
	ErrLogConflict = errors.New("the session's log already has this entry (another replica appended it)")
)

// maxAppendTries bounds how often a call is redone after losing the race
// for the next log entry to a call of the same session on another
// replica.
const maxAppendTries = 8

// logRecord is what an entry's Data holds: the operation and its
// arguments as the backend ran them, the label the result got, the
// session's counters around the call (so that replay builds the same SQL
// text), and a digest of the result's query that replay must reproduce.
type logRecord struct {
	// Coll is the collection of the backend that ran the call: one
	// session id may be used on several collections, each backend
	// holding its own session (as in memory), so each replays only its
	// own entries.
	Coll  string         `json:"coll"`
	Op    string         `json:"op"`
	Args  map[string]any `json:"args"`
	Label string         `json:"label"`
	// Seq is the session's alias counter before the call and SeqAfter
	// after it; Auto its automatic label counter after it.
	Seq      int `json:"seq"`
	SeqAfter int `json:"seq_after"`
	Auto     int `json:"auto"`
	// BodyBytes is the size of the body the call returned (for the
	// memory cap; replay does not render).
	BodyBytes int `json:"body_bytes"`
	// Sum is the digest of the result (resultSum).
	Sum string `json:"sum"`
	// World is set on a call that changed the session's world: the rows
	// it changed (replay applies them, runs nothing) and the world's hash
	// after, which replay checks.
	World *world.Record `json:"world,omitempty"`
}

// resultSum digests what a result is: its kind, its query's SQL text and
// bound values. Replay must rebuild the same result; a different one
// means the databases or toolenv changed under the session.
func resultSum(r *result) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", r.kind)
	if r.q != nil {
		s := r.q.sql(false)
		fmt.Fprintf(h, "%s\x00", s.sql)
		for _, a := range s.args {
			fmt.Fprintf(h, "%T:%v\x00", a, a)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// state is a session's scalar state, saved before a call and put back
// when the call fails (or must be redone), so that a failed call leaves
// no trace: the session is exactly its successful calls.
type state struct {
	db     *rodb.DB
	dbName string
	seq    int
	auto   int
}

func (ss *session) save() state {
	return state{db: ss.db, dbName: ss.dbName, seq: ss.seq, auto: ss.auto}
}

func (ss *session) restore(st state) {
	ss.db, ss.dbName, ss.seq, ss.auto = st.db, st.dbName, st.seq, st.auto
}

// logError turns an error of the log into the error a caller gets.
func logError(session string, err error) error {
	var te *toolenv.Error
	if errors.As(err, &te) {
		return err
	}
	return &toolenv.Error{Status: toolenv.StatusUnavailable, Err: err,
		Message: fmt.Sprintf("session %q: its log cannot be reached: %v", session, err),
		Hint:    "retry in a moment: the session is kept, nothing acknowledged is lost"}
}

// syncLog brings ss up to date with its log: on a session this backend
// has not seen, the whole log; else the entries other replicas appended
// since. For a new session (create) with no log yet it starts one. It
// runs with ss.mu held.
func (b *Backend) syncLog(ctx context.Context, ss *session, create bool) error {
	entries, err := b.opt.Log.Read(ctx, ss.id, ss.applied)
	if errors.Is(err, ErrNoSession) {
		if !create {
			return missingSession(ss.id)
		}
		if err := b.opt.Log.Start(ctx, ss.id); err != nil {
			return logError(ss.id, err)
		}
		return nil
	}
	if err != nil {
		return logError(ss.id, err)
	}
	for _, e := range entries {
		if err := b.apply(ctx, ss, e); err != nil {
			return err
		}
	}
	return nil
}

// apply replays one logged call on ss.
func (b *Backend) apply(ctx context.Context, ss *session, e LogEntry) error {
	fail := func(format string, args ...any) error {
		return &toolenv.Error{Status: toolenv.StatusUnavailable,
			Message: fmt.Sprintf("session %q cannot be restored on this replica: call %d of its log %s", ss.id, e.Seq, fmt.Sprintf(format, args...)),
			Hint:    "the databases or toolenv differ between the replicas that served this session (every replica must serve the same collection version); start a new session"}
	}
	if e.Seq != ss.applied+1 {
		return fail("follows call %d (the log skips calls)", ss.applied)
	}
	var rec logRecord
	if err := toolenv.DecodeJSON(e.Data, &rec); err != nil {
		return fail("does not decode: %v", err)
	}
	if rec.Coll != b.name {
		ss.applied = e.Seq // another collection's call in this session
		return nil
	}
	if rec.World != nil {
		prev, prevSpec, applied := ss.world, ss.worldSpec, ss.applied
		var mark world.Mark
		if prev != nil {
			mark = prev.Marker()
		}
		w, err := b.worlds.Replay(ctx, ss.world, rec.World)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail("(%s): %v", rec.Op, err)
		}
		started := rec.World.Start != nil
		ss.journalWorld(started, prev, prevSpec, rec.World.Changes, mark, applied)
		ss.world = w
		if started {
			sp := *rec.World.Start
			ss.worldSpec = &sp
		}
		ss.applied = e.Seq
		b.store.replayed(e.Seq)
		return nil
	}
	op := operations[rec.Op]
	if op == nil {
		return fail("names an unknown operation %q", rec.Op)
	}
	before := ss.save()
	ss.seq = rec.Seq
	r, err := op(b, ctx, ss, opArgs(rec.Args))
	if err == nil && r == nil {
		err = errors.New("the operation returned nothing")
	}
	if err != nil {
		ss.restore(before)
		if ctx.Err() != nil {
			return err
		}
		return fail("(%s) failed on replay: %v", rec.Op, err)
	}
	if sum := resultSum(r); sum != rec.Sum {
		ss.restore(before)
		return fail("(%s) gave a different result on replay", rec.Op)
	}
	r.label, r.bodyLen = rec.Label, rec.BodyBytes
	ss.seq, ss.auto = rec.SeqAfter, rec.Auto
	applied := ss.applied
	ss.applied = e.Seq
	if err := b.commit(ss, r, before, applied); err != nil {
		return err
	}
	b.store.replayed(e.Seq)
	return nil
}

// record encodes the log entry of a call about to be acknowledged.
func (b *Backend) record(op string, m map[string]any, r *result, before state, ss *session) ([]byte, error) {
	return json.Marshal(logRecord{Coll: b.name, Op: op, Args: m, Label: r.label, Seq: before.seq, SeqAfter: ss.seq, Auto: ss.auto, BodyBytes: r.bodyLen, Sum: resultSum(r)})
}

// missingSession is the error of a call on a session that does not exist.
func missingSession(id string) error {
	return &toolenv.Error{Status: toolenv.StatusNotFound,
		Message: fmt.Sprintf("session %q does not exist (never started, or evicted after being idle or over the memory cap)", id),
		Hint:    "start the session again: call initialize_active_data with the task's meta.init arguments, then repeat the calls"}
}

// logCall appends a successful call's entry to the log (Options.Log),
// where it must be the session's next one (conflict: another replica
// appended it first). The caller undoes the call on conflict or error.
func (b *Backend) logCall(ctx context.Context, ss *session, data []byte) (conflict bool, err error) {
	if b.opt.Log != nil {
		if err := b.opt.Log.Append(ctx, ss.id, LogEntry{Seq: ss.applied + 1, Data: data}); err != nil {
			if errors.Is(err, ErrLogConflict) {
				return true, nil
			}
			return false, logError(ss.id, err)
		}
	}
	ss.applied++
	return false, nil
}

// logWorld logs a call that changed the session's world.
func (b *Backend) logWorld(ctx context.Context, ss *session, op string, m map[string]any, label string, rec *world.Record) (bool, error) {
	// A world's call is replayed from the rows it changed: its
	// arguments are not needed (and are not kept).
	data, err := json.Marshal(logRecord{Coll: b.name, Op: op, Label: label, Seq: ss.seq, SeqAfter: ss.seq, Auto: ss.auto, World: rec})
	if err != nil {
		return false, fmt.Errorf("session log: %w", err)
	}
	return b.logCall(ctx, ss, data)
}
