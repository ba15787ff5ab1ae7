package mcpsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// MetaInfraFailure is the Result.Meta key set on a call that failed
// because the environment failed, not the agent (invoke.MetaInfraFailure):
// a trainer masks such an episode rather than reward it 0. Its values
// name the failure.
const MetaInfraFailure = invoke.MetaInfraFailure

// The values of MetaInfraFailure an isolated MCP server sets.
const (
	// InfraInstanceExited: the episode's own instance exited (crashed,
	// was killed) mid-episode; its state is lost, so every later call of
	// the episode fails the same way. The pool has started another for
	// the next episode.
	InfraInstanceExited = "mcp_instance_exited"
	// InfraNoInstance: the episode could get no instance (every one of
	// Isolation.Max in use).
	InfraNoInstance = "mcp_no_instance"
	// InfraTimeout: the episode's instance did not answer within the
	// call's deadline.
	InfraTimeout = "mcp_instance_timeout"
)

// isolated gives each session (episode) an instance of its own from a
// Pool: the instance is acquired when the session starts (StartSession)
// or at its first call, and released when the session ends
// (DropSession). Calls without a session go to the shared client.
type isolated struct {
	pool   *Pool
	shared *Client
	hc     *http.Client
	getenv func(string) string

	mu     sync.Mutex
	worlds map[string]*world
	serial uint64 // the last world's serial
	empty  string // the origin of a session started with no initial files
}

// world is one session's instance and the state it started from. Its
// fields below state are set before ready is closed.
type world struct {
	origin  string
	serial  uint64 // tells a session started again from the one before
	state   int    // worldNew, worldAcquiring, worldReady (under isolated.mu)
	dropped bool   // the session ended (under isolated.mu)
	ready   chan struct{}
	inst    *Instance // nil: none (err says why)
	err     error
	mu      sync.Mutex
	failed  string // why the instance is gone mid-episode
}

// The states of a world's acquisition.
const (
	worldNew = iota
	worldAcquiring
	worldReady
)

// newWorld makes a world from origin; iso.mu is held.
func (iso *isolated) newWorld(origin string) *world {
	iso.serial++
	return &world{origin: origin, serial: iso.serial, ready: make(chan struct{})}
}

// acquired ends w's acquisition, releasing the instance at once when the
// session ended meanwhile.
func (iso *isolated) acquired(w *world) {
	iso.mu.Lock()
	w.state = worldReady
	dropped := w.dropped
	iso.mu.Unlock()
	close(w.ready)
	if dropped && w.inst != nil {
		iso.pool.Release(w.inst)
	}
}

func (w *world) failure() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

func (w *world) fail(why string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == "" {
		w.failed = why
	}
	return w.failed
}

func newIsolated(pool *Pool, shared *Client) *isolated {
	iso := &isolated{pool: pool, shared: shared, worlds: map[string]*world{}, getenv: pool.opts.Getenv, hc: pool.opts.HTTPClient}
	if iso.hc == nil {
		iso.hc = &http.Client{Timeout: pool.opts.StartTimeout}
	}
	iso.empty = iso.origin("")
	return iso
}

// origin names the state a session starts from, for the cache keys of
// its calls: the digest of its initial files and of the reset made.
func (iso *isolated) origin(filesDigest string) string {
	if filesDigest == "" {
		filesDigest, _ = seedTree("", "")
	}
	h := sha256.New()
	fmt.Fprintf(h, "files %s\n", filesDigest)
	if r := iso.pool.iso.Reset; r != nil {
		b, _ := json.Marshal(r)
		fmt.Fprintf(h, "reset %s\n", b)
	}
	return "fresh:" + hex.EncodeToString(h.Sum(nil))[:24]
}

// sessionOrigin is the origin of session id's calls and the serial of
// its world: "" and 0 (the shared server's state) for calls without a
// session. A session not started yet gets its world now (from the empty
// state), its instance at its first call that reaches the server.
func (iso *isolated) sessionOrigin(id string) (string, uint64) {
	if id == "" {
		return "", 0
	}
	iso.mu.Lock()
	defer iso.mu.Unlock()
	w := iso.worlds[id]
	if w == nil {
		w = iso.newWorld(iso.empty)
		iso.worlds[id] = w
	}
	return w.origin, w.serial
}

