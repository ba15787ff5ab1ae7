package invoke

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// failingCache is a store whose reads or writes fail.
type failingCache struct {
	store.Store
	readErr, writeErr error
}

func (f failingCache) GetExact(ctx context.Context, tool, exact, args string) (*store.Entry, bool, error) {
	if f.readErr != nil {
		return nil, false, f.readErr
	}
	return f.Store.GetExact(ctx, tool, exact, args)
}

func (f failingCache) Put(ctx context.Context, e *store.Entry) (bool, error) {
	if f.writeErr != nil {
		return false, f.writeErr
	}
	return f.Store.Put(ctx, e)
}

func openStore(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestStoreReadFailureFailsFast: a store that cannot be read fails the
// call with a clear status, without calling the backend (an answer given
// without the store could contradict a recorded one).
func TestStoreReadFailureFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		words string
	}{
		{"unreachable", fmt.Errorf("cache get: %w (PostgreSQL at postgres://db:5432/x): dial tcp: connection refused", store.ErrUnavailable), "cannot be reached"},
		{"broken", errors.New("disk on fire"), "the cache store failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &countingBackend{source: toolenv.SourceSimulator}
			st := openStore(t, ":memory:")
			p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: failingCache{Store: st, readErr: tc.err}})
			res := p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Rome"}`))
			if res.Status != toolenv.StatusUnavailable || res.Meta[MetaStoreError] != "read" || !strings.Contains(res.Error, tc.words) || res.Hint == "" {
				t.Fatalf("res = %+v", res)
			}
			if strings.Contains(res.Error, "5432") {
				t.Fatalf("the store's address reached the client: %s", res.Error)
			}
			if b.calls.Load() != 0 {
				t.Fatal("the backend was called although the store could not be read")
			}
		})
	}
}

// TestStoreWriteFailureWarns: an answer the store refused is served with
// a warning saying it was not kept, and marked for metrics.
func TestStoreWriteFailureWarns(t *testing.T) {
	b := &countingBackend{source: toolenv.SourceSimulator}
	st := openStore(t, ":memory:")
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: failingCache{Store: st, writeErr: errors.New("cache put: database or disk is full (13)")}})
	res := p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"Rome"}`))
	if !res.OK() || res.Meta[MetaStoreError] != "write" || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "disk is full") {
		t.Fatalf("res = %+v", res)
	}
}

// TestDiskFullIsToldToTheClient runs a pipeline in a child process whose
// file size limit (RLIMIT_FSIZE) the store outgrows: once SQLite cannot
// write, every answer still arrives, each carrying the warning, and the
// answers stored before the limit stay readable.
func TestDiskFullIsToldToTheClient(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$")
	cmd.Env = append(os.Environ(), "TOOLENV_FSIZE_CHILD="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var warned, kept int
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var line struct {
			I   int             `json:"i"`
			Res *toolenv.Result `json:"res"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Res == nil {
			continue
		}
		if !line.Res.OK() {
			t.Fatalf("call %d failed: %+v", line.I, line.Res)
		}
		if line.Res.Meta[MetaStoreError] == "write" {
			if len(line.Res.Warnings) == 0 || !strings.Contains(line.Res.Warnings[0], "could not store") {
				t.Fatalf("call %d not kept without a warning: %+v", line.I, line.Res)
			}
			warned++
		} else {
			kept++
		}
	}
	if warned == 0 || kept == 0 {
		t.Fatalf("%d answers kept, %d warned; want both (the limit should be hit midway)", kept, warned)
	}
	st := openStore(t, filepath.Join(dir, "s.db"))
	if err := st.Check(context.Background()); err != nil {
		t.Fatalf("the store is damaged after the disk filled: %v", err)
	}
	s, _ := st.Stats(context.Background())
	if s.Entries < int64(kept) {
		t.Fatalf("%d entries in the store, but %d answers were served as kept", s.Entries, kept)
	}
}

