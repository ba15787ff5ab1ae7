package mcpsource

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/logtest"
)

// safetyNet bounds the waits whose length is not what a test measures
// (starting a server, an answer's round trip): far beyond what a loaded
// machine needs, so that only a hang reaches it.
const safetyNet = 5 * time.Minute

// start starts a client of srv. Without a StartTimeout of the test's own
// the start has safetyNet: the test binary, which is the server, can take
// long to load on a busy machine, and a start that ends by the server's
// answer or its exit must not race a timer.
func start(t *testing.T, srv *Server, opts Options) (*Client, *logtest.Buffer) {
	t.Helper()
	if opts.StartTimeout == 0 {
		opts.StartTimeout = safetyNet
	}
	logs := &logtest.Buffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.MinBackoff == 0 {
		opts.MinBackoff = 20 * time.Millisecond
	}
	c, err := Start(context.Background(), srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, logs
}

// eventually calls f until it reports true, for at most a minute: the
// client restarts servers in the background.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func echoWorks(c *Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.Call(ctx, "echo", map[string]any{"text": "hi"})
	return err == nil && len(res.Content) == 1 && res.Content[0].(*mcp.TextContent).Text == "echo: hi"
}

// TestClientFaults drives a Go SDK server through every fault a server
// can have mid-run: each is a clear error or a marked answer, bounded in
// time and memory, and the client goes on (restarting the server when it
// died).
func TestClientFaults(t *testing.T) {
	changed := make(chan []*mcp.Tool, 4)
	c, logs := start(t, testServer(t, "faults", "basic"), Options{
		MaxMessageBytes: 1 << 20,
		OnToolsChanged:  func(tools []*mcp.Tool) { changed <- tools },
	})
	tools, err := c.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 7 || !echoWorks(c) {
		t.Fatalf("tools %d, echo %v", len(tools), echoWorks(c))
	}
	if !strings.Contains(logs.String(), "fault server ready") || !strings.Contains(logs.String(), "mcp_server=faults") {
		t.Fatalf("the server's stderr is not in the log, labelled:\n%s", logs)
	}
	up := NewUpstream(c, 0)
	col, _, err := NewCollection("faults", tools, CollectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, timeout time.Duration) *toolenv.Result {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return up.Invoke(ctx, &toolenv.Call{Tool: col.Tool(name), Collection: col, Args: map[string]any{}})
	}

	t.Run("tool error is an answer", func(t *testing.T) {
		r := call("fail", 10*time.Second)
		if !r.OK() || r.Meta[MetaIsError] != "true" || r.Source != toolenv.SourceUpstream || !strings.Contains(string(r.Body), `"isError":true`) {
			t.Fatalf("%+v %s", r, r.Body)
		}
	})
	t.Run("hang", func(t *testing.T) {
		r := call("hang", 300*time.Millisecond)
		if r.Status != toolenv.StatusTimeout || r.Meta["cacheable"] != "false" {
			t.Fatalf("%+v", r)
		}
		if !echoWorks(c) {
			t.Fatal("the connection did not survive a hung call")
		}
	})
	t.Run("50 MB answer", func(t *testing.T) {
		r := call("huge", safetyNet) // the answer's size ends the call, not a timer
		if r.Status != toolenv.StatusTooLarge || !strings.Contains(r.Error, "larger than the limit") {
			t.Fatalf("%s %s", r.Status, r.Error)
		}
		eventually(t, "echo after the oversized answer", func() bool { return echoWorks(c) })
	})
	t.Run("malformed JSON-RPC", func(t *testing.T) {
		r := call("garbage", 10*time.Second)
		if !r.OK() && r.Status != toolenv.StatusUnavailable {
			t.Fatalf("%+v", r)
		}
		eventually(t, "echo after garbage", func() bool { return echoWorks(c) })
	})
	t.Run("crash mid-call", func(t *testing.T) {
		before := c.Restarts()
		r := call("crash", 10*time.Second)
		if r.Status != toolenv.StatusUnavailable || !strings.Contains(r.Error, ErrDown.Error()) {
			t.Fatalf("%s %s", r.Status, r.Error)
		}
		eventually(t, "restart after the crash", func() bool { return c.Restarts() > before && echoWorks(c) })
		if !strings.Contains(logs.String(), "crashing on purpose") || !strings.Contains(logs.String(), "exit status 3") {
			t.Fatalf("the crash is not explained in the log:\n%s", logs)
		}
	})
	t.Run("tool list changes", func(t *testing.T) {
		if r := call("grow", 10*time.Second); !r.OK() {
			t.Fatalf("%+v", r)
		}
		select {
		case tools := <-changed:
			found := false
			for _, tl := range tools {
				found = found || tl.Name == "grown"
			}
			if !found || len(tools) != 8 {
				t.Fatalf("new list: %d tools, grown %v", len(tools), found)
			}
		case <-time.After(time.Minute):
			t.Fatal("no new tool list after notifications/tools/list_changed")
		}
	})
	t.Run("close stops the process group", func(t *testing.T) {
		_, proc, err := c.session()
		if err != nil {
			t.Fatal(err)
		}
		pid := proc.cmd.Process.Pid
		c.Close()
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("the server (pid %d) outlived Close: %v", pid, err)
		}
		if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, ErrDown) {
			t.Fatalf("call after Close: %v", err)
		}
	})
}

