package invoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"sync"

	toolenv "github.com/toolenv/toolenv"
)

// CallMetaReplayed is the Call.Meta key the episode middleware sets to
// "true" on a call of a session some of whose state-changing calls were
// answered without reaching the real server (from recordings, the
// simulator or the synthesizer): the server's state is then not the
// session's, so a backend must not answer the call from the server (an
// MCP backend simulates it, marked).
const CallMetaReplayed = "episode_replayed"

// MetaEpisodeStep is the Result.Meta key the episode middleware sets on
// the results of calls whose answers depend on state: how many
// state-changing calls of the session came before.
const MetaEpisodeStep = "episode_step"

// DefaultEpisodeSessions is how many sessions the episode middleware
// follows at once unless EpisodeOptions says otherwise; the least
// recently used is forgotten beyond it.
const DefaultEpisodeSessions = 65536

// EpisodeOptions configure Episodes.
type EpisodeOptions struct {
	// MaxSessions bounds the sessions followed; 0 means
	// DefaultEpisodeSessions.
	MaxSessions int
	// Origin names the state a call's session started from ("" : the
	// backend's shared state, whatever it is) and the world the session
	// runs in (0: the shared one); New asks the backend of the call's
	// collection (SessionOriginer). Calls of sessions started from
	// different states never share recordings, and a session whose world
	// changes (its id started again) starts its history again.
	Origin func(call *toolenv.Call) (origin string, world uint64)
}

// SessionOriginer is what a backend that gives sessions states of their
// own implements (mcpsource.Backend, for servers isolated per episode):
// the name of the state session id started from ("" for a shared one),
// and a number that changes when the session is started again in a
// fresh world.
type SessionOriginer interface {
	SessionOrigin(id string) (origin string, world uint64)
}

// RegistryOrigin is EpisodeOptions.Origin over reg: the call's
// collection's backend's SessionOrigin, when it has one.
func RegistryOrigin(reg *Registry) func(call *toolenv.Call) (string, uint64) {
	return func(call *toolenv.Call) (string, uint64) {
		if o, ok := BackendAs[SessionOriginer](reg.Backend(call.Collection.Name)); ok {
			return o.SessionOrigin(call.Session)
		}
		return "", 0
	}
}

// Episodes keys the answers of tools whose answers depend on state
// (toolenv.MetaState read or write) by the session's history, so that the
// cache after it records and replays whole episodes:
//
//   - a call's cache key is its exact key "episode:N:H:" followed by its
//     canonical arguments, where N is the number of state-changing
//     (write) calls its session made before it to the same collection
//     and H a hash of them in order (tool and canonical arguments); the
//     cache answers it from that key alone (CallMetaExactOnly); a
//     session started from a state of its own (EpisodeOptions.Origin)
//     has "episode@ORIGIN:N:H:" instead;
//   - a write call then joins the history, unless the tool is idempotent
//     (toolenv.MetaIdempotent) and the call repeats the write just
//     before it;
//   - reads do not join the history: they change nothing.
//
// The same calls in the same order get the same keys in any session, so
// an episode recorded against a live server replays identically with the
// server gone. Stateless tools pass through untouched (one answer per
// arguments across episodes). Calls without a session share one
// anonymous session per collection. A session's state-changing calls are
// made one at a time, in the order they arrive.
//
// Once a write of a session is answered by anything but the real server
// (a recording, the simulator), the server has not seen the session's
// history: its later calls carry CallMetaReplayed, so that the backend
// does not answer them from a server whose state is another's.
//
// Episodes belongs right before the cache middleware (after drift
// enforcement, so that keys name the tools the backend serves).
func Episodes(opts EpisodeOptions) toolenv.Middleware {
	max := opts.MaxSessions
	if max <= 0 {
		max = DefaultEpisodeSessions
	}
	e := &episodes{max: max, m: map[string]*episode{}}
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			st := call.Tool.State()
			if call.Tool == nil || call.Collection == nil || (st != toolenv.StateRead && st != toolenv.StateWrite) {
				return next.Invoke(ctx, call)
			}
			canon, err := call.CanonicalOf(call.Args)
			if err != nil {
				return toolenv.Errorf(toolenv.StatusInvalidArguments, "send arguments as a JSON object", "arguments cannot be encoded: %v", err)
			}
			ep := e.get(call.Session + "\x00" + call.Collection.Name)
			defer e.release(ep)
			c := call.Clone()
			if c.Meta == nil {
				c.Meta = make(map[string]string, 3)
			}
			prefix := "episode:"
			if opts.Origin != nil {
				o, world := opts.Origin(call)
				if world != ep.world {
					ep.restart(world)
				}
				if o != "" {
					prefix = "episode@" + o + ":"
				}
			}
			c.Meta[CallMetaExactKey] = prefix + strconv.Itoa(ep.n) + ":" + hex.EncodeToString(ep.hash[:12]) + ":" + canon
			c.Meta[CallMetaExactOnly] = "true"
			if ep.replayed {
				c.Meta[CallMetaReplayed] = "true"
			}
			step := ep.n
			res := next.Invoke(ctx, c)
			if st == toolenv.StateWrite {
				ep.wrote(call.Tool, string(canon), res)
			}
			res.SetMeta(MetaEpisodeStep, strconv.Itoa(step))
			return res
		})
	}
}