// TestDiskFullChild is the child of TestDiskFullIsToldToTheClient.
func TestDiskFullChild(t *testing.T) {
	dir := os.Getenv("TOOLENV_FSIZE_CHILD")
	if dir == "" {
		t.Skip("run by TestDiskFullIsToldToTheClient")
	}
	st := openStore(t, filepath.Join(dir, "s.db"))
	// Let the store's files grow by about 300 kB from here.
	lim := syscall.Rlimit{Cur: 1 << 20, Max: ^uint64(0)}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	b := &bigBackend{}
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: st})
	for i := range 150 {
		res := p.Invoke(context.Background(), call(t, reg, "get_weather", fmt.Sprintf(`{"city":"c%d"}`, i)))
		line, _ := json.Marshal(map[string]any{"i": i, "res": res})
		fmt.Println(string(line))
	}
}

// bigBackend answers with 20 kB bodies.
type bigBackend struct{}

func (bigBackend) Invoke(_ context.Context, call *toolenv.Call) *toolenv.Result {
	body, _ := json.Marshal(strings.Repeat("x", 20000) + fmt.Sprint(call.Args["city"]))
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSimulator}
}

// TestExactKeyFromTheCall: a front-end's exact key is stored with the
// answer; a call with the same canonical arguments but another exact key
// falls back to it; an answer recorded under that other key is found.
func TestExactKeyFromTheCall(t *testing.T) {
	ctx := context.Background()
	b := &countingBackend{source: toolenv.SourceSimulator}
	p, reg, st := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{})
	withKey := func(args, exact string) *toolenv.Call {
		c := call(t, reg, "get_weather", args)
		c.Meta = map[string]string{CallMetaExactKey: exact}
		return c
	}
	first := p.Invoke(ctx, withKey(`{"city":"Paris","days":3}`, "{'city': 'Paris', 'days': 3}"))
	e, ok, err := st.Get(ctx, "demo/get_weather", `{"city":"Paris","days":3}`)
	if !ok || err != nil || e.Exact != "{'city': 'Paris', 'days': 3}" || string(e.Body) != string(first.Body) {
		t.Fatalf("stored entry = %+v %v %v", e, ok, err)
	}
	second := p.Invoke(ctx, withKey(`{"days":3,"city":"Paris"}`, "{'days': 3, 'city': 'Paris'}"))
	if second.Source != toolenv.SourceCache || string(second.Body) != string(first.Body) || b.calls.Load() != 1 {
		t.Fatalf("other key order: %+v, backend calls %d", second, b.calls.Load())
	}
	if _, err := st.Put(ctx, &store.Entry{Tool: "demo/get_weather", Args: `{"city":"Paris","days":3}`, Exact: "{'days': 3, 'city': 'Paris'}", Body: json.RawMessage(`"recorded for this order"`), Origin: "import"}); err != nil {
		t.Fatal(err)
	}
	third := p.Invoke(ctx, withKey(`{"days":3,"city":"Paris"}`, "{'days': 3, 'city': 'Paris'}"))
	if string(third.Body) != `"recorded for this order"` || third.Meta[MetaOrigin] != "import" {
		t.Fatalf("exact hit: %+v", third)
	}
}

// uniqueBackend gives every invocation a different answer, slowly, so
// that concurrent callers overlap.
type uniqueBackend struct {
	n     atomic.Int64
	delay time.Duration
	fail  bool
	gate  chan struct{} // when set, each call waits for it
}

func (b *uniqueBackend) Invoke(ctx context.Context, _ *toolenv.Call) *toolenv.Result {
	i := b.n.Add(1)
	if b.gate != nil {
		select {
		case <-b.gate:
		case <-ctx.Done():
			return toolenv.ResultOf(ctx.Err())
		}
	}
	time.Sleep(b.delay)
	if b.fail {
		return &toolenv.Result{Status: toolenv.StatusUpstreamError, Error: fmt.Sprintf("failure %d", i), Source: toolenv.SourceUpstream}
	}
	return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(fmt.Sprintf(`"answer %d"`, i)), Source: toolenv.SourceSimulator}
}

