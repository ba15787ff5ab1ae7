package episode_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/internal/pgtest"
)

// rewards returns the rewards of a record's steps.
func rewards(rec *episode.Record) []float64 {
	var out []float64
	for _, s := range rec.Steps {
		out = append(out, s.Reward)
	}
	return out
}

// cutAndGoOn plays task on the replicas (step i on at(i)): its first two
// gold calls in one step, cut after the first call (its context
// cancelled, as when its client goes), then — as an agent that did not
// see the cut step's results — the gold calls from the second on, and
// the final answer. It returns the episode's id and the status of the
// first call after the cut, which names the cut step's first label.
func cutAndGoOn(t *testing.T, at func(step int) *episode.Env, coll *toolenv.Collection, task *toolenv.Task) (string, toolenv.Status) {
	t.Helper()
	ctx := context.Background()
	first, err := at(0).Reset(ctx, "p", &episode.ResetOptions{Collection: coll.Name, TaskID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	cctx, cancel := context.WithCancel(ctx)
	cutter := at(1)
	episode.SetCallHook(cutter, func(n int) {
		if n == 1 {
			cancel()
		}
	})
	_, err = cutter.Step(cctx, "p", id, &episode.Action{Type: episode.ActionToolCalls, Calls: []episode.Call{gold(task.Gold[0]), gold(task.Gold[1])}})
	episode.SetCallHook(cutter, nil)
	if st := toolenv.StatusOf(err); st != toolenv.StatusCanceled {
		t.Fatalf("the cut step: %v (status %s), want canceled", err, st)
	}
	var after toolenv.Status
	step := 2
	for i, g := range task.Gold[1:] {
		r, err := at(step).Step(ctx, "p", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(g)}})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if i == 0 {
			after = r.Observation.Result.Status
		}
		step++
	}
	if _, err := at(step).Step(ctx, "p", id, &episode.Action{Type: episode.ActionFinalAnswer}); err != nil {
		t.Fatal(err)
	}
	return id, after
}

