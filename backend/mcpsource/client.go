package mcpsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/redact"
)

// Defaults of Options.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultMaxMessageBytes = 16 << 20
	DefaultMaxTools        = 20000
	defaultMinBackoff      = 250 * time.Millisecond
	defaultMaxBackoff      = 30 * time.Second
	// stableAfter is how long a connection must last for the next
	// restart to start again from the shortest backoff.
	stableAfter = time.Minute
)

// ErrDown is the error of a call made while the server is not connected
// (not started yet, exited, being restarted).
var ErrDown = errors.New("the MCP server is not connected")

// ErrTooLarge is the error of a call whose answer (one JSON-RPC message)
// is larger than Options.MaxMessageBytes.
var ErrTooLarge = errors.New("the MCP server sent a message larger than the limit")

// Options configure a Client. The zero value is usable.
type Options struct {
	// Logger logs starts, exits, restarts and, for a stdio server, each
	// line it writes to stderr (labelled with the server's name); nil
	// discards.
	Logger *slog.Logger
	// Getenv reads the variables ${VAR} references name; nil means
	// os.Getenv.
	Getenv func(string) string
	// StartTimeout bounds starting and initializing the server and its
	// first tools/list; default DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxMessageBytes bounds one message from the server (a stdio line,
	// an HTTP response, an SSE event); default DefaultMaxMessageBytes. A
	// larger answer fails its call with ErrTooLarge.
	MaxMessageBytes int
	// MaxTools bounds the tool list (every page together); default
	// DefaultMaxTools. A longer list is an error.
	MaxTools int
	// MinBackoff and MaxBackoff bound the wait before a restart, doubled
	// after each failed start; defaults 250 ms and 30 s.
	MinBackoff, MaxBackoff time.Duration
	// OnToolsChanged is called (from the client's own goroutine) when a
	// new list of the server's tools differs from the one before: after
	// notifications/tools/list_changed, or after a restart.
	OnToolsChanged func(tools []*mcp.Tool)
	// Recordings keep what the server answered besides tool calls
	// (resources, prompts, completions, its capabilities), so that they
	// are answered when it is gone; nil keeps none.
	Recordings Recordings
	// HTTPClient sends the requests of an HTTP server; nil means a client
	// of its own. Its transport is wrapped to add the server's headers and
	// bound its answers.
	HTTPClient *http.Client
	// Once starts the server once: when it exits (or cannot be started)
	// it is not started again, calls fail with ErrDown, and Exited is
	// closed. An episode's own instance (Pool) is started once: a new
	// process would not hold the episode's state.
	Once bool
	// EpisodeDir is the folder ${TOOLENV_EPISODE_DIR} names in the
	// server's configuration, and a stdio server's working folder when
	// the configuration names none; the server gets it in
	// TOOLENV_EPISODE_DIR too. "" leaves the variable to Getenv.
	EpisodeDir string
}

// Client is a supervised connection to one MCP server, safe for
// concurrent use. Start returns it; Close stops it (and a stdio server's
// process group).
type Client struct {
	srv  *Server // as configured, references unexpanded: for messages
	run  *Server // references expanded
	opts Options
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	relist chan struct{}

	mu       sync.Mutex
	cs       *mcp.ClientSession
	proc     *process
	tools    []*mcp.Tool
	lastErr  error
	ready    chan struct{} // closed at the first list, or when Start's wait ends
	restarts int
	info     *mcp.InitializeResult

	fwd forwarding // what the server sends, to the client of the call (proxy.go)
}