// twoProcesses returns two pipelines over two handles of one SQLite
// file: separate connections, memory caches and single-flight groups,
// as two processes sharing a store have.
//
// waiting, when given, is told each time a call starts waiting for the
// same call answered by another (see CacheOptions.waiting).
func twoProcesses(t *testing.T, b toolenv.Handler, fleet bool, lease time.Duration, waiting ...func()) [2]process {
	path := filepath.Join(t.TempDir(), "shared.db")
	var out [2]process
	for i := range out {
		st := openStore(t, path)
		opts := Options{Cache: st}
		if len(waiting) > 0 {
			opts.flightWaiting = waiting[0]
		}
		if fleet {
			opts.Fleet = &Fleet{Claims: st, Owner: fmt.Sprintf("p%d", i), Lease: lease, Poll: 20 * time.Millisecond}
		}
		p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, opts)
		out[i] = process{p, reg}
	}
	return out
}

type process struct {
	p   toolenv.Handler
	reg *Registry
}

// invokeAll makes n concurrent identical calls spread over ps and
// returns their results.
func invokeAll(t *testing.T, ps [2]process, n int, args string) []*toolenv.Result {
	out := make([]*toolenv.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := ps[i%2]
			out[i] = p.p.Invoke(context.Background(), call(t, p.reg, "get_weather", args))
		}()
	}
	wg.Wait()
	return out
}

func distinctBodies(res []*toolenv.Result) map[string]int {
	m := map[string]int{}
	for _, r := range res {
		m[string(r.Status)+" "+string(r.Body)+r.Error]++
	}
	return m
}

// TestOneAnswerAcrossProcesses (issue 13 item 6): two processes on one
// store answer many concurrent identical new calls; each computes its
// own answer, but the loser of the insert serves the stored one, so
// every caller gets the same answer.
func TestOneAnswerAcrossProcesses(t *testing.T) {
	b := &uniqueBackend{delay: 30 * time.Millisecond}
	ps := twoProcesses(t, b, false, 0)
	for round := range 5 {
		res := invokeAll(t, ps, 40, fmt.Sprintf(`{"city":"c%d"}`, round))
		if d := distinctBodies(res); len(d) != 1 {
			t.Fatalf("round %d: %d different answers to one call: %v", round, len(d), d)
		}
	}
	if n := b.n.Load(); n > 10 {
		t.Fatalf("backend called %d times for 5 keys on two processes (single-flight allows 2 per key)", n)
	}
}

// heldLookup is a cache whose first read waits, after reading, until
// release is closed: a call that missed and was then held up before
// joining the flight.
type heldLookup struct {
	Cache
	reads   atomic.Int64
	read    chan struct{} // closed when the first read has read
	release chan struct{}
}

func (h *heldLookup) GetExact(ctx context.Context, tool, exact, args string) (*store.Entry, bool, error) {
	e, ok, err := h.Cache.GetExact(ctx, tool, exact, args)
	if h.reads.Add(1) == 1 {
		close(h.read)
		<-h.release
	}
	return e, ok, err
}

// TestMissAfterTheFlightServesItsAnswer: a call that missed the cache,
// then joined the key's flight only after it ended (a busy machine
// preempting it in between), serves the answer that flight stored
// instead of asking the backend again: one process asks the backend once
// per key, whatever the scheduling (TestOneAnswerAcrossProcesses
// depends on it).
func TestMissAfterTheFlightServesItsAnswer(t *testing.T) {
	b := &uniqueBackend{}
	st := openStore(t, filepath.Join(t.TempDir(), "cache.db"))
	h := &heldLookup{Cache: st, read: make(chan struct{}), release: make(chan struct{})}
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: h})
	late := make(chan *toolenv.Result)
	go func() { late <- p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"x"}`)) }()
	<-h.read // the late call missed
	first := p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"x"}`))
	close(h.release)
	second := <-late
	if !first.OK() || string(first.Body) != string(second.Body) || b.n.Load() != 1 {
		t.Fatalf("first %s, late %s (%s); backend called %d times, want once", first.Body, second.Body, second.Error, b.n.Load())
	}
}

