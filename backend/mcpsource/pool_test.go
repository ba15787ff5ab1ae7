package mcpsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/internal/logtest"
)

// counterState is the state of the counter server: a number, and the
// text of start.txt in its working folder when it started.
type counterState struct {
	mu    sync.Mutex
	count int
	start string
}

// counterTools adds the counter's tools to srv: add (writes), get
// (reads: the count, the server's working folder and
// TOOLENV_EPISODE_DIR, the process id), read and write (a file of the
// working folder), crash (exits), reset (the count back to 0).
func counterTools(srv *mcp.Server, st *counterState) {
	obj := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"name":{"type":"string"},"text":{"type":"string"}}}`)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	type args struct {
		N    int
		Name string
		Text string
	}
	parse := func(req *mcp.CallToolRequest) args {
		var a args
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a
	}
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.count += parse(req).N
		return text(fmt.Sprint(st.count)), nil
	})
	srv.AddTool(&mcp.Tool{Name: "get", InputSchema: obj, Annotations: ro}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		wd, _ := os.Getwd()
		out := map[string]any{"count": st.count, "dir": wd, "episode_dir": os.Getenv(EpisodeDirVar), "pid": os.Getpid(), "start": st.start}
		b, _ := json.Marshal(out)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "read", InputSchema: obj, Annotations: ro}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, err := os.ReadFile(parse(req).Name)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		return text(string(b)), nil
	})
	srv.AddTool(&mcp.Tool{Name: "write", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := parse(req)
		if err := os.WriteFile(a.Name, []byte(a.Text), 0o644); err != nil {
			return nil, err
		}
		return text("written"), nil
	})
	srv.AddTool(&mcp.Tool{Name: "crash", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "counter: crashing on purpose")
		os.Exit(3)
		return nil, nil
	})
	srv.AddTool(&mcp.Tool{Name: "reset", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.count = 0
		return text("0"), nil
	})
}

// runCounterServer serves the counter over stdio (mode "counter").
func runCounterServer() {
	st := &counterState{}
	if b, err := os.ReadFile("start.txt"); err == nil {
		st.start = string(b)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	counterTools(srv, st)
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
}

// isolatedBackend serves srv isolated with iso: its shared client, its
// pool and its collection.
func isolatedBackend(t *testing.T, srv *Server, iso Isolation) (*Backend, *toolenv.Collection, *logtest.Buffer) {
	t.Helper()
	logs := &logtest.Buffer{}
	opts := Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), MinBackoff: 20 * time.Millisecond, StartTimeout: 20 * time.Second}
	cl, err := Start(context.Background(), srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	tools, err := cl.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	col, _, err := NewCollection(srv.Name, tools, CollectionOptions{Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	if iso.Dir == "" {
		iso.Dir = t.TempDir()
	}
	pool, err := NewPool(srv, opts, iso)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(BackendOptions{Client: cl, Pool: pool, Virtual: virtual.Options{Tools: col.Tools}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, col, logs
}

func callIn(b *Backend, col *toolenv.Collection, session, tool string, args map[string]any) *toolenv.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	return b.Invoke(ctx, &toolenv.Call{Tool: col.Tool(tool), Collection: col, Args: args, Session: session})
}

// getState reads the counter server's get answer.
func getState(t *testing.T, r *toolenv.Result) (count int, dir, episodeDir string, pid int) {
	t.Helper()
	if !r.OK() || r.Source != toolenv.SourceUpstream {
		t.Fatalf("get: %s %s %s", r.Status, r.Source, r.Error)
	}
	var body struct {
		StructuredContent struct {
			Count      int    `json:"count"`
			Dir        string `json:"dir"`
			EpisodeDir string `json:"episode_dir"`
			PID        int    `json:"pid"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("get: %v: %s", err, r.Body)
	}
	s := body.StructuredContent
	return s.Count, s.Dir, s.EpisodeDir, s.PID
}

