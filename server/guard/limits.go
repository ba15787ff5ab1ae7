package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what slow or numerous clients can make a listener hold.
// The zero value means the defaults below; a negative value turns a
// limit off.
type Limits struct {
	// MaxConns caps the connections open at once (default 1024). A
	// connection over the cap is answered 503 and closed at once, or
	// takes one of ReserveConns.
	MaxConns int
	// MaxConnsPerClient caps the connections one remote address holds at
	// once (default 256; a quarter of the default MaxConns), so that one
	// client cannot fill MaxConns. A connection over it is answered 429
	// and closed at once. Behind a proxy every client has the proxy's
	// address: turn it off there (negative).
	MaxConnsPerClient int
	// ReserveConns are connections beyond MaxConns kept for the paths
	// of ReservedPaths (default 16): when the cap is full a load
	// balancer's health check and a metrics scrape still get in; any
	// other request on such a connection is answered 503.
	ReserveConns int
	// ReservedPaths are the paths the reserve serves (default /healthz
	// and /metrics).
	ReservedPaths []string
	// ReserveTimeout bounds a connection beyond MaxConns (default 2 s):
	// it must send its request's head within it, and takes one of
	// ReserveConns only once that head asks GET or HEAD of a reserved
	// path; it is then answered, closed without its body being read, and
	// lives at most ReserveTimeout more. So a slow client (headers or a
	// body a byte at a time, an idle keep-alive) never holds the reserve:
	// a connection that sends nothing in time is answered 503 and closed;
	// the heads of at most a quarter of ReserveConns (at least one)
	// connections of one address are read at once (with
	// MaxConnsPerClient), and of at most 4×ReserveConns in all (more are
	// answered 503, or closed, at once).
	ReserveTimeout time.Duration
	// HeaderTimeout bounds reading a request's headers (default 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers, or on a connection of Listener from the first read of the
	// body that waits on the connection (default 60 s). Once the body is
	// read the deadline is lifted, so long answers and event streams are
	// not cut.
	BodyTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default
	// 2 min). Under Serve with connection caps, the listener closes them
	// itself, within a quarter of IdleTimeout more, so that no request
	// reads the clock or sets a timer for it.
	IdleTimeout time.Duration
	// ShutdownTimeout is how long Serve waits for requests in flight
	// when its context ends (default 10 s).
	ShutdownTimeout time.Duration
	// Logger logs refused connections at debug level; nil discards.
	Logger *slog.Logger

	// defaulted marks Limits whose defaults are applied: applying them
	// again would turn a limit switched off (negative, then 0) back on.
	defaulted bool
}

func (l Limits) withDefaults() Limits {
	if l.defaulted {
		return l
	}
	l.defaulted = true
	limitOrDefault(&l.HeaderTimeout, 10*time.Second)
	limitOrDefault(&l.BodyTimeout, 60*time.Second)
	limitOrDefault(&l.IdleTimeout, 2*time.Minute)
	limitOrDefault(&l.ShutdownTimeout, 10*time.Second)
	limitOrDefault(&l.MaxConns, 1024)
	limitOrDefault(&l.MaxConnsPerClient, 256)
	limitOrDefault(&l.ReserveConns, 16)
	limitOrDefault(&l.ReserveTimeout, 2*time.Second)
	if l.ReservedPaths == nil {
		l.ReservedPaths = []string{"/healthz", "/metrics"}
	}
	if l.Logger == nil {
		l.Logger = slog.New(slog.DiscardHandler)
	}
	return l
}

// limitOrDefault sets a limit of 0 to v, and a negative one to 0 (none).
func limitOrDefault[T int | time.Duration](d *T, v T) {
	switch {
	case *d == 0:
		*d = v
	case *d < 0:
		*d = 0
	}
}

// Server returns an http.Server for h with l's header and idle timeouts,
// h wrapped so that request bodies are read within BodyTimeout, and the
// connections of the reserve (see Listener) limited to ReservedPaths.
func (l Limits) Server(h http.Handler) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           reserved(BodyDeadline(h, l.BodyTimeout), l.ReservedPaths),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(l.Logger.Handler(), slog.LevelDebug),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			// Every connection's requests find it two contexts up, not
			// at the end of the chain: whether it is of the reserve,
			// and where BodyDeadline defers its deadline to.
			lc, _ := c.(*limitConn)
			return context.WithValue(ctx, connKey{}, lc)
		},
	}
}