// episode is one session's history of state-changing calls to one
// collection.
type episode struct {
	mu       sync.Mutex // held for the length of a call: one call at a time
	key      string
	n        int      // state-changing calls so far
	hash     [32]byte // their chained hash
	last     string   // the last one's tool and arguments
	replayed bool     // a write was answered without the real server
	world    uint64   // the world the history is of (EpisodeOptions.Origin)
	users    int      // calls holding or waiting for mu (guarded by episodes.mu)
	used     uint64   // when last used, in episodes.clock ticks
}

// restart forgets the history: the session runs in a fresh world.
func (ep *episode) restart(world uint64) {
	ep.n, ep.hash, ep.last, ep.replayed, ep.world = 0, [32]byte{}, "", false, world
}

// wrote adds a write call to the history.
func (ep *episode) wrote(t *toolenv.Tool, canon string, res *toolenv.Result) {
	this := t.ID + "\x00" + canon
	if res.Source != toolenv.SourceUpstream {
		ep.replayed = true
	}
	if t.Meta[toolenv.MetaIdempotent] == "true" && this == ep.last {
		return
	}
	h := sha256.New()
	h.Write(ep.hash[:])
	h.Write([]byte(this))
	copy(ep.hash[:], h.Sum(nil))
	ep.n++
	ep.last = this
}

// episodes follows the sessions, forgetting the least recently used
// beyond max.
type episodes struct {
	mu    sync.Mutex
	m     map[string]*episode
	max   int
	clock uint64
}

// get returns the session's episode, locked for the caller.
func (e *episodes) get(key string) *episode {
	e.mu.Lock()
	ep := e.m[key]
	if ep == nil {
		if len(e.m) >= e.max {
			e.evict()
		}
		ep = &episode{key: key}
		e.m[key] = ep
	}
	e.clock++
	ep.used = e.clock
	ep.users++
	e.mu.Unlock()
	ep.mu.Lock()
	return ep
}

func (e *episodes) release(ep *episode) {
	ep.mu.Unlock()
	e.mu.Lock()
	ep.users--
	e.mu.Unlock()
}

// evict forgets the least recently used tenth of the idle sessions.
func (e *episodes) evict() {
	type aged struct {
		key  string
		used uint64
	}
	var idle []aged
	for k, ep := range e.m {
		if ep.users == 0 {
			idle = append(idle, aged{k, ep.used})
		}
	}
	if len(idle) == 0 {
		return
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].used < idle[j].used })
	for _, a := range idle[:min(len(idle), max(1, len(e.m)/10))] {
		delete(e.m, a.key)
	}
}
