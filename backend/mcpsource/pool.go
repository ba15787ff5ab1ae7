package mcpsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolenv/toolenv/internal/redact"
)

// ErrNoInstance is the error of an episode that gets no instance of its
// server: all of Isolation.Max are in use (ErrPoolFull), or the server
// does not start.
var ErrNoInstance = errors.New("no instance of the MCP server")

// ErrPoolFull is the error of an episode beyond Isolation.Max instances,
// after waiting the start timeout for one to end.
var ErrPoolFull = errors.New("every instance of the MCP server is in use")

// maxConcurrentStarts bounds the instances a pool starts at once, so that
// refilling (a Node server takes a few hundred milliseconds of CPU to
// start) does not starve the episodes running.
const maxConcurrentStarts = 2

// Pool keeps instances of one server started ahead of the episodes that
// need them (Isolation.Pool of them ready, at most Isolation.Max alive),
// hands each to one episode (Acquire), and stops it when the episode ends
// (Release); it starts replacements in the background, and drops a ready
// instance that exits. Each stdio instance runs in a folder of its own
// (${TOOLENV_EPISODE_DIR}), removed when it is released unless
// Isolation.Keep. Safe for concurrent use; Close stops every instance.
type Pool struct {
	srv  *Server
	opts Options
	iso  Isolation
	log  *slog.Logger
	ctx  context.Context
	stop context.CancelFunc

	mu       sync.Mutex
	ready    []*Instance
	starting int
	live     int           // instances starting, ready or handed out
	changed  chan struct{} // closed and replaced at every change
	lastErr  error         // why the last start failed (nil after a success)
	failures int           // starts failed in a row
	retryAt  time.Time
	retry    *time.Timer
	closed   bool
	warm     bool               // filling: Warm or the first Acquire was called
	handed   map[*Instance]bool // handed out, not yet released
	stats    PoolStats
	wg       sync.WaitGroup // starts and stops in the background
}

// PoolStats counts what a pool did.
type PoolStats struct {
	// Ready, Starting and InUse are the instances now.
	Ready, Starting, InUse int
	// Started counts the instances started, Failed the starts that
	// failed, Exited the instances that exited before they were
	// released (crashed), Handed the instances handed to episodes.
	Started, Failed, Exited, Handed int
}

// Instance is one instance of a server, handed to one episode.
type Instance struct {
	pool   *Pool
	client *Client
	dir    string // its own folder ("" for an HTTP server)
	taken  chan struct{}
	once   sync.Once
}

// Client returns the instance's client.
func (in *Instance) Client() *Client { return in.client }

// Dir returns the instance's own folder ("" for an HTTP server).
func (in *Instance) Dir() string { return in.dir }

// Alive reports whether the instance's server is still connected.
func (in *Instance) Alive() bool {
	select {
	case <-in.client.Exited():
		return false
	default:
	}
	_, _, err := in.client.session()
	return err == nil
}

// exitCause says why the instance is gone, from its client's last error.
func (in *Instance) exitCause() string {
	in.client.mu.Lock()
	defer in.client.mu.Unlock()
	if in.client.lastErr != nil {
		return redact.Text(in.client.lastErr.Error())
	}
	return "the connection closed"
}

// NewPool returns a pool of srv's instances, each a Client made with
// opts (Once and EpisodeDir are the pool's). It starts none until Warm or
// the first Acquire.
func NewPool(srv *Server, opts Options, iso Isolation) (*Pool, error) {
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	iso = iso.withDefaults(srv)
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = defaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = defaultMaxBackoff
	}
	opts.Once, opts.OnToolsChanged = true, nil
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if iso.Dir != "" {
		if err := os.MkdirAll(iso.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("MCP server %s: isolation dir: %w", srv.Name, err)
		}
		// The instances run in their folders: paths they are given must
		// not depend on toolenv's.
		abs, err := filepath.Abs(iso.Dir)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: isolation dir: %w", srv.Name, err)
		}
		iso.Dir = abs
	}
	p := &Pool{srv: srv, opts: opts, iso: iso, log: log.With("mcp_server", srv.Name, "mcp_pool", true), changed: make(chan struct{}), handed: map[*Instance]bool{}}
	p.ctx, p.stop = context.WithCancel(context.Background())
	return p, nil
}

// Warm starts filling the pool, so that the first episodes do not wait
// for a start either; the first Acquire does it otherwise. It returns at
// once.
func (p *Pool) Warm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warm = true
	p.fill()
}