// TestClientStartFailures: a server that does not start says why (its
// stderr, its exit status, the timeout), within the start timeout.
func TestClientStartFailures(t *testing.T) {
	// Only the server that never answers meets the start timeout; the
	// others end by an event (the exit, the refused start), which must
	// not race it on a loaded machine.
	for _, tc := range []struct {
		name    string
		srv     func(t *testing.T) *Server
		timeout time.Duration
		want    []string
	}{
		{"exits", func(t *testing.T) *Server { return testServer(t, "x", "exit") }, safetyNet, []string{"exit status 2", "/etc/nothing is missing"}},
		{"never initializes", func(t *testing.T) *Server { return testServer(t, "x", "noinit") }, 2 * time.Second, []string{"no answer within 2s"}},
		{"no such command", func(*testing.T) *Server { return &Server{Name: "x", Command: "/nonexistent/mcp-server"} }, safetyNet, []string{"does not start", "/nonexistent/mcp-server"}},
		{"nothing listens", func(*testing.T) *Server { return &Server{Name: "x", URL: "http://127.0.0.1:1/mcp"} }, safetyNet, []string{"start:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := start(t, tc.srv(t), Options{StartTimeout: tc.timeout, MinBackoff: time.Hour})
			_, err := c.Ready(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, ErrDown) {
				t.Errorf("call: %v", err)
			}
		})
	}
}

// TestClientManyTools: a server listing 10,000 tools is read over every
// page; above MaxTools the list is refused, saying so.
func TestClientManyTools(t *testing.T) {
	c, _ := start(t, testServer(t, "many", "many"), Options{})
	tools, err := c.Ready(context.Background())
	if err != nil || len(tools) != 10000 {
		t.Fatalf("%d tools, %v", len(tools), err)
	}
	col, skipped, err := NewCollection("many", tools, CollectionOptions{})
	if err != nil || len(col.Tools) != 10000 || len(skipped) != 0 {
		t.Fatalf("collection: %v, skipped %v", err, skipped)
	}
	c2, _ := start(t, testServer(t, "many", "many"), Options{MaxTools: 5000, MinBackoff: time.Hour})
	if _, err := c2.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "more than 5000 tools") {
		t.Fatalf("MaxTools: %v", err)
	}
}

// TestBadSchemasAreLeftOut: tools whose schemas do not compile are left
// out, each with its reason; the others are served.
func TestBadSchemasAreLeftOut(t *testing.T) {
	c, _ := start(t, testServer(t, "bad", "badschema"), Options{})
	tools, err := c.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	col, skipped, err := NewCollection("bad", tools, CollectionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(col.Tools) != 1 || col.Tools[0].Name != "good" {
		t.Fatalf("served: %v", col.Tools)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Tool] = s.Reason
	}
	for _, name := range []string{"type_is_number", "required_string", "dangling_ref", "remote_ref", "minimum_is_text", "properties_array"} {
		if !strings.Contains(reasons[name], "does not compile") {
			t.Errorf("%s: %q", name, reasons[name])
		}
	}
	if !strings.Contains(reasons["remote_ref"], "does not fetch") {
		t.Errorf("remote_ref: %q", reasons["remote_ref"])
	}
	if col.Meta[MetaSkipped] == "" {
		t.Error("the collection does not list the tools left out")
	}
}
