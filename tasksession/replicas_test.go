package tasksession_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/tasksession"
)

// TestReplicas runs generated SLOT/SEL tasks through replicas that share
// only the store.
func TestReplicas(t *testing.T) {
	b := buildCorpus(t, t.TempDir())
	eachStore(t, func(t *testing.T, dsn string) {
		t.Run("round-robin", func(t *testing.T) { testRoundRobin(t, b, dsn) })
		t.Run("cold-replica", func(t *testing.T) { testColdReplica(t, b, dsn) })
		t.Run("racing-replicas", func(t *testing.T) { testRacingReplicas(t, b, dsn) })
	})
}

// testRoundRobin: every task, its calls spread over three replicas in
// turn, answers byte for byte what one in-memory backend answers, and
// reaches its gold answer.
func testRoundRobin(t *testing.T, b *built, dsn string) {
	ctx := context.Background()
	var logs []*tasksession.Sessions
	for i := 0; i < 3; i++ {
		logs = append(logs, openSessions(t, dsn, tasksession.Options{}))
	}
	tasks := 0
	for _, c := range b.colls {
		rr := &roundRobin{}
		for _, l := range logs {
			rr.replicas = append(rr.replicas, backend(t, c, l))
		}
		mem := backend(t, c, nil)
		for _, task := range b.tasks[c.Name] {
			session := fmt.Sprintf("rr-%s-%s", c.Name, task.ID)
			want, werr := sqltools.Replay(ctx, mem, c, task, "mem-"+session)
			got, gerr := sqltools.Replay(ctx, rr, c, task, session)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%s %s: in memory: %v; over replicas: %v", c.Name, task.ID, werr, gerr)
			}
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d steps over replicas, %d in memory", c.Name, task.ID, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i].Result.Body, want[i].Result.Body) || got[i].Result.Status != want[i].Result.Status {
					t.Fatalf("%s %s step %d (%s): over replicas %s %s\nin memory %s %s", c.Name, task.ID, i, want[i].Call.Name,
						got[i].Result.Status, got[i].Result.Body, want[i].Result.Status, want[i].Result.Body)
				}
			}
			if gerr != nil {
				continue // a task the backend refuses is refused alike
			}
			gold, ok, err := answer.Gold(task)
			if !ok || err != nil {
				continue
			}
			var results []answer.Labeled
			for _, st := range got {
				results = append(results, answer.Labeled{Label: st.Call.Label, OK: st.Result.OK(), Body: st.Result.Body})
			}
			tab, err := answer.FromResults(task, results)
			if err != nil {
				t.Fatalf("%s %s: %v", c.Name, task.ID, err)
			}
			if same, why := answer.Equal(gold, tab, answer.Options{Ordered: answer.Ordered(task)}); !same {
				t.Errorf("%s %s: over replicas the answer is not the gold answer: %s", c.Name, task.ID, why)
			}
			tasks++
		}
		for i, r := range rr.replicas {
			if st := r.(*sqltools.Backend).Stats(); st.Replayed == 0 {
				t.Errorf("%s replica %d replayed nothing: the calls were not spread (%+v)", c.Name, i, st)
			}
		}
	}
	if tasks < 10 {
		t.Fatalf("only %d tasks reached a gold answer", tasks)
	}
}

