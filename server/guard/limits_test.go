package guard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// readingHandler reads the body as the real handlers do (a read error is
// a 400), then, for /slow, takes longer than the body deadline to answer.
var readingHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/slow" {
		time.Sleep(600 * time.Millisecond)
	}
	fmt.Fprintf(w, "read %d bytes", len(b))
})

// startLimited serves readingHandler on loopback within l.
func startLimited(t *testing.T, l Limits) string {
	t.Helper()
	return startWatched(t, l).Addr().String()
}

// startWatched is startLimited returning the watched listener.
func startWatched(t *testing.T, l Limits) *acceptWatch {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := watchAccepts(ln)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, w, readingHandler, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return w
}

// acceptWatch is a listener that counts the calls of its Accept, so that
// a test can wait until the server has dealt with the connections it
// opened instead of sleeping: the limited listener's accept loop (or the
// HTTP server, without caps) asks for the next connection only once it
// has admitted, refused or sent to triage the one before.
type acceptWatch struct {
	net.Listener
	mu      sync.Mutex
	calls   int
	changed chan struct{} // closed and replaced at each call
}

func watchAccepts(ln net.Listener) *acceptWatch {
	return &acceptWatch{Listener: ln, changed: make(chan struct{})}
}

func (w *acceptWatch) Accept() (net.Conn, error) {
	w.mu.Lock()
	w.calls++
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	return w.Listener.Accept()
}

// count is how many times Accept has been called.
func (w *acceptWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// waitCalls waits until Accept has been called at least n times (a
// minute at most: a hang guard, not a pace).
func (w *acceptWatch) waitCalls(t *testing.T, n int) {
	t.Helper()
	guard := time.After(time.Minute)
	for {
		w.mu.Lock()
		calls, changed := w.calls, w.changed
		w.mu.Unlock()
		if calls >= n {
			return
		}
		select {
		case <-changed:
		case <-guard:
			t.Fatalf("the server asked for %d connections in a minute, want %d", calls, n)
		}
	}
}

// closedWithin reports whether the server ends the connection (EOF,
// reset, or an answer followed by EOF) within wait, while the client
// keeps trickling bytes. It returns what the server wrote.
func trickle(t *testing.T, c net.Conn, head string, wait time.Duration) (string, bool) {
	t.Helper()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // one byte every 50 ms: a slowloris client
		defer wg.Done()
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(wait))
	got, err := io.ReadAll(c)
	close(stop)
	wg.Wait()
	var ne net.Error
	timedOut := err != nil && asNetErr(err, &ne) && ne.Timeout()
	return string(got), !timedOut
}

func asNetErr(err error, ne *net.Error) bool {
	e, ok := err.(net.Error)
	if ok {
		*ne = e
	}
	return ok
}

// TestSlowBodyIsCut: a body trickled after its head is cut by the body
// deadline, whether nothing of it came with the head or part of it did
// (read from net/http's buffer first, before a read reaches the
// connection and its deadline is set).
func TestSlowBodyIsCut(t *testing.T) {
	for _, c := range []struct{ name, withHead string }{
		{"nothing with its head", ""},
		{"part with its head", `{"q": "` + strings.Repeat("a", 500)},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := startLimited(t, Limits{BodyTimeout: 300 * time.Millisecond, HeaderTimeout: 300 * time.Millisecond})
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// 10,000 bytes announced; at one byte per 50 ms they would
			// take 8 minutes.
			got, closed := trickle(t, conn, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n"+c.withHead, 20*time.Second)
			if !closed {
				t.Fatalf("a body sent at 20 bytes/s held its connection (server wrote %q)", got)
			}
			if !strings.Contains(got, "400") || !strings.Contains(got, "timeout") {
				t.Fatalf("the client is not told why: %q", got)
			}
		})
	}
}

// TestSlowBodyHeldWithoutDeadline is the control: with the body deadline
// off, the same client holds its connection (what a server without Limits
// did).
func TestSlowBodyHeldWithoutDeadline(t *testing.T) {
	addr := startLimited(t, Limits{BodyTimeout: -1})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, closed := trickle(t, c, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n", time.Second); closed {
		t.Fatalf("the connection was closed without a deadline: %q", got)
	}
}