// Start resolves the server's ${VAR} references and starts connecting to
// it in the background, restarting it whenever it exits. It fails at once
// only when the configuration is unusable (a variable not set); use Ready
// to wait for the first tool list.
func Start(ctx context.Context, srv *Server, opts Options) (*Client, error) {
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	run, err := srv.resolved(episodeGetenv(opts.Getenv, opts.EpisodeDir))
	if err != nil {
		return nil, err
	}
	run.withEpisodeDir(opts.EpisodeDir)
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = DefaultMaxTools
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = defaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = defaultMaxBackoff
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{srv: srv, run: run, opts: opts, log: log.With("mcp_server", srv.Name),
		done: make(chan struct{}), relist: make(chan struct{}, 1), ready: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go c.supervise()
	return c, nil
}

// Name returns the server's name.
func (c *Client) Name() string { return c.srv.Name }

// Server returns the server as configured (references unexpanded).
func (c *Client) Server() *Server { return c.srv }

// Ready waits for the first tool list (at most StartTimeout from Start,
// or until ctx ends) and returns it, or why there is none yet. The client
// keeps trying after an error.
func (c *Client) Ready(ctx context.Context) ([]*mcp.Tool, error) {
	// The first start ends within StartTimeout (and the time to stop a
	// server that did not answer): its error then says why.
	t := time.NewTimer(c.opts.StartTimeout + 2*stopGrace + time.Second)
	defer t.Stop()
	select {
	case <-c.ready:
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools != nil {
		return c.tools, nil
	}
	err := c.lastErr
	if err == nil {
		err = fmt.Errorf("MCP server %s: not ready after %s", c.srv, c.opts.StartTimeout)
	}
	return nil, err
}

// Tools returns the last tool list read, nil before the first.
func (c *Client) Tools() []*mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// Info returns the server's initialize result (name, version, protocol),
// nil before the first connection.
func (c *Client) Info() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Restarts returns how many times the server was started again after it
// exited or could not be started.
func (c *Client) Restarts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarts
}

// Exited is closed when the client stops for good: after Close, or (with
// Options.Once) when its server exited or could not be started.
func (c *Client) Exited() <-chan struct{} { return c.done }

// Close stops the client and the server it started, and waits for both.
func (c *Client) Close() error {
	c.cancel()
	<-c.done
	return nil
}

// session returns the live session, or ErrDown with the last cause.
func (c *Client) session() (*mcp.ClientSession, *process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == nil {
		if c.lastErr != nil {
			return nil, nil, fmt.Errorf("%w (%s): %v", ErrDown, c.srv.Name, c.lastErr)
		}
		return nil, nil, fmt.Errorf("%w (%s): still starting", ErrDown, c.srv.Name)
	}
	return c.cs, c.proc, nil
}

// Call calls one tool by its name on the server. A JSON-RPC error the
// server answers is returned as a *CallError; a dead, hung or oversized
// exchange as an error wrapping ErrDown, ErrTooLarge or the context's.
// The Exchange ctx carries (WithExchange) takes what the server sends
// about the call, and an input-required result is returned as it is.
func (c *Client) Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	cs, proc, err := c.session()
	if err != nil {
		return nil, err
	}
	x := ExchangeFrom(ctx)
	defer c.fwd.enter(x, cs.InitializeResult().ProtocolVersion < "2026-07-28")()
	params, done := c.callParams(name, args, x)
	defer done()
	res, err := cs.CallTool(ctx, params)
	if x != nil && x.Peer != nil && (x.Progress != nil || x.LogLevel != "") {
		c.fwd.notes.settle(ctx) // what the server said about the call reaches its peer first
	}
	if err == nil {
		return res, nil
	}
	return nil, c.callError(ctx, proc, err)
}

// CallError is a JSON-RPC error the server answered a call with.
type CallError struct {
	Code    int64
	Message string
	Data    json.RawMessage // the error's data, if any
}

func (e *CallError) Error() string {
	return fmt.Sprintf("the MCP server answered with JSON-RPC error %d: %s", e.Code, e.Message)
}

// callError says why a call failed, in terms a caller can act on.
func (c *Client) callError(ctx context.Context, proc *process, err error) error {
	var we *jsonrpcError
	if errors.As(err, &we) && !sdkTransportError(we) {
		return &CallError{Code: we.Code, Message: we.Message, Data: we.Data}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("MCP server %s: %w", c.srv.Name, ctx.Err())
	}
	if errors.Is(err, ErrTooLarge) || (proc != nil && proc.tooLarge()) || strings.Contains(err.Error(), ErrTooLarge.Error()) {
		return fmt.Errorf("MCP server %s: %w (%d bytes): the call's answer was dropped and the connection restarted", c.srv.Name, ErrTooLarge, c.opts.MaxMessageBytes)
	}
	return fmt.Errorf("MCP server %s: %w: %v", c.srv.Name, ErrDown, redact.Text(err.Error()))
}

// sdkTransportError reports whether we is one the Go SDK makes itself
// rather than the server's answer: a request that never reached the
// server (refused connection, an HTTP error without a JSON-RPC answer:
// "rejected by transport"), or a connection closing. Such a call met a
// server that is down (and may be answered from a recording), whether or
// not the client has yet noticed the connection end.
func sdkTransportError(we *jsonrpcError) bool {
	switch {
	case we.Code == -32005 && we.Message == "rejected by transport",
		we.Code == -32004 && we.Message == "server is closing",
		we.Code == -32003 && we.Message == "client is closing":
		return true
	}
	return false
}

// backoff is the wait before attempt n (0 is the first restart).
func (c *Client) backoff(n int) time.Duration {
	d := c.opts.MinBackoff
	for i := 0; i < n && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.opts.MaxBackoff)
}

// supervise connects, lists the tools, waits for the connection to end,
// and starts again after a backoff, until Close.
func (c *Client) supervise() {
	defer close(c.done)
	failures := 0
	for first := true; ; first = false {
		if !first {
			wait := c.backoff(failures)
			c.log.Warn("restarting the MCP server", "server", c.srv.String(), "in", wait, "attempt", failures+1)
			select {
			case <-time.After(wait):
			case <-c.ctx.Done():
				return
			}
			c.mu.Lock()
			c.restarts++
			c.mu.Unlock()
		}
		cs, proc, err := c.connect()
		if err != nil {
			failures++
			c.down(err, first)
			if c.ctx.Err() != nil || c.opts.Once {
				return
			}
			continue
		}
		started := time.Now()
		c.serve(cs, proc)
		if c.ctx.Err() != nil || c.opts.Once {
			return
		}
		if time.Since(started) > stableAfter {
			failures = 0
		} else {
			failures++
		}
	}
}

