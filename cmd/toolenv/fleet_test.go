package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/queue"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
	"github.com/toolenv/toolenv/store"
)

// balancer is a load balancer in front of replicas for the tests (no
// sticky sessions): the requests of a session go to the replicas in turn,
// the j-th session seen starting at replica j mod n, so that every session
// with two calls or more is spread over replicas whatever the order the
// sessions' requests interleave in; a request without a session goes to
// the next replica. A replica that refuses the connection is skipped, as a
// proxy's health checks would take it out. It records which replica served
// each call of each session.
type balancer struct {
	mu       sync.Mutex
	replicas []*url.URL
	next     int              // the next replica for a request without a session
	sessions map[string]int   // session → its next replica
	served   map[string][]int // session → replica of each tool call
	// before, when set, runs before request n (counting from 0) is sent,
	// with no request in flight.
	before func(n int, req *http.Request)
	n      int
	gate   sync.RWMutex // held for reading by requests in flight
	inner  *http.Transport
}

func newBalancer(bases ...string) *balancer {
	b := &balancer{served: map[string][]int{}, sessions: map[string]int{}, inner: http.DefaultTransport.(*http.Transport).Clone()}
	for _, s := range bases {
		u, _ := url.Parse(s)
		b.replicas = append(b.replicas, u)
	}
	return b
}

func (b *balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	session := req.Header.Get(agent.SessionHeader)
	b.mu.Lock()
	n := b.n
	b.n++
	hook := b.before
	b.mu.Unlock()
	if hook != nil {
		b.gate.Lock()
		hook(n, req)
		b.inner.CloseIdleConnections()
		b.gate.Unlock()
	}
	b.gate.RLock()
	defer b.gate.RUnlock()
	var lastErr error
	for range b.replicas {
		b.mu.Lock()
		var i int
		if session != "" {
			next, ok := b.sessions[session]
			if !ok {
				next = len(b.sessions)
			}
			i = next % len(b.replicas)
			b.sessions[session] = next + 1
		} else {
			i = b.next % len(b.replicas)
			b.next++
		}
		b.mu.Unlock()
		r := req.Clone(req.Context())
		r.URL.Scheme, r.URL.Host, r.Host = b.replicas[i].Scheme, b.replicas[i].Host, ""
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		resp, err := b.inner.RoundTrip(r)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				lastErr = err
				continue // down: the next replica
			}
			return nil, err
		}
		if session != "" && strings.Contains(req.URL.Path, "/tools/") {
			b.mu.Lock()
			b.served[session] = append(b.served[session], i)
			b.mu.Unlock()
		}
		return resp, nil
	}
	return nil, lastErr
}

// servedOn reports whether a tool call of the session was served by
// replica i.
func (b *balancer) servedOn(session string, i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.served[session] {
		if r == i {
			return true
		}
	}
	return false
}

// generatedSlotSel builds a generated NL2SQL corpus (nl2apitest) with
// toolenv build bird and returns the SLOT and SEL collection folders:
// built once for the tests, which only read them (serving a collection
// never writes its folder).
func generatedSlotSel(t *testing.T) []string {
	t.Helper()
	dir := slotSelBuild.get(t, func(dir string) error {
		data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
		if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 3}); err != nil {
			return err
		}
		if code, _, stderr := run(t, context.Background(), "build", "bird", "--data", data, "--out", out, "--flavors", "slot,sel", "--workers", "1", "--log-level", "warn"); code != 0 {
			return fmt.Errorf("build: %s", stderr)
		}
		return nil
	})
	out := filepath.Join(dir, "out")
	return []string{filepath.Join(out, "slot"), filepath.Join(out, "sel")}
}

var slotSelBuild sharedBuild

