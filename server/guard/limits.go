package guard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what slow or numerous clients can make a listener hold.
// The zero value means the defaults below; a negative value turns a
// limit off.
type Limits struct {
	// MaxConns caps the connections open at once (default 1024). A
	// connection over the cap is answered 503 and closed at once.
	MaxConns int
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
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		switch {
		case *d == 0:
			*d = v
		case *d < 0:
			*d = 0
		}
	}
	def(&l.HeaderTimeout, 10*time.Second)
	def(&l.BodyTimeout, 60*time.Second)
	def(&l.IdleTimeout, 2*time.Minute)
	def(&l.ShutdownTimeout, 10*time.Second)
	switch {
	case l.MaxConns == 0:
		l.MaxConns = 1024
	case l.MaxConns < 0:
		l.MaxConns = 0
	}
	if l.Logger == nil {
		l.Logger = slog.New(slog.DiscardHandler)
	}
	return l
}

// Server returns an http.Server for h with l's header and idle timeouts,
// and h wrapped so that request bodies are read within BodyTimeout.
func (l Limits) Server(h http.Handler) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           BodyDeadline(h, l.BodyTimeout),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(l.Logger.Handler(), slog.LevelDebug),
	}
}

// Listener returns ln with l's connection cap.
func (l Limits) Listener(ln net.Listener) net.Listener {
	l = l.withDefaults()
	if l.MaxConns <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, l.MaxConns), log: l.Logger, drain: make(chan struct{}, 64)}
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
	sem     chan struct{}
	drain   chan struct{} // bounds the goroutines draining refused connections
	log     *slog.Logger
	refused atomic.Int64
}

const busyBody = `{"status":"unavailable","error":"the server has as many connections open as it accepts","hint":"retry in a moment"}` + "\n"

var busyResponse = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
	strconv.Itoa(len(busyBody)) + "\r\n\r\n" + busyBody

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
		}
		l.refused.Add(1)
		l.log.Debug("connection refused: at the connection cap", "remote", c.RemoteAddr().String(), "cap", cap(l.sem))
		select {
		case l.drain <- struct{}{}:
			go func() {
				defer func() { <-l.drain }()
				refuse(c)
			}()
		default:
			c.Close()
		}
	}
}

// refuse answers 503 and closes c after reading what the client sent
// (closing with unread input would reset the connection before the
// client reads the answer).
func refuse(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := io.WriteString(c, busyResponse); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