// down records why the server is not connected; the first failure also
// ends Ready's wait.
func (c *Client) down(err error, first bool) {
	c.mu.Lock()
	c.cs, c.proc, c.lastErr = nil, nil, err
	c.mu.Unlock()
	if c.ctx.Err() == nil {
		c.log.Warn("the MCP server is not connected", "server", c.srv.String(), "err", redact.Text(err.Error()))
	}
	if first {
		c.markReady()
	}
}

func (c *Client) markReady() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
}

// connect starts (or dials) the server, initializes a session and lists
// its tools, within StartTimeout.
func (c *Client) connect() (*mcp.ClientSession, *process, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
	defer cancel()
	var (
		t    mcp.Transport
		proc *process
		err  error
	)
	if c.run.Stdio() {
		proc, err = startProcess(c.run, c.log, c.opts.MaxMessageBytes)
		if err != nil {
			return nil, nil, err
		}
		t = &mcp.IOTransport{Reader: c.fwd.notes.counting(proc.stdout), Writer: proc.stdin, MaxLineLength: -1}
	} else {
		t = c.httpTransport()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolenv", Version: buildinfo.Version()}, c.clientOptions())
	client.AddReceivingMiddleware(c.requestsMiddleware)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if proc != nil {
			err = proc.explain(err)
			proc.stop()
		}
		return nil, nil, fmt.Errorf("start: %w", c.startError(ctx, err))
	}
	tools, err := c.list(ctx, cs)
	if err != nil {
		cs.Close()
		if proc != nil {
			err = proc.explain(err)
			proc.stop()
		}
		return nil, nil, fmt.Errorf("tools/list: %w", c.startError(ctx, err))
	}
	c.mu.Lock()
	prev := c.tools
	c.cs, c.proc, c.tools, c.lastErr, c.info = cs, proc, tools, nil, cs.InitializeResult()
	c.mu.Unlock()
	c.markReady()
	c.connected(ctx, cs)
	c.log.Info("MCP server connected", "server", c.srv.String(), "tools", len(tools), "protocol", cs.InitializeResult().ProtocolVersion)
	if prev != nil && !sameTools(prev, tools) && c.opts.OnToolsChanged != nil {
		c.opts.OnToolsChanged(tools)
	}
	return cs, proc, nil
}

func (c *Client) startError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.ctx.Err() == nil {
		return fmt.Errorf("no answer within %s (the start timeout): %v", c.opts.StartTimeout, redact.Text(err.Error()))
	}
	return errors.New(redact.Text(err.Error()))
}

// serve waits for the session to end, re-listing the tools when the
// server says they changed.
func (c *Client) serve(cs *mcp.ClientSession, proc *process) {
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	for {
		select {
		case <-c.ctx.Done():
			cs.Close()
			if proc != nil {
				proc.stop()
			}
			<-ended
			return
		case err := <-ended:
			cause := "the connection closed"
			if err != nil {
				cause = redact.Text(err.Error())
			}
			if proc != nil {
				proc.stop()
				cause = proc.explain(errors.New(cause)).Error()
			}
			c.down(errors.New("exited: "+cause), false)
			return
		case <-c.relist:
			ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
			tools, err := c.list(ctx, cs)
			cancel()
			if err != nil {
				c.log.Warn("re-reading the tool list failed; keeping the last one", "server", c.srv.String(), "err", redact.Text(err.Error()))
				continue
			}
			c.mu.Lock()
			prev := c.tools
			c.tools = tools
			c.mu.Unlock()
			if !sameTools(prev, tools) {
				c.log.Info("the MCP server's tools changed", "server", c.srv.String(), "tools", len(tools))
				if c.opts.OnToolsChanged != nil {
					c.opts.OnToolsChanged(tools)
				}
			} else {
				// The server said its list changed, and it reads the
				// same: toolenv's clients are told all the same, as a
				// proxy passes a notification on.
				c.fwd.listChanged("tools")
			}
		}
	}
}

// maxPages bounds the pages of one tools/list, against a server whose
// cursors never end.
const maxPages = 10000

// list reads every page of tools/list.
func (c *Client) list(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var (
		all    []*mcp.Tool
		cursor string
		seen   = map[string]bool{}
	)
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("more than %d pages", maxPages)
		}
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, res.Tools...)
		if len(all) > c.opts.MaxTools {
			return nil, fmt.Errorf("the server lists more than %d tools (raise the limit, or serve a part of them)", c.opts.MaxTools)
		}
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("the server's nextCursor %q repeats: its pages never end", short(res.NextCursor))
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	if all == nil {
		all = []*mcp.Tool{}
	}
	return all, nil
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// sameTools reports whether two tool lists say the same.
func sameTools(a, b []*mcp.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return string(ja) == string(jb)
}