// start gives session id a fresh instance seeded from files (a folder,
// or ""). Bad files are an invalid-arguments error; every instance in
// use, or a reset that fails, an unavailable one (the episode cannot
// start, and says so). A server that does not start is no error: the
// session's calls are then answered as a shared server's are when it is
// down (recordings, the simulator).
func (iso *isolated) start(ctx context.Context, id string, files string) error {
	name := iso.pool.srv.Name
	if files != "" && !iso.pool.srv.Stdio() {
		return toolenv.Errorw(toolenv.StatusInvalidArguments, "seed an HTTP server's state with its reset (isolation.reset)",
			"initial_state.files seeds the folder of a stdio server's own instance; MCP server %s is reached over HTTP", name)
	}
	digest, err := seedTree(files, "")
	if err != nil {
		return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "MCP server %s: %v", name, err)
	}
	origin := iso.origin(digest)
	iso.mu.Lock()
	w := iso.newWorld(origin)
	w.state = worldAcquiring
	old := iso.worlds[id]
	iso.worlds[id] = w
	iso.mu.Unlock()
	if old != nil {
		iso.release(old)
	}
	err = iso.acquire(ctx, w, files)
	iso.acquired(w)
	if err != nil {
		iso.mu.Lock()
		if iso.worlds[id] == w {
			delete(iso.worlds, id)
		}
		iso.mu.Unlock()
		return err
	}
	return nil
}

// acquire gets w its instance, seeded and reset. The error is for the
// episode (bad files, every instance in use, a failed reset); a server
// that does not start leaves w.inst nil and w.err why.
func (iso *isolated) acquire(ctx context.Context, w *world, files string) error {
	name := iso.pool.srv.Name
	var prepare func(dir string) error
	if files != "" && iso.pool.iso.SeedBeforeStart {
		prepare = func(dir string) error {
			_, err := seedTree(files, dir)
			return err
		}
	}
	in, err := iso.pool.Acquire(ctx, prepare)
	switch {
	case errors.Is(err, ErrPoolFull):
		return &toolenv.Error{Status: toolenv.StatusUnavailable, Message: "MCP server " + name, Err: err,
			Hint: fmt.Sprintf("retry when an episode has ended, or raise the server's isolation max (%d)", iso.pool.iso.Max)}
	case ctx.Err() != nil:
		return fmt.Errorf("MCP server %s: waiting for an instance: %w", name, ctx.Err())
	case errors.Is(err, ErrNoInstance):
		w.err = err
		return nil
	case err != nil:
		return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "MCP server %s: %v", name, err)
	}
	if files != "" && prepare == nil {
		if _, err := seedTree(files, in.Dir()); err != nil {
			iso.pool.Release(in)
			return toolenv.Errorw(toolenv.StatusInvalidArguments, "", "MCP server %s: %v", name, err)
		}
	}
	if r := iso.pool.iso.Reset; r != nil {
		if err := iso.reset(ctx, in, r); err != nil {
			iso.pool.Release(in)
			return toolenv.Errorw(toolenv.StatusUnavailable, "check the reset the server's isolation names; the episode did not start", "MCP server %s: the reset before the episode failed: %v", name, err)
		}
	}
	w.inst = in
	return nil
}

// worldFor returns session id's world, acquiring an instance at its
// first call when the session was not started; a result instead when
// the call must fail (every instance in use).
func (iso *isolated) worldFor(ctx context.Context, id string) (*world, *toolenv.Result) {
	iso.mu.Lock()
	w := iso.worlds[id]
	if w == nil {
		w = iso.newWorld(iso.empty)
		iso.worlds[id] = w
	}
	first := w.state == worldNew
	if first {
		w.state = worldAcquiring
	}
	iso.mu.Unlock()
	if first {
		err := iso.acquire(ctx, w, "")
		iso.acquired(w)
		if err != nil {
			iso.mu.Lock()
			if iso.worlds[id] == w {
				delete(iso.worlds, id)
			}
			iso.mu.Unlock()
			r := toolenv.ResultOf(err)
			if toolenv.StatusOf(err) == toolenv.StatusUnavailable {
				r.SetMeta(MetaInfraFailure, InfraNoInstance)
			}
			return nil, r
		}
		return w, nil
	}
	select {
	case <-w.ready:
	case <-ctx.Done():
		return nil, toolenv.ResultOf(ctx.Err())
	}
	return w, nil
}

// failed says why session id's instance is gone mid-episode ("": it is
// not).
func (iso *isolated) failed(id string) string {
	if id == "" {
		return ""
	}
	if w := iso.lookup(id); w != nil {
		return w.failure()
	}
	return ""
}

// lookup returns session id's world, nil when it has none.
func (iso *isolated) lookup(id string) *world {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	return iso.worlds[id]
}

// drop releases session id's instance; false when it had none.
func (iso *isolated) drop(id string) bool {
	iso.mu.Lock()
	w := iso.worlds[id]
	delete(iso.worlds, id)
	iso.mu.Unlock()
	if w == nil {
		return false
	}
	iso.release(w)
	return true
}

// release hands w's instance back to the pool: now, or when its
// acquisition ends (acquired).
func (iso *isolated) release(w *world) {
	iso.mu.Lock()
	w.dropped = true
	st := w.state
	iso.mu.Unlock()
	if st == worldReady && w.inst != nil {
		iso.pool.Release(w.inst)
	}
}