// checkReplay replays the episode's record in a fresh episode and
// compares the rewards step for step.
func checkReplay(t *testing.T, eps *episode.Env, id string) *episode.Record {
	t.Helper()
	ctx := context.Background()
	rec, err := eps.Record(ctx, "p", id)
	if err != nil {
		t.Fatal(err)
	}
	again, err := eps.Replay(ctx, "p", rec)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := rewards(again), rewards(rec); !equalFloats(g, w) || again.Return != rec.Return {
		t.Fatalf("the record's rewards %v (return %g); replayed: %v (return %g)", w, rec.Return, g, again.Return)
	}
	return rec
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sessionCalls counts the calls the store's task-session log holds for
// session id.
func sessionCalls(t *testing.T, env *environment.Environment, id string) int {
	t.Helper()
	db := env.Store.SQL()
	var n int
	if err := db.Read.QueryRow(db.Rebind(`SELECT count(*) FROM task_session_calls WHERE session = ?`), []byte(id)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// okCalls counts a record's successful calls, plus the task's hidden
// initialisation call.
func okCalls(rec *episode.Record) int {
	n := 1
	for _, s := range rec.Steps {
		for _, c := range s.Calls {
			if c.Status == toolenv.StatusOK {
				n++
			}
		}
	}
	return n
}

// TestCutStepDoesNotHappen: a step cut between its calls leaves no call
// in the episode's session — so the next call, naming the cut step's
// result, fails as the record says it must — and the record replays to
// its rewards exactly: in memory, with the episodes in a SQLite store
// (where the session's log holds exactly the calls the record shows),
// and on two replicas sharing a PostgreSQL store.
func TestCutStepDoesNotHappen(t *testing.T) {
	f := corpus(t)
	ctx := context.Background()
	t.Run("memory", func(t *testing.T) {
		env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"]}})
		if err != nil {
			t.Fatal(err)
		}
		defer env.Close()
		eps, err := episode.New(ctx, env, episode.Options{Persist: "memory"})
		if err != nil {
			t.Fatal(err)
		}
		defer eps.Close()
		coll, task := slotTask(t, env, 3)
		id, after := cutAndGoOn(t, func(int) *episode.Env { return eps }, coll, task)
		if after == toolenv.StatusOK {
			t.Fatal("the call after the cut step used a result of the cut step")
		}
		checkReplay(t, eps, id)
	})
	t.Run("sqlite", func(t *testing.T) {
		r := open(t, filepath.Join(t.TempDir(), "store.db"), []string{f["slot"]})
		defer r.close()
		coll, task := slotTask(t, r.env, 3)
		id, after := cutAndGoOn(t, func(int) *episode.Env { return r.eps }, coll, task)
		if after == toolenv.StatusOK {
			t.Fatal("the call after the cut step used a result of the cut step")
		}
		rec := checkReplay(t, r.eps, id)
		if got, want := sessionCalls(t, r.env, id), okCalls(rec); got != want {
			t.Fatalf("the session's log holds %d calls; the record shows %d", got, want)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DB(t)
		a, b := open(t, dsn, []string{f["slot"]}), open(t, dsn, []string{f["slot"]})
		defer a.close()
		defer b.close()
		coll, task := slotTask(t, a.env, 3)
		id, after := cutAndGoOn(t, func(step int) *episode.Env {
			if step%2 == 1 {
				return b.eps
			}
			return a.eps
		}, coll, task)
		if after == toolenv.StatusOK {
			t.Fatal("the call after the cut step used a result of the cut step")
		}
		rec := checkReplay(t, a.eps, id)
		if got, want := sessionCalls(t, a.env, id), okCalls(rec); got != want {
			t.Fatalf("the session's log holds %d calls; the record shows %d", got, want)
		}
	})
}

// TestResentRequestID: a step sent again with its request_id is not
// taken again: it gets the first answer, even after the episode ended;
// the same id with another action is refused.
func TestResentRequestID(t *testing.T) {
	ctx := context.Background()
	f := corpus(t)
	for _, persist := range []string{"memory", "store"} {
		t.Run(persist, func(t *testing.T) {
			r := open(t, filepath.Join(t.TempDir(), "store.db"), []string{f["slot"]})
			defer r.close()
			eps := r.eps
			if persist == "memory" {
				var err error
				if eps, err = episode.New(ctx, r.env, episode.Options{Persist: "memory"}); err != nil {
					t.Fatal(err)
				}
				defer eps.Close()
			}
			coll, task := slotTask(t, r.env, 2)
			first, err := eps.Reset(ctx, "p", &episode.ResetOptions{Collection: coll.Name, TaskID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			id := first.Observation.EpisodeID
			step := func(a *episode.Action, rid string) string {
				t.Helper()
				cp := *a
				cp.RequestID = rid
				sr, err := eps.Step(ctx, "p", id, &cp)
				if err != nil {
					t.Fatalf("request %s: %v", rid, err)
				}
				b, _ := json.Marshal(sr)
				return string(b)
			}
			call := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(task.Gold[0])}}
			a1 := step(call, "r1")
			if again := step(call, "r1"); again != a1 {
				t.Fatalf("resent:\n got %s\nwant %s", again, a1)
			}
			other := &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(task.Gold[1])}}
			if _, err := eps.Step(ctx, "p", id, &episode.Action{Type: other.Type, Calls: other.Calls, RequestID: "r1"}); !errors.Is(err, episode.ErrConflict) {
				t.Fatalf("request_id r1 with another action: %v", err)
			}
			st, _ := eps.State(ctx, "p", id)
			if st.StepCount != 1 {
				t.Fatalf("%d steps after one step sent twice", st.StepCount)
			}
			for i, g := range task.Gold[1:] {
				step(&episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(g)}}, "g"+strings.Repeat("x", i))
			}
			final := &episode.Action{Type: episode.ActionFinalAnswer}
			last := step(final, "final")
			if !strings.Contains(last, `"done":true`) {
				t.Fatalf("final %s", last)
			}
			if again := step(final, "final"); again != last {
				t.Fatalf("the final step resent after the end:\n got %s\nwant %s", again, last)
			}
			if again := step(call, "r1"); again != a1 {
				t.Fatalf("the first step resent after the end:\n got %s\nwant %s", again, a1)
			}
		})
	}
}