// waitFor polls cond until it holds, for at most a minute (the pool
// starts and stops processes in the background).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPoolIsolatesEpisodes: each session gets an instance of its own (its
// own process, its own folder, which is its working folder and
// TOOLENV_EPISODE_DIR), started from the same empty state; one
// session's writes are invisible to the others; ending a session stops
// its instance and removes its folder; the pool refills.
func TestPoolIsolatesEpisodes(t *testing.T) {
	b, col, _ := isolatedBackend(t, testServer(t, "counter", "counter"), Isolation{Mode: IsolationEpisode, Pool: 2, Max: 4})
	ctx := context.Background()
	b.Warm()
	waitFor(t, "two ready instances", func() bool { return b.Pool().Stats().Ready == 2 })
	for _, id := range []string{"a", "b", "c"} {
		if err := b.StartSession(ctx, id, nil); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	if r := callIn(b, col, "a", "add", map[string]any{"n": 5}); !r.OK() || string(r.Body) != `{"content":[{"type":"text","text":"5"}]}` {
		t.Fatalf("add in a: %s %s %s", r.Status, r.Body, r.Error)
	}
	if r := callIn(b, col, "a", "write", map[string]any{"name": "note.txt", "text": "a's"}); !r.OK() {
		t.Fatalf("write in a: %s", r.Error)
	}
	pids := map[int]bool{}
	dirs := map[string]string{}
	for _, id := range []string{"a", "b", "c"} {
		count, dir, epDir, pid := getState(t, callIn(b, col, id, "get", nil))
		want := 0
		if id == "a" {
			want = 5
		}
		if count != want {
			t.Errorf("session %s sees count %d, want %d", id, count, want)
		}
		if dir != epDir || dir == "" || b.InstanceDir(id) != dir {
			t.Errorf("session %s: working folder %q, TOOLENV_EPISODE_DIR %q, instance folder %q: want one folder", id, dir, epDir, b.InstanceDir(id))
		}
		pids[pid] = true
		dirs[id] = dir
	}
	if len(pids) != 3 {
		t.Fatalf("three sessions ran in %d processes", len(pids))
	}
	if r := callIn(b, col, "b", "read", map[string]any{"name": "note.txt"}); !r.OK() || !strings.Contains(string(r.Body), `"isError":true`) {
		t.Fatalf("b reads a's file: %s %s", r.Status, r.Body)
	}
	// The shared instance (no session) is none of them.
	if _, dir, _, pid := getState(t, callIn(b, col, "", "get", nil)); pids[pid] || dir == dirs["a"] {
		t.Fatalf("a call without a session went to an episode's instance (pid %d, dir %s)", pid, dir)
	}
	if !b.DropSession("a") || b.DropSession("a") {
		t.Fatal("DropSession reports wrongly")
	}
	waitFor(t, "a's folder removed", func() bool { _, err := os.Stat(dirs["a"]); return errors.Is(err, os.ErrNotExist) })
	waitFor(t, "the pool refilled", func() bool { s := b.Pool().Stats(); return s.Ready == 2 && s.InUse == 2 })
	// A session not started gets its instance at its first call, fresh.
	if count, _, _, _ := getState(t, callIn(b, col, "d", "get", nil)); count != 0 {
		t.Fatalf("a new session sees count %d", count)
	}
	if s := b.Pool().Stats(); s.Handed != 4 || s.Exited != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
	// Closing stops the instances of sessions that never ended too, and
	// removes their folders.
	live := []string{b.InstanceDir("b"), b.InstanceDir("c"), b.InstanceDir("d")}
	b.Close()
	for _, d := range live {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the folder %s of a session open at close is still there: %v", d, err)
		}
	}
	if entries, _ := os.ReadDir(b.Pool().Isolation().Dir); len(entries) != 0 {
		t.Errorf("folders left after close: %v", entries)
	}
}