// Isolation returns the pool's settings, defaults filled in.
func (p *Pool) Isolation() Isolation { return p.iso }

// Stats returns what the pool holds and did.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Ready, s.Starting = len(p.ready), p.starting
	s.InUse = p.live - len(p.ready) - p.starting
	return s
}

// broadcast wakes the waiters; p.mu is held.
func (p *Pool) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// fill starts instances until Pool are ready or starting, within Max
// and maxConcurrentStarts, after the backoff of failed starts; p.mu is
// held.
func (p *Pool) fill() {
	for p.warm && !p.closed && p.starting < maxConcurrentStarts && len(p.ready)+p.starting < p.iso.Pool && p.live < p.iso.Max {
		if wait := time.Until(p.retryAt); p.failures > 0 && wait > 0 {
			if p.retry == nil {
				p.retry = time.AfterFunc(wait, func() {
					p.mu.Lock()
					defer p.mu.Unlock()
					p.retry = nil
					p.fill()
				})
			}
			return
		}
		p.starting++
		p.live++
		p.wg.Add(1)
		go p.startOne()
	}
}

// startOne starts one instance into the ready list.
func (p *Pool) startOne() {
	defer p.wg.Done()
	in, err := p.newInstance(p.ctx, nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting--
	if err != nil {
		p.failed(err)
		p.fill()
		return
	}
	if p.closed {
		p.live--
		p.mu.Unlock()
		in.stop(false)
		p.mu.Lock()
		return
	}
	p.ready = append(p.ready, in)
	p.wg.Add(1)
	go p.watch(in)
	p.broadcast()
	p.fill()
}

// failed records a failed start; p.mu is held.
func (p *Pool) failed(err error) {
	p.live--
	p.stats.Failed++
	p.failures++
	p.lastErr = err
	p.retryAt = time.Now().Add(p.opts.backoff(p.failures - 1))
	if !p.closed {
		p.log.Warn("an instance of the MCP server did not start", "server", p.srv.String(), "err", redact.Text(err.Error()), "retry_in", time.Until(p.retryAt).Round(time.Millisecond))
	}
	p.broadcast()
}

// backoff is the wait before start attempt n+1 after n failures.
func (o Options) backoff(n int) time.Duration {
	d := o.MinBackoff
	for i := 0; i < n && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}

// watch drops a ready instance that exits before it is handed out.
func (p *Pool) watch(in *Instance) {
	defer p.wg.Done()
	select {
	case <-in.taken:
		return
	case <-in.client.Exited():
	}
	p.mu.Lock()
	found := false
	for i, r := range p.ready {
		if r == in {
			p.ready = append(p.ready[:i], p.ready[i+1:]...)
			p.live--
			p.stats.Exited++
			p.log.Warn("a ready instance of the MCP server exited; starting another", "server", p.srv.String(), "cause", in.exitCause())
			p.broadcast()
			p.fill()
			found = true
			break
		}
	}
	p.mu.Unlock()
	if found {
		in.stop(false)
	}
}

// newInstance starts an instance in a folder of its own, prepared by
// prepare (when not nil) before the server starts, and waits until it
// lists its tools.
func (p *Pool) newInstance(ctx context.Context, prepare func(dir string) error) (*Instance, error) {
	in := &Instance{pool: p, taken: make(chan struct{})}
	if p.srv.Stdio() {
		dir, err := os.MkdirTemp(p.iso.Dir, "toolenv-mcp-"+p.srv.Name+"-")
		if err != nil {
			return nil, fmt.Errorf("the instance's folder: %w", err)
		}
		in.dir = dir
		if prepare != nil {
			if err := prepare(dir); err != nil {
				os.RemoveAll(dir)
				return nil, &seedError{err}
			}
		}
	}
	o := p.opts
	o.EpisodeDir = in.dir
	c, err := Start(ctx, p.srv, o)
	if err != nil {
		in.removeDir(false)
		return nil, err
	}
	in.client = c
	if _, err := c.Ready(ctx); err != nil {
		in.stop(false)
		return nil, err
	}
	p.mu.Lock()
	p.stats.Started++
	p.failures, p.lastErr = 0, nil
	p.mu.Unlock()
	return in, nil
}

// seedError is a failure to fill an instance's folder: the episode's
// input, not the server's fault.
type seedError struct{ err error }

func (e *seedError) Error() string { return e.err.Error() }

// Acquire hands an instance to one episode: a ready one, or (with none
// ready) the next one started, waiting at most the start timeout (and
// ctx). With prepare, a fresh instance is started after prepare fills
// its folder (Isolation.SeedBeforeStart). The error wraps ErrNoInstance:
// with ErrPoolFull when Max instances stay in use, else with why the
// server does not start (at once, while the backoff after a failed start
// runs).
func (p *Pool) Acquire(ctx context.Context, prepare func(dir string) error) (*Instance, error) {
	wctx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	began := time.Now()
	for {
		p.mu.Lock()
		p.warm = true
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("%w %s: the pool is closed", ErrNoInstance, p.srv.Name)
		}
		if prepare != nil && p.live < p.iso.Max {
			p.live++
			p.mu.Unlock()
			in, err := p.newInstance(wctx, prepare)
			p.mu.Lock()
			var se *seedError
			if errors.As(err, &se) {
				p.live--
				p.broadcast()
				p.mu.Unlock()
				return nil, se.err
			}
			if err != nil {
				p.failed(err)
				p.fill()
				p.mu.Unlock()
				return nil, fmt.Errorf("%w %s: %v", ErrNoInstance, p.srv.Name, err)
			}
			close(in.taken)
			p.stats.Handed++
			p.handed[in] = true
			p.mu.Unlock()
			return in, nil
		}
		for prepare == nil && len(p.ready) > 0 {
			in := p.ready[0]
			p.ready = p.ready[1:]
			close(in.taken)
			if !in.Alive() {
				p.live--
				p.stats.Exited++
				p.wg.Add(1)
				go func() { defer p.wg.Done(); in.stop(false) }()
				continue
			}
			p.stats.Handed++
			p.handed[in] = true
			p.fill()
			p.mu.Unlock()
			return in, nil
		}
		if len(p.ready) == 0 && p.starting == 0 && p.lastErr != nil && time.Now().Before(p.retryAt) {
			err := p.lastErr
			p.mu.Unlock()
			return nil, fmt.Errorf("%w %s: it does not start: %v", ErrNoInstance, p.srv.Name, redact.Text(err.Error()))
		}
		p.fill()
		full := p.live-p.starting >= p.iso.Max
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-wctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil, ctx.Err()
			}
			waited := time.Since(began).Round(time.Millisecond)
			if full {
				return nil, fmt.Errorf("%w: %w (%s: %d at most, isolation max): waited %s for an episode to end", ErrNoInstance, ErrPoolFull, p.srv.Name, p.iso.Max, waited)
			}
			return nil, fmt.Errorf("%w %s: none started within %s", ErrNoInstance, p.srv.Name, waited)
		}
	}
}

