package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// counterServer is a stateful service written for the test: a counter
// per name, which "add" changes (not idempotent), "set" changes
// (idempotent) and "get" reads. Its answers depend on every write before
// them, so a replay is right only if the keys follow the history.
type counterServer struct {
	mu     sync.Mutex
	counts map[string]int
	calls  int
	down   bool
}

func (s *counterServer) Invoke(_ context.Context, call *toolenv.Call) *toolenv.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return &toolenv.Result{Status: toolenv.StatusUnavailable, Error: "down", Source: toolenv.SourceUpstream}
	}
	if call.Meta[CallMetaReplayed] == "true" {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"simulated"`), Source: toolenv.SourceSimulator}
	}
	s.calls++
	name, _ := call.Args["name"].(string)
	switch call.Tool.Name {
	case "add":
		s.counts[name]++
	case "set":
		n, _ := call.Args["n"].(float64)
		s.counts[name] = int(n)
	case "reset":
		s.counts = map[string]int{}
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(fmt.Sprintf(`{"%s":%d}`, name, s.counts[name])), Source: toolenv.SourceUpstream}
}

func counterPipeline(t *testing.T, srv *counterServer) (toolenv.Handler, *toolenv.Collection) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tool := func(name, state string, idem bool) *toolenv.Tool {
		tl := &toolenv.Tool{Name: name, Input: toolenv.ObjectSchema(), Meta: map[string]string{toolenv.MetaState: state}}
		if idem {
			tl.Meta[toolenv.MetaIdempotent] = "true"
		}
		return tl
	}
	col := toolenv.NewCollection("counter", "mcp", []*toolenv.Tool{
		tool("add", toolenv.StateWrite, false), tool("set", toolenv.StateWrite, true),
		tool("get", toolenv.StateRead, false), tool("version", toolenv.StateStateless, false),
	})
	col.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}
	reg := NewRegistry()
	if err := reg.Add(col, srv); err != nil {
		t.Fatal(err)
	}
	return New(reg, Options{Cache: st}), col
}

type step struct {
	tool string
	args map[string]any
}

func play(t *testing.T, p toolenv.Handler, col *toolenv.Collection, session string, steps []step) (bodies, sources []string) {
	t.Helper()
	for _, s := range steps {
		r := p.Invoke(context.Background(), &toolenv.Call{Tool: col.Tool(s.tool), Collection: col, Args: s.args, Session: session})
		bodies = append(bodies, string(r.Body))
		sources = append(sources, string(r.Source))
	}
	return bodies, sources
}

// TestEpisodesReplayHistories: answers of stateful tools are kept per
// history of writes, so episodes replay identically while the service's
// own state has moved on, a different history never gets another's
// answer, and a session whose writes were replayed never reaches the
// service again.
func TestEpisodesReplayHistories(t *testing.T) {
	srv := &counterServer{counts: map[string]int{}}
	p, col := counterPipeline(t, srv)
	a := map[string]any{"name": "a"}
	ep := []step{{"get", a}, {"add", a}, {"get", a}, {"add", a}, {"get", a}}
	live, src := play(t, p, col, "s1", ep)
	if strings.Join(live, " ") != `{"a":0} {"a":1} {"a":1} {"a":2} {"a":2}` || strings.Count(strings.Join(src, " "), "upstream") != 5 {
		t.Fatalf("live: %v %v", live, src)
	}
	// The service now holds a=2; the same episode in another session is
	// answered from the recording, as it was.
	again, src := play(t, p, col, "s2", ep)
	if strings.Join(again, " ") != strings.Join(live, " ") || strings.Count(strings.Join(src, " "), "cache") != 5 {
		t.Fatalf("replay: %v %v", again, src)
	}
	if srv.calls != 5 {
		t.Fatalf("the service was called %d times, want 5", srv.calls)
	}
	// A read after another history is not answered by this one's: two
	// adds then get differs from one add then get.
	_, src = play(t, p, col, "s3", []step{{"add", a}, {"set", map[string]any{"name": "a", "n": 7}}, {"get", a}})
	if src[0] != "cache" || src[1] == "cache" {
		t.Fatalf("diverging history: %v", src)
	}
	// s3's first write was replayed: the service has not seen it, so the
	// next miss does not reach it.
	if src[1] != "simulator" || src[2] != "simulator" {
		t.Fatalf("after a replayed write, misses must not reach the service: %v", src)
	}
	// An idempotent write repeated at once does not change the history.
	fresh := &counterServer{counts: map[string]int{}}
	p2, col2 := counterPipeline(t, fresh)
	set := step{"set", map[string]any{"name": "b", "n": 3}}
	b := map[string]any{"name": "b"}
	play(t, p2, col2, "x", []step{set, {"get", b}})
	_, src = play(t, p2, col2, "y", []step{set, set, {"get", b}})
	if src[2] != "cache" {
		t.Fatalf("a repeated idempotent write changed the key: %v", src)
	}
	_, src = play(t, p2, col2, "z", []step{{"add", b}, {"add", b}, {"get", b}})
	if src[2] == "cache" {
		t.Fatalf("a repeated non-idempotent write kept the key: %v", src)
	}
	// Stateless tools share one answer across sessions, whatever came
	// before.
	_, s1 := play(t, p2, col2, "p", []step{{"version", nil}})
	_, s2 := play(t, p2, col2, "q", []step{{"add", b}, {"version", nil}})
	if s1[0] != "upstream" || s2[1] != "cache" {
		t.Fatalf("stateless: %v %v", s1, s2)
	}
}

// TestEpisodesSessionsAreSerialized: concurrent calls of one session are
// made one at a time, so its history is the order they ran in; other
// sessions run beside it.
func TestEpisodesSessionsAreSerialized(t *testing.T) {
	srv := &counterServer{counts: map[string]int{}}
	p, col := counterPipeline(t, srv)
	var wg sync.WaitGroup
	for s := range 4 {
		for i := range 25 {
			wg.Go(func() {
				p.Invoke(context.Background(), &toolenv.Call{Tool: col.Tool("add"), Collection: col,
					Args: map[string]any{"name": fmt.Sprintf("s%d", s)}, Session: fmt.Sprintf("s%d", s), RequestID: fmt.Sprint(i)})
			})
		}
	}
	wg.Wait()
	for s := range 4 {
		if got := srv.counts[fmt.Sprintf("s%d", s)]; got != 25 {
			t.Fatalf("session s%d: %d adds reached the service, want 25", s, got)
		}
	}
}

// TestEpisodesForgetIdleSessions: beyond MaxSessions the least recently
// used idle sessions are forgotten, so memory stays bounded.
func TestEpisodesForgetIdleSessions(t *testing.T) {
	e := &episodes{max: 100, m: map[string]*episode{}}
	for i := range 1000 {
		ep := e.get(fmt.Sprint(i))
		e.release(ep)
	}
	if len(e.m) > 100 {
		t.Fatalf("%d sessions kept, max 100", len(e.m))
	}
	if _, ok := e.m["999"]; !ok {
		t.Fatal("the most recent session was forgotten")
	}
}