// TestThreeReplicasServeSessionsRoundRobin (issue 11 item 2): three
// toolenv serve processes on one PostgreSQL, behind a balancer that sends
// each session's requests to the replicas in turn. Every SLOT/SEL task, its session
// issued by one replica and its calls spread over all three, reaches its
// gold answer; a replica killed with SIGKILL in the middle of the run
// loses no session for the other two.
func TestThreeReplicasServeSessionsRoundRobin(t *testing.T) {
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	dirs := generatedSlotSel(t)
	t.Setenv("FLEET_TEST_TOKEN", "fleet-secret-token")
	args := []string{"--store", dsn, "--store-timeout", safetyNet.String(), "--auth-token-env", "FLEET_TEST_TOKEN"}
	for _, d := range dirs {
		args = append(args, "--collection", d)
	}
	var replicas []*replica
	var bases []string
	for range 3 {
		r := startReplica(t, args...)
		replicas = append(replicas, r)
		bases = append(bases, r.base)
	}
	lb := newBalancer(bases...)
	lt, err := loadTasksOnlyForTest(dirs)
	if err != nil {
		t.Fatal(err)
	}
	// Kill replica 1 once a third of the requests have gone through, at
	// the first tool call of a session replica 1 has already served a tool
	// call of: that session's calls cross the kill whatever the timing.
	expected := 0
	for _, task := range lt.tasks {
		inits, _ := sqltools.InitCalls(task)
		expected += 2 + len(inits) + len(task.Gold) // POST /sessions, calls, DELETE
	}
	killedAt, killed := expected/3, false
	lb.before = func(n int, req *http.Request) {
		session := req.Header.Get(agent.SessionHeader)
		if killed || n < killedAt || !strings.Contains(req.URL.Path, "/tools/") || session == "" || !lb.servedOn(session, 1) {
			return
		}
		killed = true // the hook runs alone (balancer.gate)
		replicas[1].cmd.Process.Signal(syscall.SIGKILL)
		waitFor(t, "the killed replica's port to close", func() bool {
			c, err := net.Dial("tcp", strings.TrimPrefix(replicas[1].base, "http://"))
			if err == nil {
				c.Close()
			}
			return err != nil
		})
	}
	remote := agent.NewRemote("http://balancer", agent.RemoteOptions{HTTPClient: &http.Client{Transport: lb}, Token: "fleet-secret-token", Collections: lt.colls})
	res, err := eval.Run(context.Background(), eval.Config{Tasks: lt.tasks, Collections: lt.byName, Env: remote, Agent: agent.Oracle{}, Concurrency: 3, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	completed, scored := 0, 0
	for _, e := range res.Episodes {
		if !e.Score.HasAnswer {
			continue
		}
		scored++
		if e.Score.Completed {
			completed++
		} else {
			t.Errorf("task %s did not reach its gold answer: %s (error %q)", e.TaskID, e.Score.AnswerError, e.Outcome.Trajectory.Error)
		}
	}
	if scored < 10 || completed != scored {
		t.Fatalf("%d of %d tasks with gold answers completed", completed, scored)
	}
	if !killed {
		t.Fatalf("replica 1 was never killed: of the run's %d requests, none from request %d on was a tool call of a session replica 1 had served", lb.n, killedAt)
	}
	// The calls were spread, and sessions crossed the kill: some session
	// had calls on the killed replica before and on the others after.
	perReplica := make([]int, 3)
	crossed, spread := 0, 0
	for _, seq := range lb.served {
		seen := map[int]bool{}
		for i, r := range seq {
			perReplica[r]++
			seen[r] = true
			if r == 1 && i+1 < len(seq) && seq[len(seq)-1] != 1 {
				crossed++
			}
		}
		if len(seen) > 1 {
			spread++
		}
	}
	t.Logf("tool calls per replica %v; %d of %d sessions on more than one replica, %d crossed the kill at request %d of %d", perReplica, spread, len(lb.served), crossed, killedAt, lb.n)
	if spread < len(lb.served)/2 || perReplica[0] == 0 || perReplica[1] == 0 || perReplica[2] == 0 {
		t.Fatalf("calls per replica %v, %d of %d sessions on more than one replica", perReplica, spread, len(lb.served))
	}
	if crossed == 0 {
		t.Fatal("no session had calls on the killed replica and then on another")
	}
}

// taskSet are the tasks of collection folders and their collections.
type taskSet struct {
	tasks  []*toolenv.Task
	colls  []*toolenv.Collection
	byName map[string]*toolenv.Collection
}

func loadTasksOnlyForTest(dirs []string) (*taskSet, error) {
	ts := &taskSet{byName: map[string]*toolenv.Collection{}}
	for _, d := range dirs {
		c, err := toolenv.ReadCollection(d)
		if err != nil {
			return nil, err
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(d, toolenv.TasksFile))
		if err != nil {
			return nil, err
		}
		for _, task := range tasks {
			if task.Collection == "" {
				task.Collection = c.Name
			}
		}
		ts.tasks = append(ts.tasks, tasks...)
		ts.colls = append(ts.colls, c)
		ts.byName[c.Name] = c
	}
	if len(ts.tasks) == 0 {
		return nil, fmt.Errorf("no tasks in %v", dirs)
	}
	return ts, nil
}

// worker is a toolenv eval process of a queued run.
type evalWorker struct {
	cmd    *exec.Cmd
	out    string
	stderr *bytes.Buffer
	mu     *sync.Mutex
	done   chan error
}

func startEvalWorker(t *testing.T, args ...string) *evalWorker {
	t.Helper()
	w := &evalWorker{out: t.TempDir(), stderr: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan error, 1)}
	w.cmd = exec.Command(os.Args[0], append([]string{"eval", "--out", w.out, "--log-level", "warn"}, args...)...)
	w.cmd.Env = append(os.Environ(), "TOOLENV_RUN_MAIN=1")
	w.cmd.Stderr = lockedWriter{w.mu, w.stderr}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
	})
	return w
}

