package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/server/session"
)

// metricValue reads one sample of /metrics.
func metricValue(t *testing.T, base, series string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s", series)
	}
	return string(m[1])
}

// TestEvictedTaskSessionsSaySo: with --max-sessions 4096, 10,000 task
// sessions evict the 5,904 idlest; the next call of each gets 410
// "evicted: --max-sessions 4096 was reached" (a mistyped id still gets
// 404, and another token learns nothing), the evictions are counted in
// /metrics and logged in two lines (the first eviction, then the others
// summed up when the log's window ends), not one per session.
func TestEvictedTaskSessionsSaySo(t *testing.T) {
	max, n := 4096, 10000
	if testing.Short() {
		max, n = 409, 1000
	}
	var logs logtest.Buffer
	m := NewMetrics()
	// The log's windows end when the test says (ends), not after 10 s of
	// a clock that a busy machine may run past mid-test.
	var timers struct {
		sync.Mutex
		due []func()
	}
	ends := func() int {
		n := 0
		for {
			timers.Lock()
			due := timers.due
			timers.due = nil
			timers.Unlock()
			if len(due) == 0 {
				return n
			}
			for _, f := range due {
				f()
				n++
			}
		}
	}
	tb := session.New(session.Options{Max: max, MaxPerClient: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnEvict: func(k int) { m.SessionsEvicted("task", k) },
		AfterFunc: func(_ time.Duration, f func()) { timers.Lock(); timers.due = append(timers.due, f); timers.Unlock() }})
	hs, _ := newSessionServerWith(t, nil, tb, m)
	c := sessionClient{t, hs.URL, ""}
	ids := make([]string, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				resp, _ := c.do("POST", "/tools/live/init", "") // as a SLOT client opens one
				ids[i] = resp.Header.Get(SessionHeader)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	gone, live := 0, 0
	for _, id := range ids {
		resp, body := c.do("POST", "/tools/live/next", id)
		switch resp.StatusCode {
		case http.StatusGone:
			gone++
			if e, _ := body["error"].(string); body["status"] != "gone" || !strings.Contains(e, "evicted: --max-sessions "+strconv.Itoa(max)+" was reached") {
				t.Fatalf("evicted session: %v", body)
			}
		case http.StatusOK:
			live++
		default:
			t.Fatalf("session %s: %d %v", id, resp.StatusCode, body)
		}
	}
	if gone != n-max || live != max {
		t.Fatalf("%d sessions answered 410 and %d 200, want %d and %d", gone, live, n-max, max)
	}
	if resp, body := c.do("POST", "/tools/live/next", session.NewID()); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an id never issued: %d %v", resp.StatusCode, body)
	}
	if got := metricValue(t, hs.URL, `toolenv_sessions_evicted_total{kind="task"}`); got != strconv.Itoa(n-max) {
		t.Fatalf("toolenv_sessions_evicted_total = %s, want %d", got, n-max)
	}
	// One window: the first eviction logged at once, the others summed
	// up in one line when the window ends.
	if lines := strings.Count(logs.String(), "task sessions evicted: --max-sessions"); lines != 1 {
		t.Fatalf("%d log lines before the window ends, want 1:\n%s", lines, logs.String())
	}
	if n := ends(); n != 2 {
		t.Fatalf("%d windows ended, want 2 (the one with evictions, then an empty one)", n)
	}
	log := logs.String()
	if lines := strings.Count(log, "task sessions evicted: --max-sessions"); lines != 2 {
		t.Fatalf("%d log lines for %d evictions in one window, want 2:\n%s", lines, n-max, log)
	}
	if want := "evicted=" + strconv.Itoa(n-max-1) + " in_the_last="; !strings.Contains(log, want) || !strings.Contains(log, "evicted_total="+strconv.Itoa(n-max)) {
		t.Fatalf("the summing-up line does not say %q and evicted_total=%d:\n%s", want, n-max, log)
	}
}

// TestEvictedMCPSessionsSaySo: an MCP session the cap closed gets 404
// (the MCP transport's answer for a session that is gone, so clients
// open another) with a JSON-RPC error saying it was evicted and why; the
// evictions are counted in /metrics.
func TestEvictedMCPSessionsSaySo(t *testing.T) {
	const max = 3
	fx := newMCPFixture(t)
	m := NewMetrics()
	h := NewMCPHandler(fx.server, MCPHTTPOptions{MaxSessions: max, OnEvict: func(k int) { m.SessionsEvicted("mcp", k) }})
	hs := httptest.NewServer(New(Options{Pipeline: fx.pipeline, Registry: fx.reg, MCP: h, Metrics: m}))
	t.Cleanup(hs.Close)
	var ids []string
	for range max + 2 {
		code, id := initialize(t, http.DefaultClient, hs.URL)
		if code != 200 || id == "" {
			t.Fatalf("initialize: %d", code)
		}
		ids = append(ids, id)
	}
	list := func(id string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcpSessionHeader, id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, id := range ids[:2] {
		code, body := list(id)
		var e struct {
			Error struct{ Message string }
		}
		if code != http.StatusNotFound || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error.Message, "evicted: --max-sessions 3 was reached") {
			t.Fatalf("evicted MCP session: %d %s", code, body)
		}
	}
	if code, body := list("never-issued"); code != http.StatusNotFound || strings.Contains(body, "evicted") {
		t.Fatalf("an id never issued: %d %s", code, body)
	}
	if got := metricValue(t, hs.URL, `toolenv_sessions_evicted_total{kind="mcp"}`); got != "2" {
		t.Fatalf("toolenv_sessions_evicted_total{mcp} = %s, want 2", got)
	}
}