// TestPoolCrashFailsOnlyItsEpisode: an instance that crashes mid-episode
// fails that episode's call and every later one with an
// infrastructure-failure mark, never a simulated answer; the other
// episodes go on; the pool replaces the instance, and a ready instance
// killed with SIGKILL is replaced too.
func TestPoolCrashFailsOnlyItsEpisode(t *testing.T) {
	b, col, logs := isolatedBackend(t, testServer(t, "counter", "counter"), Isolation{Mode: IsolationEpisode, Pool: 1, Max: 3})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := b.StartSession(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		if r := callIn(b, col, id, "add", map[string]any{"n": 2}); !r.OK() {
			t.Fatal(r.Error)
		}
	}
	r := callIn(b, col, "a", "crash", nil)
	if r.Status != toolenv.StatusUnavailable || r.Meta[MetaInfraFailure] != InfraInstanceExited || r.Source != toolenv.SourceUpstream {
		t.Fatalf("the crash: %s %s meta %v %s", r.Status, r.Source, r.Meta, r.Error)
	}
	if !strings.Contains(r.Error, "exit status 3") || !strings.Contains(r.Error, "crashing on purpose") {
		t.Fatalf("the crash does not say why: %s", r.Error)
	}
	for _, tool := range []string{"get", "add"} {
		if r := callIn(b, col, "a", tool, map[string]any{"n": 1}); r.Meta[MetaInfraFailure] != InfraInstanceExited || r.OK() {
			t.Fatalf("%s after the crash: %s %s %v", tool, r.Status, r.Source, r.Meta)
		}
	}
	if count, _, _, _ := getState(t, callIn(b, col, "b", "get", nil)); count != 2 {
		t.Fatalf("the other episode's count is %d", count)
	}
	waitFor(t, "the pool replaced the instance", func() bool { return b.Pool().Stats().Ready == 1 })
	b.DropSession("a")
	// A ready instance killed (SIGKILL to its process group) is replaced.
	b.Pool().mu.Lock()
	ready := b.Pool().ready[0]
	b.Pool().mu.Unlock()
	_, proc, err := ready.client.session()
	if err != nil {
		t.Fatal(err)
	}
	pid := proc.cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed ready instance replaced", func() bool {
		s := b.Pool().Stats()
		return s.Exited == 2 && s.Ready == 1
	})
	if err := b.StartSession(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	if count, _, _, p := getState(t, callIn(b, col, "c", "get", nil)); count != 0 || p == pid {
		t.Fatalf("after the kill: count %d, pid %d (killed %d)", count, p, pid)
	}
	if !strings.Contains(logs.String(), "a ready instance of the MCP server exited") {
		t.Fatalf("the replacement is not logged:\n%s", logs)
	}
}

