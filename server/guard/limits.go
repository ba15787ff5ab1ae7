package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	// HeaderTimeout bounds reading a request's headers (default 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers (default 60 s). Once the body is read the deadline is
	// lifted, so long answers and event streams are not cut.
	BodyTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default
	// 2 min).
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
			if lc, ok := c.(*limitConn); ok && lc.reserved {
				return context.WithValue(ctx, reservedKey{}, true)
			}
			return ctx
		},
	}
}

// Listener returns ln with l's connection caps: MaxConns in all, plus
// ReserveConns for ReservedPaths, and MaxConnsPerClient per remote
// address.
func (l Limits) Listener(ln net.Listener) net.Listener {
	l = l.withDefaults()
	if l.MaxConns <= 0 && l.MaxConnsPerClient <= 0 {
		return ln
	}
	ll := &limitListener{Listener: ln, log: l.Logger, drain: make(chan struct{}, 64), perClient: l.MaxConnsPerClient, clients: map[string]int{}}
	if l.MaxConns > 0 {
		ll.sem = make(chan struct{}, l.MaxConns)
		ll.reserve = make(chan struct{}, l.ReserveConns)
	}
	return ll
}

type reservedKey struct{}

// reserved answers every request on a connection of the reserve whose
// path is not one of paths with 503, and closes the connection.
func reserved(h http.Handler, paths []string) http.Handler {
	ok := map[string]bool{}
	for _, p := range paths {
		ok[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(reservedKey{}) != nil && !ok[r.URL.Path] {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Connection", "close")
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
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l.Listener(ln)) }()
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
// set when the handler starts and lifted when the body has been read to
// its end. A body that arrives slower fails its reads with a timeout
// (the handlers answer 400) and its connection is closed. d <= 0 returns
// h.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// limitListener caps the connections open at once. A connection over
// the cap gets a 503 and is closed; it never waits in the accept queue,
// so a client learns at once that the server is full.
type limitListener struct {
	net.Listener
	sem       chan struct{} // MaxConns; nil: no cap
	reserve   chan struct{} // ReserveConns
	perClient int           // MaxConnsPerClient; 0: no cap
	drain     chan struct{} // bounds the goroutines draining refused connections
	log       *slog.Logger
	refused   atomic.Int64

	mu      sync.Mutex
	clients map[string]int // open connections by remote address
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

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, answer := l.admit(c)
		if lc != nil {
			return lc, nil
		}
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
}

// admit takes c within the caps, or returns the answer that refuses it.
func (l *limitListener) admit(c net.Conn) (*limitConn, string) {
	addr := clientAddr(c.RemoteAddr())
	if l.perClient > 0 {
		l.mu.Lock()
		if l.clients[addr] >= l.perClient {
			l.mu.Unlock()
			l.log.Debug("connection refused: the client is at its connection cap", "remote", addr, "cap", l.perClient)
			return nil, clientBusyResponse
		}
		l.clients[addr]++
		l.mu.Unlock()
	}
	lc := &limitConn{Conn: c}
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
		return lc, ""
	}
	select {
	case l.sem <- struct{}{}:
		rel := lc.release
		lc.release = func() { <-l.sem; rel() }
		return lc, ""
	default:
	}
	select {
	case l.reserve <- struct{}{}:
		rel := lc.release
		lc.release = func() { <-l.reserve; rel() }
		lc.reserved = true
		return lc, ""
	default:
	}
	lc.release()
	l.log.Debug("connection refused: at the connection cap", "remote", addr, "cap", cap(l.sem), "reserve", cap(l.reserve))
	return nil, busyResponse
}

// refuse answers with answer and closes c. It first reads the request's
// head (for at most a second): an answer that arrives before the client
// has sent its request is one HTTP clients discard as unsolicited (Go's
// reports an error instead of the status). Then it reads what else the
// client sent (closing with unread input would reset the connection
// before the client reads the answer).
func refuse(c net.Conn, answer string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	var head []byte
	buf := make([]byte, 4096)
	for len(head) < 64<<10 && !bytes.Contains(head, []byte("\r\n\r\n")) {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			break
		}
	}
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
	reserved bool // one of the reserve: only the reserved paths are served
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
