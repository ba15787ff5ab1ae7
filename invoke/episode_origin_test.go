package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// worldsServer is a counter whose sessions each have a world of their
// own (as an MCP server isolated per episode): its origin names the
// state a session starts from (a start value), and Start gives a session
// a fresh world.
type worldsServer struct {
	mu     sync.Mutex
	serial uint64
	worlds map[string]*counterWorld
}

type counterWorld struct {
	start, n int
	serial   uint64
}

func (s *worldsServer) Start(id string, start int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serial++
	s.worlds[id] = &counterWorld{start: start, n: start, serial: s.serial}
}

func (s *worldsServer) SessionOrigin(id string) (string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.worlds[id]
	if w == nil {
		return "", 0
	}
	return fmt.Sprintf("start-%d", w.start), w.serial
}

func (s *worldsServer) Invoke(_ context.Context, call *toolenv.Call) *toolenv.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.worlds[call.Session]
	if call.Tool.Name == "add" {
		w.n++
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(fmt.Sprint(w.n)), Source: toolenv.SourceUpstream}
}

// TestEpisodesOrigins: sessions started from different states never
// share recordings though they make the same calls, sessions from the
// same state do, and a session id started again in a fresh world starts
// its history again.
func TestEpisodesOrigins(t *testing.T) {
	srv := &worldsServer{worlds: map[string]*counterWorld{}}
	_, col := counterPipeline(t, &counterServer{counts: map[string]int{}})
	reg := NewRegistry()
	if err := reg.Add(col, srv); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := New(reg, Options{Cache: st})
	ep := []step{{"get", nil}, {"add", nil}, {"get", nil}}
	run := func(id string, start int) ([]string, []string) {
		srv.Start(id, start)
		return play(t, p, col, id, ep)
	}
	b1, s1 := run("a", 0)
	b2, s2 := run("b", 10)
	b3, s3 := run("c", 0)
	if fmt.Sprint(b1) != "[0 1 1]" || fmt.Sprint(s1) != "[upstream upstream upstream]" {
		t.Fatalf("from 0: %v %v", b1, s1)
	}
	if fmt.Sprint(b2) != "[10 11 11]" || fmt.Sprint(s2) != "[upstream upstream upstream]" {
		t.Fatalf("from 10, the same calls: %v %v (another origin's recordings answered)", b2, s2)
	}
	if fmt.Sprint(b3) != "[0 1 1]" || fmt.Sprint(s3) != "[cache cache cache]" {
		t.Fatalf("from 0 again: %v %v", b3, s3)
	}
	// "a" started again from 10: a fresh world, its history from 0.
	b4, s4 := run("a", 10)
	if fmt.Sprint(b4) != "[10 11 11]" || fmt.Sprint(s4) != "[cache cache cache]" {
		t.Fatalf("a started again: %v %v", b4, s4)
	}
}