// TestPoolMax: beyond Max instances an episode waits for one to end, at
// most the start timeout, then is refused (unavailable, saying to retry),
// never hangs; once an episode ends, the next one starts.
func TestPoolMax(t *testing.T) {
	srv := testServer(t, "counter", "counter")
	b, col, _ := isolatedBackend(t, srv, Isolation{Mode: IsolationEpisode, Pool: 1, Max: 1})
	ctx := context.Background()
	if err := b.StartSession(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond) // the wait for a free instance
	defer cancel()
	err := b.StartSession(short, "b", nil)
	if !errors.Is(err, ErrPoolFull) || toolenv.StatusOf(err) != toolenv.StatusUnavailable || !strings.Contains(err.Error(), "isolation max") {
		t.Fatalf("a second episode over max 1: %v", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	r := b.Invoke(short2, &toolenv.Call{Tool: col.Tool("get"), Collection: col, Args: map[string]any{}, Session: "lazy"})
	if r.Status != toolenv.StatusUnavailable || r.Meta[MetaInfraFailure] != InfraNoInstance {
		t.Fatalf("a call of a third session: %s %v %s", r.Status, r.Meta, r.Error)
	}
	b.DropSession("a")
	if err := b.StartSession(ctx, "b", nil); err != nil {
		t.Fatalf("after a's end: %v", err)
	}
	if count, _, _, _ := getState(t, callIn(b, col, "b", "get", nil)); count != 0 {
		t.Fatal(count)
	}
}

// TestPoolServerDoesNotStart: when no instance starts (the command is
// gone), a session still starts, and its calls are answered as a shared
// server's are when it is down: by the simulator chain, marked, never
// as the environment's failure; later starts fail at once while the
// backoff runs.
func TestPoolServerDoesNotStart(t *testing.T) {
	srv := testServer(t, "counter", "counter")
	b, col, _ := isolatedBackend(t, srv, Isolation{Mode: IsolationEpisode, Pool: 1, Max: 2})
	gone := *srv
	gone.Command = filepath.Join(t.TempDir(), "no-such-server")
	b.iso.pool.srv = &gone
	b.iso.pool.opts.MinBackoff = time.Hour
	ctx := context.Background()
	if err := b.StartSession(ctx, "a", nil); err != nil {
		t.Fatalf("start with the server gone: %v", err)
	}
	r := callIn(b, col, "a", "get", nil)
	if !r.OK() || r.Source == toolenv.SourceUpstream || r.Meta[MetaInfraFailure] != "" || !IsResult(r.Body) {
		t.Fatalf("a call with no instance: %s %s %v", r.Status, r.Source, r.Meta)
	}
	if err := b.StartSession(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	if w := b.iso.lookup("b"); w == nil || w.inst != nil || !strings.Contains(fmt.Sprint(w.err), "does not start") {
		t.Fatalf("b's world: %+v", w)
	}
	if s := b.Pool().Stats(); s.Failed != 1 || s.Started != 0 {
		t.Fatalf("stats %+v: the second start should fail at once, not try again within the backoff", s)
	}
}

// TestSeedFiles: an episode's folder starts with its initial files
// (copied before its first call, or before its instance starts with
// SeedBeforeStart); the cache origin follows the files' contents; bad
// folders are refused, saying why.
func TestSeedFiles(t *testing.T) {
	seed := t.TempDir()
	os.MkdirAll(filepath.Join(seed, "sub"), 0o755)
	os.WriteFile(filepath.Join(seed, "start.txt"), []byte("from the seed"), 0o644)
	os.WriteFile(filepath.Join(seed, "sub", "deep.txt"), []byte("deep"), 0o600)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "start.txt"), []byte("another seed"), 0o644)
	for _, before := range []bool{false, true} {
		t.Run(fmt.Sprintf("before_start=%t", before), func(t *testing.T) {
			b, col, _ := isolatedBackend(t, testServer(t, "counter", "counter"), Isolation{Mode: IsolationEpisode, Pool: 1, Max: 3, SeedBeforeStart: before})
			ctx := context.Background()
			if err := b.StartSession(ctx, "s", &toolenv.InitialState{Files: seed}); err != nil {
				t.Fatal(err)
			}
			if err := b.StartSession(ctx, "o", &toolenv.InitialState{Files: other}); err != nil {
				t.Fatal(err)
			}
			if err := b.StartSession(ctx, "e", nil); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]string{"start.txt": "from the seed", "sub/deep.txt": "deep"} {
				if r := callIn(b, col, "s", "read", map[string]any{"name": name}); !strings.Contains(string(r.Body), `"text":"`+want+`"`) {
					t.Fatalf("%s: %s", name, r.Body)
				}
			}
			var st struct {
				StructuredContent struct{ Start string } `json:"structuredContent"`
			}
			json.Unmarshal(callIn(b, col, "s", "get", nil).Body, &st)
			if before && st.StructuredContent.Start != "from the seed" || !before && st.StructuredContent.Start != "" {
				t.Fatalf("the server read %q at its start", st.StructuredContent.Start)
			}
			if fi, err := os.Stat(filepath.Join(b.InstanceDir("s"), "sub", "deep.txt")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the mode is not kept: %v %v", fi, err)
			}
			origin := func(id string) string { o, _ := b.SessionOrigin(id); return o }
			os1, oo, oe := origin("s"), origin("o"), origin("e")
			if os1 == oo || os1 == oe || oo == oe || !strings.HasPrefix(os1, "fresh:") || origin("") != "" || origin("never") != oe {
				t.Fatalf("origins %q %q %q, no session %q, never started %q", os1, oo, oe, origin(""), origin("never"))
			}
			// A session started again runs in a new world, from its new origin.
			_, w1 := b.SessionOrigin("s")
			if err := b.StartSession(ctx, "s", nil); err != nil {
				t.Fatal(err)
			}
			if o, w2 := b.SessionOrigin("s"); w2 == w1 || o != oe {
				t.Fatalf("started again: world %d then %d, origin %q (want %q)", w1, w2, o, oe)
			}
		})
	}
	b, _, _ := isolatedBackend(t, testServer(t, "counter", "counter"), Isolation{Mode: IsolationEpisode, Pool: 1, Max: 3})
	link := t.TempDir()
	os.Symlink("/etc/passwd", filepath.Join(link, "passwd"))
	file := filepath.Join(seed, "start.txt")
	for _, c := range []struct {
		init *toolenv.InitialState
		want string
	}{
		{&toolenv.InitialState{Files: filepath.Join(seed, "missing")}, "no such file"},
		{&toolenv.InitialState{Files: file}, "is a file: name a folder"},
		{&toolenv.InitialState{Files: link}, "passwd is not a regular file"},
		{&toolenv.InitialState{SQL: "DELETE FROM x"}, "start SQL collections"},
		{&toolenv.InitialState{Name: "big"}, "no named initial states"},
	} {
		err := b.StartSession(context.Background(), "bad", c.init)
		if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want invalid arguments saying %q", c.init, err, c.want)
		}
	}
	if s := b.Pool().Stats(); s.InUse != 0 {
		t.Fatalf("refused sessions hold %d instances", s.InUse)
	}
}