// Release stops an instance an episode is done with (in the
// background), removes its folder unless Isolation.Keep, and starts a
// replacement when the pool is short.
func (p *Pool) Release(in *Instance) {
	in.once.Do(func() {
		p.mu.Lock()
		p.live--
		delete(p.handed, in)
		if !in.Alive() {
			p.stats.Exited++
		}
		p.broadcast()
		p.fill()
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			in.stop(p.iso.Keep)
		}()
	})
}

// stop closes the instance's client (stopping its process group) and
// removes its folder unless keep.
func (in *Instance) stop(keep bool) {
	if in.client != nil {
		in.client.Close()
	}
	in.removeDir(keep)
}

func (in *Instance) removeDir(keep bool) {
	if in.dir == "" {
		return
	}
	if keep {
		in.pool.log.Info("kept the folder of an episode's MCP server instance", "dir", in.dir)
		return
	}
	if err := os.RemoveAll(in.dir); err != nil {
		in.pool.log.Warn("the folder of an MCP server instance could not be removed", "dir", in.dir, "err", err)
	}
}

// Close stops every instance, those handed to episodes that have not
// ended too (their folders go unless Isolation.Keep), and waits for the
// pool's background work.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.stop()
	if p.retry != nil {
		p.retry.Stop()
		p.retry = nil
	}
	ready := p.ready
	p.ready = nil
	p.live -= len(ready)
	handed := make([]*Instance, 0, len(p.handed))
	for in := range p.handed {
		handed = append(handed, in)
	}
	p.broadcast()
	p.mu.Unlock()
	for _, in := range ready {
		close(in.taken)
		in.stop(false)
	}
	for _, in := range handed {
		p.Release(in)
	}
	p.wg.Wait()
	return nil
}