// testColdReplica: a replica that never saw a session rebuilds it from
// the log and answers its next call as the replica that made it would.
func testColdReplica(t *testing.T, b *built, dsn string) {
	ctx := context.Background()
	c := b.colls[0]
	var task *toolenv.Task
	for _, tk := range b.tasks[c.Name] {
		if len(tk.Gold) >= 2 && (task == nil || len(tk.Gold) > len(task.Gold)) {
			task = tk
		}
	}
	if task == nil {
		t.Fatal("no task with two gold calls")
	}
	warm := backend(t, c, openSessions(t, dsn, tasksession.Options{}))
	last := task.Gold[len(task.Gold)-1]
	short := *task
	short.Gold = task.Gold[:len(task.Gold)-1]
	if _, err := sqltools.Replay(ctx, warm, c, &short, "cold-1"); err != nil {
		t.Fatal(err)
	}
	// The same session id on another collection is another session (as
	// in memory): its calls are in the log, and replicas of the first
	// collection pass over them.
	other := b.colls[1]
	otherTask := b.tasks[other.Name][0]
	if _, err := sqltools.Replay(ctx, backend(t, other, openSessions(t, dsn, tasksession.Options{})), other, otherTask, "cold-1"); err != nil {
		t.Fatal(err)
	}
	tool := c.Tool(last.Name)
	want := warm.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: c, Args: sqltools.CallArgs(last, tool), Session: "cold-1"})
	// The last call, again under a fresh label, on a replica that never saw
	// the session.
	cold := backend(t, c, openSessions(t, dsn, tasksession.Options{}))
	args := sqltools.CallArgs(last, tool)
	got := cold.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: c, Args: args, Session: "cold-1"})
	if !got.OK() || !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("cold replica: %s %s %s\nwarm replica: %s", got.Status, got.Error, got.Body, want.Body)
	}
	inits, _ := sqltools.InitCalls(task)
	st := cold.Stats()
	if st.Restored != 1 || st.Replayed != len(inits)+len(task.Gold) {
		t.Fatalf("cold replica stats %+v, want 1 session restored from %d calls", st, len(inits)+len(task.Gold))
	}
	// A session never started is still one that does not exist.
	r := cold.Invoke(ctx, &toolenv.Call{Tool: tool, Collection: c, Args: args, Session: "never-started"})
	if r.Status != toolenv.StatusNotFound || r.Hint == "" {
		t.Fatalf("a session never started: %s %q hint %q", r.Status, r.Error, r.Hint)
	}
}

// testRacingReplicas: calls of one session sent at once to two replicas
// are all acknowledged or refused, and every acknowledged result is in
// the session as a third replica rebuilds it.
func testRacingReplicas(t *testing.T, b *built, dsn string) {
	ctx := context.Background()
	c := b.colls[0]
	task := b.tasks[c.Name][0]
	replicas := []*sqltools.Backend{
		backend(t, c, openSessions(t, dsn, tasksession.Options{})),
		backend(t, c, openSessions(t, dsn, tasksession.Options{})),
	}
	before, err := openSessions(t, dsn, tasksession.Options{}).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqltools.Replay(ctx, replicas[0], c, &toolenv.Task{ID: task.ID, Meta: task.Meta}, "race"); err != nil {
		t.Fatal(err)
	}
	agg := c.Tool("aggregate_data")
	if agg == nil {
		t.Skip("no aggregate_data tool") // every SLOT collection has it
	}
	const n = 24
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string][]byte{}
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			label := fmt.Sprintf("n%d", i)
			args := map[string]any{"data_source": "$" + sqltools.DefaultStartLabel + "$", "aggregation_type": "count", sqltools.LabelArg: label}
			r := replicas[i%2].Invoke(ctx, &toolenv.Call{Tool: agg, Collection: c, Args: args, Session: "race"})
			if r.OK() {
				mu.Lock()
				acked[label] = r.Body
				mu.Unlock()
			} else if r.Status != toolenv.StatusUnavailable {
				t.Errorf("call %d: %s %s", i, r.Status, r.Error)
			}
		}(i)
	}
	wg.Wait()
	if len(acked) < n/2 {
		t.Fatalf("only %d of %d racing calls were acknowledged", len(acked), n)
	}
	// Exactly the acknowledged calls were logged: a replica that never
	// saw the session replays the init calls and them, and then holds
	// every acknowledged label (reusing one replaces it: the label count
	// does not grow).
	inits, _ := sqltools.InitCalls(task)
	sessions := openSessions(t, dsn, tasksession.Options{})
	third := backend(t, c, sessions)
	for label, body := range acked {
		r := third.Invoke(ctx, &toolenv.Call{Tool: agg, Collection: c, Args: map[string]any{
			"data_source": "$" + sqltools.DefaultStartLabel + "$", "aggregation_type": "count", sqltools.LabelArg: label}, Session: "race"})
		if !r.OK() || !bytes.Equal(r.Body, body) {
			t.Fatalf("label %s on a third replica: %s %s %s, acknowledged %s", label, r.Status, r.Error, r.Body, body)
		}
	}
	if st := third.Stats(); st.Replayed != len(inits)+len(acked) {
		t.Fatalf("the third replica replayed %d calls; %d init and %d acknowledged calls were made", st.Replayed, len(inits), len(acked))
	}
	after, err := sessions.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after.Calls-before.Calls, int64(len(inits)+2*len(acked)); got != want {
		t.Fatalf("the session logged %d calls, want %d", got, want)
	}
}