func TestSlowHeadersAreCut(t *testing.T) {
	addr := startLimited(t, Limits{HeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, closed := trickle(t, c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 20*time.Second)
	if !closed {
		t.Fatalf("headers sent at 20 bytes/s held their connection (server wrote %q)", got)
	}
}

func TestBodyDeadlineIsLiftedOnceRead(t *testing.T) {
	// The handler answers after twice the body deadline: the answer must
	// arrive (event streams and slow tools are not cut).
	addr := startLimited(t, Limits{BodyTimeout: 300 * time.Millisecond})
	resp, err := http.Post("http://"+addr+"/slow", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "read 7 bytes" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	// Keep-alive still works on that connection's successor.
	resp, err = http.Post("http://"+addr+"/x", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
}

// TestSlowlorisIsBounded opens many more slow connections than the cap:
// those over the cap are answered 503 at once, the goroutines held stay
// bounded by the cap, every slow connection is closed by the deadlines,
// and the server answers normally afterwards.
func TestSlowlorisIsBounded(t *testing.T) {
	const maxConns, clients = 20, 200
	// slowClients opens the clients, each sending a head and one byte of
	// a 100 kB body, and returns their connections.
	slowClients := func(t *testing.T, addr string) []net.Conn {
		conns := make([]net.Conn, 0, clients)
		t.Cleanup(func() {
			for _, c := range conns {
				c.Close()
			}
		})
		for range clients {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			io.WriteString(c, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\nx")
		}
		return conns
	}
	t.Run("goroutines", func(t *testing.T) {
		// With deadlines too far to cut anyone, the clients over the cap
		// are refused and the server settles at a bounded number of
		// goroutines: at most a few per accepted connection, plus the
		// drains of refused ones (bounded by 64) and the heads being read
		// of connections beyond the cap (the triage: 4×ReserveConns, the
		// default 16), whatever the number of clients. The count is read
		// once every client over the cap has its answer, and waited for
		// (a refusing goroutine ends a moment after its client is
		// answered); a server holding a goroutine per slow client never
		// gets under the bound.
		addr := startLimited(t, Limits{MaxConns: maxConns, BodyTimeout: time.Hour, HeaderTimeout: time.Hour})
		base := runtime.NumGoroutine()
		answered := make(chan struct{}, clients)
		for _, c := range slowClients(t, addr) {
			go func() {
				io.Copy(io.Discard, c) // until the server answers and closes, or the test ends
				answered <- struct{}{}
			}()
		}
		const reserve = 16
		bound := 3*maxConns + 64 + 4*reserve + 10
		safety := time.After(60 * time.Second) // a safety net, not a timing
		for range clients - maxConns {
			select {
			case <-answered:
			case <-safety:
				t.Fatalf("the clients over the cap of %d were not all refused", maxConns)
			}
		}
		// The test's own readers of the connections held.
		readers := maxConns
		for g := runtime.NumGoroutine() - base - readers; g > bound; g = runtime.NumGoroutine() - base - readers {
			select {
			case <-safety:
				t.Fatalf("%d slow clients hold %d goroutines (bound %d for a cap of %d)", clients, g, bound, maxConns)
			case <-answered:
				t.Fatalf("a connection within the cap of %d was closed with deadlines an hour away", maxConns)
			case <-time.After(10 * time.Millisecond): // polling interval
			}
		}
	})
	t.Run("cut", func(t *testing.T) {
		addr := startLimited(t, Limits{MaxConns: maxConns, BodyTimeout: 400 * time.Millisecond, HeaderTimeout: 400 * time.Millisecond})
		conns := slowClients(t, addr)
		busy, cut := 0, 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(20 * time.Second))
				got, err := io.ReadAll(bufio.NewReader(c))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case strings.HasPrefix(string(got), "HTTP/1.1 503"):
					busy++
				case err == nil || !isTimeout(err):
					cut++ // answered 400 and closed, or closed
				}
			}()
		}
		wg.Wait()
		// Over the cap a client gets the 503, or (when more than 64 are
		// being refused at once) just a closed connection.
		if busy+cut != clients || busy == 0 {
			t.Fatalf("of %d slow clients %d were refused at the cap and %d cut by the deadlines; the rest held on", clients, busy, cut)
		}
		resp, err := http.Post("http://"+addr+"/x", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("after the attack: %s", resp.Status)
		}
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestIdleConnectionIsClosed: a keep-alive connection that sends nothing
// after its answer is closed after IdleTimeout (serve and the review page
// both listen through Serve, with 2 min by default); with the idle and
// read timeouts off (the control) it stays open.
func TestIdleConnectionIsClosed(t *testing.T) {
	for _, c := range []struct {
		idle   time.Duration
		closed bool
	}{{300 * time.Millisecond, true}, {time.Nanosecond, true}, {-1, false}} { // 1 ns: the sweeper's tick is not 0
		addr := startLimited(t, Limits{IdleTimeout: c.idle})
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Close {
			t.Fatal("the server closed the connection after its answer")
		}
		wait := 10 * time.Second
		if !c.closed {
			wait = time.Second
		}
		conn.SetReadDeadline(time.Now().Add(wait))
		_, err = br.ReadByte()
		if closed := err != nil && !isTimeout(err); closed != c.closed {
			t.Errorf("idle timeout %s: closed %v (%v), want %v", c.idle, closed, err, c.closed)
		}
		conn.Close()
	}
}

// TestIdleSweepSparesBusyConnections: Serve's listener closes idle
// connections itself (net/http's per-request idle deadline is off), so a
// request whose handler runs for several idle timeouts must not be cut,
// nor the connection it came on once it is answered; that connection is
// closed only after it has then been idle for the timeout. The handler
// waits for time to pass (eight idle timeouts), which a loaded machine
// only lengthens.
func TestIdleSweepSparesBusyConnections(t *testing.T) {
	const idle = 100 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/long" {
			time.Sleep(8 * idle)
		}
		io.WriteString(w, "done "+r.URL.Path)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h, Limits{IdleTimeout: idle}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for _, path := range []string{"/long", "/next"} {
		io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: the connection was cut while its request was served: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "done "+path || resp.Close {
			t.Fatalf("%s: %q (close %v)", path, b, resp.Close)
		}
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("the idle connection was not closed within 10 s of an idle timeout of %s: %v", idle, err)
	}
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address ip (127.0.0.0/8 is all loopback), one per request.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// hold opens n connections from ip that send nothing (each waits for
// its headers until HeaderTimeout) and returns them once the server has
// dealt with each (admitted, refused or sent to triage: its accept loop
// asked w for the next connection after the last of them).
func hold(t *testing.T, w *acceptWatch, ip string, n int) []net.Conn {
	t.Helper()
	base := w.count()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	var cs []net.Conn
	for range n {
		c, err := d.Dial("tcp", w.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.Close()
		}
	})
	w.waitCalls(t, base+n)
	return cs
}

// refusedWith reads the answer the server writes on a connection it
// refuses at once.
func refusedWith(t *testing.T, addr, ip string) string {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	return string(b)
}

// TestOneClientCannotFillTheListener: a client (an address) holding
// every connection it may gets 429 for one more, naming the flag, while
// another client is served; when clients together fill MaxConns, the
// reserve still answers /healthz and /metrics (and 503 for anything
// else), and past the reserve a connection gets 503 at once.
func TestOneClientCannotFillTheListener(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok "+r.URL.Path) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxConns: 8, MaxConnsPerClient: 4, ReserveConns: 2, HeaderTimeout: time.Minute}
	aw := watchAccepts(ln)
	ll := lim.Listener(aw).(*limitListener)
	hs := lim.Server(h)
	go hs.Serve(ll)
	t.Cleanup(func() { hs.Close() })
	addr := ln.Addr().String()
	// open waits until n connections are open under MaxConns (a
	// connection the client is done with is released when the server
	// has closed it, a moment after the client read its answer).
	open := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); len(ll.sem) != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", len(ll.sem), n)
			}
		}
	}
	get := func(ip, path string) (int, string) {
		resp, err := clientFrom(ip).Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s from %s: %v", path, ip, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s from %s: %d without Retry-After", path, ip, resp.StatusCode)
		}
		return resp.StatusCode, string(b)
	}
	a := hold(t, aw, "127.0.0.2", 4)
	if got := refusedWith(t, addr, "127.0.0.2"); !strings.HasPrefix(got, "HTTP/1.1 429") || !strings.Contains(got, "--max-conns-per-client") || !strings.Contains(got, "Retry-After: 1") {
		t.Fatalf("a fifth connection of one client: %q", got)
	}
	if code, _ := get("127.0.0.1", "/virtual"); code != 200 {
		t.Fatalf("another client while the first holds its share: %d", code)
	}
	open(4)
	hold(t, aw, "127.0.0.3", 4) // MaxConns is full now
	open(8)
	for _, p := range []string{"/healthz", "/metrics"} {
		if code, body := get("127.0.0.1", p); code != 200 || body != "ok "+p {
			t.Fatalf("GET %s with the cap full: %d %s", p, code, body)
		}
	}
	if code, body := get("127.0.0.1", "/virtual"); code != 503 || !strings.Contains(body, "--max-conns") {
		t.Fatalf("GET /virtual with the cap full: %d %s", code, body)
	}
	hold(t, aw, "127.0.0.4", 2) // beyond it, sending nothing: they never take the reserve
	if code, body := get("127.0.0.1", "/healthz"); code != 200 || body != "ok /healthz" {
		t.Fatalf("GET /healthz with the cap full and connections beyond it that send nothing: %d %s", code, body)
	}
	if got := refusedWith(t, addr, "127.0.0.1"); !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "--max-conns") {
		t.Fatalf("past the reserve: %q", got)
	}
	for _, c := range a {
		c.Close()
	}
	open(4)
	if code, _ := get("127.0.0.1", "/virtual"); code != 200 {
		t.Fatalf("after the first client let go: %d", code)
	}
}