// TestFleetAnswersAMissOnce: with claims, two processes call the
// backend once per key.
func TestFleetAnswersAMissOnce(t *testing.T) {
	b := &uniqueBackend{delay: 50 * time.Millisecond}
	ps := twoProcesses(t, b, true, 10*time.Second)
	for round := range 5 {
		res := invokeAll(t, ps, 30, fmt.Sprintf(`{"city":"c%d"}`, round))
		if d := distinctBodies(res); len(d) != 1 {
			t.Fatalf("round %d: %d different answers: %v", round, len(d), d)
		}
		if !res[0].OK() {
			t.Fatalf("round %d: %+v", round, res[0])
		}
	}
	if n := b.n.Load(); n != 5 {
		t.Fatalf("backend called %d times for 5 distinct misses, want 5", n)
	}
}

// TestFleetSharesAFailure: the holder's failure (not cacheable) reaches
// the process that waited for it, without a second backend call.
func TestFleetSharesAFailure(t *testing.T) {
	b := &uniqueBackend{fail: true, gate: make(chan struct{})}
	waiting := make(chan struct{}, 2)
	ps := twoProcesses(t, b, true, 10*time.Second, func() { waiting <- struct{}{} })
	done := make(chan []*toolenv.Result)
	go func() { done <- invokeAll(t, ps, 2, `{"city":"x"}`) }()
	// Both processes are in: one holds the claim inside the backend (it
	// waits at the gate), the other waits on it.
	select {
	case <-waiting:
	case <-time.After(time.Minute):
		t.Fatal("no process started waiting for the other's claim")
	}
	close(b.gate)
	res := <-done
	if d := distinctBodies(res); len(d) != 1 || res[0].Status != toolenv.StatusUpstreamError {
		t.Fatalf("answers: %v", d)
	}
	if n := b.n.Load(); n != 1 {
		t.Fatalf("backend called %d times, want 1", n)
	}
}

// TestFleetTakesOverFromADeadHolder: a claim whose holder stopped
// renewing (killed) is taken over once its lease runs out.
func TestFleetTakesOverFromADeadHolder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	dead := openStore(t, path)
	args := `{"city":"x"}`
	held, won, err := dead.Claim(ctx, "demo/get_weather", args, "dead", 400*time.Millisecond)
	if err != nil || !won {
		t.Fatal(won, err)
	}
	st := openStore(t, path)
	b := &uniqueBackend{}
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: st, Fleet: &Fleet{Claims: st, Lease: time.Second, Poll: 20 * time.Millisecond}})
	res := p.Invoke(ctx, call(t, reg, "get_weather", args))
	if !res.OK() || string(res.Body) != `"answer 1"` || b.n.Load() != 1 {
		t.Fatalf("after takeover: %+v, backend calls %d", res, b.n.Load())
	}
	if err := dead.RenewClaim(ctx, held, time.Second); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("the dead holder's claim: %v, want lost", err)
	}
}

// TestFleetClaimFailureFailsFast: claims that cannot be taken fail the
// call without calling the backend.
func TestFleetClaimFailureFailsFast(t *testing.T) {
	st := openStore(t, ":memory:")
	b := &uniqueBackend{}
	p, reg, _ := newPipeline(t, b, toolenv.Policy{Cache: true}, Options{Cache: st, Fleet: &Fleet{Claims: brokenClaims{st}}})
	res := p.Invoke(context.Background(), call(t, reg, "get_weather", `{"city":"x"}`))
	if res.Status != toolenv.StatusUnavailable || res.Meta[MetaStoreError] != "claim" || b.n.Load() != 0 {
		t.Fatalf("res = %+v, backend calls %d", res, b.n.Load())
	}
}

type brokenClaims struct{ store.Store }

func (brokenClaims) Claim(context.Context, string, string, string, time.Duration) (*store.Claim, bool, error) {
	return nil, false, fmt.Errorf("claim: %w: connection refused", store.ErrUnavailable)
}