func (w *evalWorker) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// TestEvalQueueWorkerKilledMidEpisode (issue 11 item 3): three toolenv
// eval processes pull one run's episodes from PostgreSQL; one is killed
// with SIGKILL while it runs episodes. Those episodes are reclaimed once
// each after their lease and run by the others; every episode is
// finished exactly once and reaches its gold answer; toolenv eval report
// reads the whole run from the store.
func TestEvalQueueWorkerKilledMidEpisode(t *testing.T) {
	t.Parallel() // waits on the lease and the child workers
	ctx := context.Background()
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	slot := generatedSlotSel(t)[0]
	lt, err := loadTasksOnlyForTest([]string{slot})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--tasks", slot, "--agent", "oracle", "--store", ":memory:", "--concurrency", "2",
		"--queue", dsn, "--run-name", "fleet-run", "--queue-lease", "2s",
		"--faults", `{"rules": [{"latency": {"fixed": "120ms"}}]}`}
	var workers []*evalWorker
	for range 3 {
		workers = append(workers, startEvalWorker(t, args...))
	}
	st, err := store.Open(ctx, dsn, store.Options{Migrations: queue.Migrations})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.SQL().Read
	victim := workers[1]
	name := fmt.Sprintf("%%/%d", victim.cmd.Process.Pid)
	var held []string
	waitFor(t, "the victim to hold episodes", func() bool {
		rows, err := db.QueryContext(ctx, `SELECT task FROM eval_episodes WHERE state = 'running' AND worker LIKE $1`, name)
		if err != nil {
			return false
		}
		defer rows.Close()
		held = held[:0]
		for rows.Next() {
			var task []byte
			rows.Scan(&task)
			held = append(held, string(task))
		}
		if len(held) == 0 {
			return false
		}
		victim.cmd.Process.Signal(syscall.SIGKILL) // in the middle of its episodes
		return true
	})
	<-victim.done
	for i, w := range workers {
		if w == victim {
			continue
		}
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("worker %d: %v\n%s", i, err, w.log())
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("worker %d did not finish:\n%s", i, w.log())
		}
	}
	snap, err := queue.Read(ctx, st, "fleet-run")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range snap.Episodes {
		seen[e.TaskID]++
		if e.Score.HasAnswer && !e.Score.Completed {
			t.Errorf("task %s: %s", e.TaskID, e.Score.AnswerError)
		}
	}
	if len(seen) != len(lt.tasks) || snap.Status.Done != len(lt.tasks) {
		t.Fatalf("%d distinct episodes finished, status %+v, %d tasks", len(seen), snap.Status, len(lt.tasks))
	}
	// The killed worker's episodes were claimed again once each, and no
	// other episode was: at most two, as it ran two at a time.
	rows, err := db.QueryContext(ctx, `SELECT task, attempts, reclaims FROM eval_episodes WHERE run = 'fleet-run' AND reclaims > 0`)
	if err != nil {
		t.Fatal(err)
	}
	reclaimed := map[string]bool{}
	for rows.Next() {
		var (
			task               []byte
			attempts, reclaims int
		)
		if err := rows.Scan(&task, &attempts, &reclaims); err != nil {
			t.Fatal(err)
		}
		if reclaims != 1 || attempts != 2 {
			t.Errorf("task %s: %d attempts, %d reclaims; want reclaimed once", task, attempts, reclaims)
		}
		reclaimed[string(task)] = true
	}
	rows.Close()
	for _, task := range held {
		if !reclaimed[task] {
			t.Errorf("task %s, held by the killed worker, was not reclaimed", task)
		}
	}
	if len(reclaimed) > 2 { // it ran two at a time (it may have claimed one more between the look and the kill)
		t.Errorf("reclaimed %v; the killed worker held %v", reclaimed, held)
	}
	// The reports of the whole run, from the store.
	out := t.TempDir()
	code, stdout, stderr := run(t, ctx, "eval", "report", "--queue", dsn, "--run-name", "fleet-run", out)
	if code != 0 {
		t.Fatalf("eval report --queue: %s", stderr)
	}
	s := readSummary(t, out)
	if s.Episodes != len(lt.tasks) {
		t.Fatalf("the report counts %d episodes, want %d:\n%s", s.Episodes, len(lt.tasks), stdout)
	}
	code, stdout, _ = run(t, ctx, "eval", "report", "--queue", dsn)
	if code != 0 || !strings.Contains(stdout, "fleet-run") {
		t.Fatalf("listing the runs: %s", stdout)
	}
}