// TestLimitsSwitchedOffStayOff: a negative limit is no limit through
// Serve (whose Server and Listener apply the defaults again: a limit
// switched off used to come back as its default there).
func TestLimitsSwitchedOffStayOff(t *testing.T) {
	w := startWatched(t, Limits{MaxConnsPerClient: -1, HeaderTimeout: time.Minute})
	addr := w.Addr().String()
	hold(t, w, "127.0.0.2", 300) // over the default of 256
	resp, err := clientFrom("127.0.0.2").Get("http://" + addr + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a client's 301st connection with the cap off: %s", resp.Status)
	}
}

// TestSlowClientsCannotHoldTheReserve: with MaxConns full, clients that
// are slow on purpose — connections that send nothing, a head or a body
// a byte at a time, a /healthz kept alive and idle — keep trying from
// three addresses, each to its per-client cap, and a health check from a
// fourth still gets 200 every time. Each such connection of the reserve
// is closed by the server while the client still trickles (before, a
// POST /healthz with a slow body held its reserved connection for the
// whole body deadline, and the reserve was gone).
func TestSlowClientsCannotHoldTheReserve(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok "+r.URL.Path) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	aw := watchAccepts(ln)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, aw, h, Limits{MaxConns: 4, MaxConnsPerClient: 4, ReserveConns: 4, ReserveTimeout: 5 * time.Second,
			HeaderTimeout: time.Minute, BodyTimeout: time.Minute})
	}()
	t.Cleanup(func() { cancel(); <-done })
	addr := ln.Addr().String()
	hold(t, aw, "127.0.0.2", 4) // MaxConns is full

	heads := map[string]string{
		"slow body":    "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
		"idle":         "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"slow head":    "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
		"nothing":      "",
		"pipelined":    "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"not reserved": "GET /virtual HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	}
	// One at a time, each is ended by the server while the client
	// trickles bytes.
	for name, head := range heads {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.3")}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		got, closed := trickle(t, c, head, 40*time.Second)
		c.Close()
		if !closed {
			t.Fatalf("%s: a slow client held a connection beyond MaxConns (server wrote %q)", name, got)
		}
	}

	// All at once, over and over, from three addresses.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	started := make(chan struct{}, 12)
	for _, ip := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
				names := []string{"slow body", "idle", "slow head", "nothing", "pipelined", "not reserved"}
				for n := i; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					c, err := d.Dial("tcp", addr)
					if n == i {
						started <- struct{}{}
					}
					if err != nil {
						continue
					}
					go func() { <-stop; c.Close() }()
					io.WriteString(c, heads[names[n%len(names)]])
					buf := make([]byte, 512)
					for { // trickle until the server ends it
						c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
						if _, err := c.Read(buf); err != nil && !isTimeout(err) {
							break
						}
						if _, err := c.Write([]byte("x")); err != nil {
							break
						}
					}
					c.Close()
				}
			}()
		}
	}
	for range 12 {
		<-started
	}
	for i := range 30 {
		resp, err := clientFrom("127.0.0.1").Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("health check %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "ok /healthz" {
			t.Fatalf("health check %d while slow clients try to hold the reserve: %d %s", i, resp.StatusCode, b)
		}
	}
	close(stop)
	wg.Wait()
}