// TestHTTPReset: an HTTP server's state is global; isolated per episode,
// each episode gets an MCP session of its own after the configured
// reset (an HTTP request, or a call of the server's reset tool), so
// each starts from the same state; a reset that fails refuses the
// episode.
func TestHTTPReset(t *testing.T) {
	st := &counterState{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	counterTools(srv, st)
	var resets, fail int
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodPut || r.Header.Get("X-Key") != "k1" {
			http.Error(w, "bad reset", http.StatusBadRequest)
			return
		}
		if fail > 0 {
			http.Error(w, "the database is locked", http.StatusInternalServerError)
			return
		}
		resets++
		st.mu.Lock()
		st.count = 0
		st.mu.Unlock()
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close) // after the backends' cleanups, which close their sessions
	t.Setenv("RESET_KEY", "k1")
	for _, reset := range []*Reset{
		{URL: ts.URL + "/reset", Method: "PUT", Headers: map[string]string{"X-Key": "${RESET_KEY}"}},
		{Tool: "reset"},
	} {
		s := &Server{Name: "counter", URL: ts.URL + "/mcp"}
		b, col, _ := isolatedBackend(t, s, Isolation{Mode: IsolationEpisode, Reset: reset})
		if p := b.Pool().Isolation(); p.Pool != 1 || p.Max != 1 {
			t.Fatalf("HTTP defaults: %+v", p)
		}
		ctx := context.Background()
		for i, id := range []string{"e1", "e2", "e3"} {
			if err := b.StartSession(ctx, id, nil); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if count, _, _, _ := getState(t, callIn(b, col, id, "get", nil)); count != 0 {
				t.Fatalf("episode %d starts at %d", i+1, count)
			}
			callIn(b, col, id, "add", map[string]any{"n": 7})
			if count, _, _, _ := getState(t, callIn(b, col, id, "get", nil)); count != 7 {
				t.Fatalf("episode %d: %d", i+1, count)
			}
			if i == 0 {
				// One episode at a time holds an HTTP server by default.
				short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				err := b.StartSession(short, "other", nil)
				cancel()
				if !errors.Is(err, ErrPoolFull) {
					t.Fatalf("a second episode at once: %v", err)
				}
			}
			b.DropSession(id)
		}
		if reset.URL != "" && resets != 3 {
			t.Fatalf("%d HTTP resets, want 3", resets)
		}
		if reset.URL != "" {
			mu.Lock()
			fail = 1
			mu.Unlock()
			err := b.StartSession(ctx, "e4", nil)
			if toolenv.StatusOf(err) != toolenv.StatusUnavailable || !strings.Contains(err.Error(), "the database is locked") {
				t.Fatalf("a failing reset: %v", err)
			}
			mu.Lock()
			fail = 0
			mu.Unlock()
		}
	}
}