// Listener returns ln with l's connection caps: MaxConns in all, plus
// ReserveConns for ReservedPaths, and MaxConnsPerClient per remote
// address.
func (l Limits) Listener(ln net.Listener) net.Listener {
	return l.listener(ln, false)
}

// listener is Listener, whose connections it closes itself once idle
// for IdleTimeout when sweep is set (see sweepIdle): the http.Server
// must then have its ConnState hook.
func (l Limits) listener(ln net.Listener, sweep bool) net.Listener {
	l = l.withDefaults()
	if l.MaxConns <= 0 && l.MaxConnsPerClient <= 0 {
		return ln
	}
	ll := &limitListener{Listener: ln, log: l.Logger, drain: make(chan struct{}, 64), perClient: l.MaxConnsPerClient, clients: map[string]int{},
		accepted: make(chan acceptResult), ready: make(chan *limitConn), done: make(chan struct{}),
		reserveTimeout: l.ReserveTimeout, reservedPaths: map[string]bool{}, overflow: map[string]int{}}
	if l.MaxConns > 0 {
		ll.sem = make(chan struct{}, l.MaxConns)
		ll.reserve = make(chan struct{}, l.ReserveConns)
		ll.triage = make(chan struct{}, 4*l.ReserveConns)
		ll.overflowPerClient = max(1, l.ReserveConns/4)
	}
	for _, p := range l.ReservedPaths {
		ll.reservedPaths[p] = true
	}
	if sweep && l.IdleTimeout > 0 {
		ll.idle, ll.live = l.IdleTimeout, map[*limitConn]struct{}{}
	}
	return ll
}

// connKey is the context key of a request's *limitConn (nil for a
// connection of another listener).
type connKey struct{}

// limitConnOf returns the *limitConn a request came on, or nil.
func limitConnOf(r *http.Request) *limitConn {
	lc, _ := r.Context().Value(connKey{}).(*limitConn)
	return lc
}

// reserved serves one request on a connection of the reserve and closes
// it: a request for one of paths is served by h, any other gets 503. The
// body is never waited for: the connection's read deadline is set to now
// once the answer is written, so that the server does not drain a body a
// slow client trickles.
func reserved(h http.Handler, paths []string) http.Handler {
	ok := map[string]bool{}
	for _, p := range paths {
		ok[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc := limitConnOf(r); lc == nil || !lc.reserved {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		defer http.NewResponseController(w).SetReadDeadline(time.Now())
		if !ok[r.URL.Path] {
			w.Header().Set("Retry-After", "1")
			WriteError(w, http.StatusServiceUnavailable, "unavailable", "the server has as many connections open as it accepts (--max-conns); this connection came from the reserve kept for "+strings.Join(paths, " and "),
				"retry in a moment; the server's operator can raise --max-conns")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve serves h on ln within l until ctx ends, then shuts down,
// waiting up to ShutdownTimeout for requests in flight. It returns nil
// after a shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, l Limits) error {
	l = l.withDefaults()
	hs := l.Server(h)
	lln := l.listener(ln, true)
	if ll, ok := lln.(*limitListener); ok && ll.idle > 0 {
		// The listener closes idle connections: net/http would read the
		// clock and set a timer each time a connection goes idle.
		hs.IdleTimeout, hs.ConnState = 0, ll.connState
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// BodyDeadline returns h with a read deadline of d on every request body,
// from when the handler starts, lifted when the body has been read to its
// end. On a connection of Limits' listener the deadline is set on the
// connection only once reading the body reaches it, and runs from then
// (for a handler that reads its body at once, from the end of the head):
// a body that arrived with its head sets no timer and reads no clock. A
// body that arrives slower fails its reads with a timeout (the handlers
// answer 400) and its connection is closed. d <= 0 returns h.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			if lc := limitConnOf(r); lc != nil {
				// On a connection of Limits' listener the deadline is
				// set only if reading the body reaches the connection:
				// a body that came with its head is read from
				// net/http's buffer, and needs none.
				lc.deferReadDeadline(d)
				r.Body = &deadlineBody{ReadCloser: r.Body, lc: lc}
				h.ServeHTTP(w, r)
				return
			}
			// net/http's own writer sets deadlines itself; asking it
			// directly spares a ResponseController per request.
			rc, ok := w.(readDeadliner)
			if !ok {
				rc = http.NewResponseController(w)
			}
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// readDeadliner is what BodyDeadline needs of a ResponseWriter.
type readDeadliner interface {
	SetReadDeadline(time.Time) error
}

// deadlineBody lifts its body's deadline once the body is read: through
// lc (see limitConn.deferReadDeadline) or else rc.
type deadlineBody struct {
	io.ReadCloser
	rc     readDeadliner
	lc     *limitConn
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		if b.lc != nil {
			b.lc.liftReadDeadline()
		} else {
			b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// limitListener caps the connections open at once. A connection over
// the cap gets a 503 and is closed; it never waits in the accept queue,
// so a client learns at once that the server is full.
//
// A connection beyond MaxConns is triaged: its request's head is read
// (within ReserveTimeout) before it may take one of the reserve, so that
// only a complete request for a reserved path holds a reserved
// connection, and only for as long as it takes to answer it.
type limitListener struct {
	net.Listener
	sem       chan struct{} // MaxConns; nil: no cap
	reserve   chan struct{} // ReserveConns
	triage    chan struct{} // connections beyond MaxConns whose head is being read
	perClient int           // MaxConnsPerClient; 0: no cap
	drain     chan struct{} // bounds the goroutines draining refused connections
	log       *slog.Logger
	refused   atomic.Int64

	reserveTimeout    time.Duration
	reservedPaths     map[string]bool
	overflowPerClient int // connections beyond MaxConns one address may have (with perClient)

	startOnce sync.Once
	accepted  chan acceptResult // from the accept loop
	ready     chan *limitConn   // triaged connections of the reserve
	done      chan struct{}     // closed by Close
	closeOnce sync.Once
	acceptErr error // the accept loop's last error, once accepted is closed

	mu       sync.Mutex
	clients  map[string]int // open connections by remote address
	overflow map[string]int // connections beyond MaxConns by remote address

	// idle is IdleTimeout, when this listener closes idle connections
	// itself (see sweepIdle): live holds the connections handed out and
	// not closed, epoch counts the sweeper's ticks.
	idle   time.Duration
	liveMu sync.Mutex
	live   map[*limitConn]struct{}
	epoch  atomic.Uint64
}

// idleTicks is how many ticks of the sweeper IdleTimeout is: a connection
// idle for IdleTimeout is closed within a quarter of it more (the tick is
// at least a millisecond).
const idleTicks = 4

// The states a limitConn is in, for the sweeper (see connState).
const (
	connBusy  uint32 = iota // new, or serving a request
	connIdle                // waiting for its next request
	connSwept               // closed by the sweeper
)

// handOut records c as live for the sweeper and returns it.
func (l *limitListener) handOut(c *limitConn) *limitConn {
	if l.idle > 0 {
		l.liveMu.Lock()
		l.live[c] = struct{}{}
		c.owner = l
		l.liveMu.Unlock()
	}
	return c
}

// connState is the http.Server's ConnState hook when the listener closes
// idle connections itself: it marks a connection idle, with the
// sweeper's tick, or busy. It reads no clock, so that a keep-alive
// request costs no timer: the deadline net/http would set on every idle
// connection (its IdleTimeout) is the sweeper's work.
func (l *limitListener) connState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	switch st {
	case http.StateIdle:
		lc.idleSince.Store(l.epoch.Load())
		lc.state.Store(connIdle)
	case http.StateActive:
		lc.state.Store(connBusy)
	}
}

// sweepIdle closes, every quarter of the idle timeout, the connections
// that have been idle for at least the idle timeout, until the listener
// is closed. A request that arrives on a connection as it is swept
// fails as one arriving at net/http's own idle deadline does.
func (l *limitListener) sweepIdle() {
	tick := time.NewTicker(max(l.idle/idleTicks, time.Millisecond)) // a tick of at least 1 ms: NewTicker refuses 0
	defer tick.Stop()
	var stale []*limitConn
	for {
		select {
		case <-l.done:
			return
		case <-tick.C:
		}
		e := l.epoch.Add(1)
		stale = stale[:0]
		l.liveMu.Lock()
		for c := range l.live {
			if c.state.Load() == connIdle && e-c.idleSince.Load() > idleTicks && c.state.CompareAndSwap(connIdle, connSwept) {
				stale = append(stale, c)
			}
		}
		l.liveMu.Unlock()
		for _, c := range stale {
			c.Close()
		}
	}
}

// forget removes c from the live connections.
func (l *limitListener) forget(c *limitConn) {
	l.liveMu.Lock()
	delete(l.live, c)
	l.liveMu.Unlock()
}

// acceptResult is what the accept loop hands to Accept.
type acceptResult struct {
	c   *limitConn
	err error
}

// cannedResponse is a complete HTTP answer written on a connection that
// is refused before its request is read.
func cannedResponse(status, body string) string {
	return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

var (
	busyResponse = cannedResponse("503 Service Unavailable",
		`{"status":"unavailable","error":"the server has as many connections open as it accepts (--max-conns)","hint":"retry in a moment; the server's operator can raise --max-conns"}`+"\n")
	clientBusyResponse = cannedResponse("429 Too Many Requests",
		`{"status":"rate_limited","error":"this client (its address) has as many connections open as one client may (--max-conns-per-client)","hint":"close connections you do not use, or reuse them (keep-alive), and retry in a moment; behind a proxy, where every client has the proxy's address, start the server with --max-conns-per-client -1"}`+"\n")
)

// clientAddr is the host part of a remote address.
func clientAddr(a net.Addr) string {
	s := a.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}

// Accept returns the next connection within the caps: one accepted
// under MaxConns, or one of the reserve once its head has been read.
func (l *limitListener) Accept() (net.Conn, error) {
	l.startOnce.Do(func() {
		go l.acceptLoop()
		if l.idle > 0 {
			go l.sweepIdle()
		}
	})
	select {
	case c := <-l.ready:
		return l.handOut(c), nil
	case r, ok := <-l.accepted:
		if !ok {
			return nil, l.acceptErr
		}
		if r.err != nil {
			return nil, r.err
		}
		return l.handOut(r.c), nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close closes the listener and ends its accept loop.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// acceptLoop accepts connections and hands those within the caps to
// Accept; it refuses the others and sends those beyond MaxConns to be
// triaged.
func (l *limitListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.acceptErr = err
				close(l.accepted)
				return
			}
			// Another error (too many open files) goes to the server,
			// which waits and asks again, or stops and closes l.
			select {
			case l.accepted <- acceptResult{err: err}:
				continue
			case <-l.done:
				return
			}
		}
		lc, answer, over := l.admit(c)
		switch {
		case lc != nil && over:
			l.triageConn(lc)
		case lc != nil:
			select {
			case l.accepted <- acceptResult{c: lc}:
			case <-l.done:
				lc.Close()
				return
			}
		default:
			l.refuse(c, answer)
		}
	}
}

// refuse answers c with answer and closes it, in a goroutine of the
// drain's while one is free, else at once without an answer.
func (l *limitListener) refuse(c net.Conn, answer string) {
	l.refused.Add(1)
	select {
	case l.drain <- struct{}{}:
		go func() {
			defer func() { <-l.drain }()
			refuse(c, answer)
		}()
	default:
		c.Close()
	}
}

// triageConn reads the head of a connection beyond MaxConns, in a
// goroutine of the triage's, and hands it to Accept as one of the reserve
// when it asks for a reserved path and a reserve slot is free; otherwise
// it answers 503 and closes it. An address already holding its share of
// connections beyond MaxConns, or a full triage, gets its connection
// closed at once.
func (l *limitListener) triageConn(lc *limitConn) {
	addr := clientAddr(lc.RemoteAddr())
	if l.perClient > 0 {
		l.mu.Lock()
		if l.overflow[addr] >= l.overflowPerClient {
			l.mu.Unlock()
			l.log.Debug("connection refused: the client has its share of connections beyond the cap being read", "remote", addr, "share", l.overflowPerClient)
			l.refuse(lc, busyResponse)
			return
		}
		l.overflow[addr]++
		l.mu.Unlock()
	}
	select {
	case l.triage <- struct{}{}:
	default:
		l.untriaged(addr)
		l.refused.Add(1)
		lc.Close()
		return
	}
	go func() {
		deadline := time.Now().Add(l.reserveTimeout)
		head := readHead(lc.Conn, deadline)
		<-l.triage
		l.untriaged(addr)
		if l.reservedPaths[requestPath(head)] {
			// Reserved connections are answered at once and closed:
			// wait for one to be free rather than refuse.
			timer := time.NewTimer(time.Until(deadline))
			defer timer.Stop()
			select {
			case l.reserve <- struct{}{}:
				rel := lc.release
				lc.release = func() { <-l.reserve; rel() }
				lc.reserved, lc.prefix = true, head
				lc.expiry = time.Now().Add(l.reserveTimeout)
				lc.Conn.SetDeadline(lc.expiry)
				select {
				case l.ready <- lc:
				case <-l.done:
					lc.Close()
				}
				return
			case <-timer.C:
			case <-l.done:
			}
		}
		l.refused.Add(1)
		l.log.Debug("connection refused: at the connection cap", "remote", addr, "cap", cap(l.sem), "reserve", cap(l.reserve))
		answerAndClose(lc, busyResponse)
	}()
}

// untriaged counts a connection of addr out of the triage.
func (l *limitListener) untriaged(addr string) {
	if l.perClient <= 0 {
		return
	}
	l.mu.Lock()
	if l.overflow[addr]--; l.overflow[addr] <= 0 {
		delete(l.overflow, addr)
	}
	l.mu.Unlock()
}

// requestPath is the path of the request line that head begins with,
// when head holds a whole request head whose method is GET or HEAD; ""
// otherwise.
func requestPath(head []byte) string {
	if !bytes.Contains(head, []byte("\r\n\r\n")) {
		return ""
	}
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	method, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || (string(method) != http.MethodGet && string(method) != http.MethodHead) {
		return ""
	}
	target, _, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return ""
	}
	u, err := url.ParseRequestURI(string(target))
	if err != nil {
		return ""
	}
	return u.Path
}

// admit takes c within the caps, or returns the answer that refuses it.
// over reports a connection beyond MaxConns, to be triaged.
func (l *limitListener) admit(c net.Conn) (lc *limitConn, answer string, over bool) {
	addr := clientAddr(c.RemoteAddr())
	if l.perClient > 0 {
		l.mu.Lock()
		if l.clients[addr] >= l.perClient {
			l.mu.Unlock()
			l.log.Debug("connection refused: the client is at its connection cap", "remote", addr, "cap", l.perClient)
			return nil, clientBusyResponse, false
		}
		l.clients[addr]++
		l.mu.Unlock()
	}
	lc = &limitConn{Conn: c}
	lc.release = func() {
		if l.perClient > 0 {
			l.mu.Lock()
			if l.clients[addr]--; l.clients[addr] <= 0 {
				delete(l.clients, addr)
			}
			l.mu.Unlock()
		}
	}
	if l.sem == nil {
		return lc, "", false
	}
	select {
	case l.sem <- struct{}{}:
		rel := lc.release
		lc.release = func() { <-l.sem; rel() }
		return lc, "", false
	default:
	}
	if cap(l.reserve) > 0 {
		return lc, "", true
	}
	lc.release()
	l.log.Debug("connection refused: at the connection cap", "remote", addr, "cap", cap(l.sem))
	return nil, busyResponse, false
}

// refuse answers with answer and closes c. It first reads the request's
// head (for at most a second): an answer that arrives before the client
// has sent its request is one HTTP clients discard as unsolicited (Go's
// reports an error instead of the status). Then it reads what else the
// client sent (closing with unread input would reset the connection
// before the client reads the answer).
func refuse(c net.Conn, answer string) {
	readHead(c, time.Now().Add(time.Second))
	answerAndClose(c, answer)
}

// readHead reads from c until the end of a request's head (a blank
// line), 64 KiB, an error or the deadline, and returns what it read.
func readHead(c net.Conn, deadline time.Time) []byte {
	c.SetReadDeadline(deadline)
	var head []byte
	buf := make([]byte, 4096)
	for len(head) < 64<<10 && !bytes.Contains(head, []byte("\r\n\r\n")) {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			break
		}
	}
	return head
}

// answerAndClose writes answer on c and closes it, reading what else
// the client sent for a moment (closing with unread input would reset
// the connection before the client reads the answer).
func answerAndClose(c net.Conn, answer string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := io.WriteString(c, answer); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

type limitConn struct {
	net.Conn
	once     sync.Once
	release  func()
	reserved bool      // one of the reserve: only the reserved paths are served
	prefix   []byte    // the head read while triaging, read again first
	expiry   time.Time // a reserved connection's deadlines never go past it

	// deferred is the read deadline deferReadDeadline asked for, as a
	// time from the next Read that reaches the connection, which sets
	// it (pending) until liftReadDeadline lifts it (applied); any
	// deadline set meanwhile replaces it. dmu orders these with each
	// other; dstate (deadlineNone, deadlinePending or deadlineApplied)
	// lets Read and the Set*Deadline methods skip dmu when nothing is
	// deferred.
	dmu      sync.Mutex
	deferred time.Duration
	dstate   atomic.Uint32

	// owner is the listener that sweeps the connection when idle (nil:
	// none); state (connBusy, connIdle, connSwept) and idleSince (the
	// sweeper's tick when it went idle) are what the sweeper reads.
	owner     *limitListener
	state     atomic.Uint32
	idleSince atomic.Uint64
}

// The states of a limitConn's deferred read deadline.
const (
	deadlineNone uint32 = iota
	deadlinePending
	deadlineApplied
)

func (c *limitConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	if c.dstate.Load() == deadlinePending {
		c.applyDeferred()
	}
	return c.Conn.Read(p)
}

// deferReadDeadline asks for a read deadline d after the next read that
// reaches the connection, until liftReadDeadline: a read net/http
// answers from its buffer sets no timer and reads no clock.
func (c *limitConn) deferReadDeadline(d time.Duration) {
	c.dmu.Lock()
	c.deferred = d
	c.dstate.Store(deadlinePending)
	c.dmu.Unlock()
}

// applyDeferred sets the deferred deadline on the connection, once.
func (c *limitConn) applyDeferred() {
	c.dmu.Lock()
	if c.dstate.Load() == deadlinePending {
		if c.Conn.SetReadDeadline(c.clamp(time.Now().Add(c.deferred))) == nil {
			c.dstate.Store(deadlineApplied)
		} else {
			c.dstate.Store(deadlineNone)
		}
	}
	c.dmu.Unlock()
}

// liftReadDeadline ends what deferReadDeadline asked for: a deadline
// still pending is dropped, one set on the connection is lifted.
func (c *limitConn) liftReadDeadline() {
	if c.dstate.Load() == deadlineNone {
		return // replaced by a deadline set since, or never set
	}
	c.dmu.Lock()
	if c.dstate.Load() == deadlineApplied {
		c.Conn.SetReadDeadline(c.clamp(time.Time{}))
	}
	c.dstate.Store(deadlineNone)
	c.dmu.Unlock()
}

// direct reports whether a deadline can be set on the connection as it
// is asked, without dmu: nothing is deferred and the connection is not
// of the reserve. (A deadline set from another goroutine at the moment
// a handler defers one is ordered either way, as two deadlines set at
// once from two goroutines are.)
func (c *limitConn) direct() bool {
	return c.dstate.Load() == deadlineNone && c.expiry.IsZero()
}

// clamp keeps a reserved connection's deadline within its life.
func (c *limitConn) clamp(t time.Time) time.Time {
	if !c.expiry.IsZero() && (t.IsZero() || t.After(c.expiry)) {
		return c.expiry
	}
	return t
}

// SetDeadline sets both deadlines, replacing a deferred read deadline.
func (c *limitConn) SetDeadline(t time.Time) error {
	if c.direct() {
		return c.Conn.SetDeadline(t)
	}
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.dstate.Store(deadlineNone)
	return c.Conn.SetDeadline(c.clamp(t))
}

// SetReadDeadline sets the read deadline, replacing a deferred one.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	if c.direct() {
		return c.Conn.SetReadDeadline(t)
	}
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.dstate.Store(deadlineNone)
	return c.Conn.SetReadDeadline(c.clamp(t))
}

func (c *limitConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.release()
		if c.owner != nil {
			c.owner.forget(c)
		}
	})
	return err
}
