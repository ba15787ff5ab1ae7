package episode_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/internal/pgtest"
)

// stock reads green tea's stock in episode id's world through the shop's
// read tool, as the agent would.
func stock(t *testing.T, eps *episode.Env, id string) float64 {
	t.Helper()
	r, err := eps.Step(context.Background(), "p", id, &episode.Action{Type: episode.ActionCallTool,
		Calls: []episode.Call{{Name: "find_product_by_name", Args: map[string]any{"name": "Green tea"}}}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Observation.Result
	if res == nil || res.Status != toolenv.StatusOK {
		t.Fatalf("reading green tea: %+v", res)
	}
	var body struct {
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}
	if err := json.Unmarshal(res.Data, &body); err != nil || len(body.Rows) != 1 {
		t.Fatalf("green tea reads %s (%v)", res.Data, err)
	}
	for i, c := range body.Columns {
		if c == "stock" {
			n, _ := body.Rows[0][i].(float64)
			return n
		}
	}
	t.Fatalf("green tea's row has no stock: %s", res.Data)
	return 0
}

// cutWrite plays demo-shop's shop-restock on the replicas (step i on
// at(i)): a step that writes green tea's stock and is cut after its
// write (its context cancelled, as when its client goes or its timeout_s
// passes), a read, then the write again, uncut, and the final answer.
// The read after the cut must see the initial state's stock (0): the cut
// step's row is in no world. It returns the episode's id and its
// outcome.
func cutWrite(t *testing.T, at func(step int) *episode.Env) (string, *episode.Outcome) {
	t.Helper()
	ctx := context.Background()
	first, err := at(0).Reset(ctx, "p", &episode.ResetOptions{Collection: "demo-shop", TaskID: "shop-restock"})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	write := episode.Call{Name: "update_products", Args: map[string]any{"sku": "TEA-GRN", "stock": 40}}
	read := episode.Call{Name: "find_product_by_name", Args: map[string]any{"name": "Green tea"}}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cutter := at(1)
	episode.SetCallHook(cutter, func(n int) {
		if n == 1 { // the write ran and changed the world
			cancel()
		}
	})
	_, err = cutter.Step(cctx, "p", id, &episode.Action{Type: episode.ActionToolCalls, Calls: []episode.Call{write, read}})
	episode.SetCallHook(cutter, nil)
	if st := toolenv.StatusOf(err); st != toolenv.StatusCanceled {
		t.Fatalf("the cut step: %v (status %s), want canceled", err, st)
	}
	if got := stock(t, at(2), id); got != 0 {
		t.Fatalf("after the cut step, green tea's stock reads %g: the cut step's write stayed in the world (want 0, the initial state's)", got)
	}
	r, err := at(3).Step(ctx, "p", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{write}})
	if err != nil || r.Observation.Result.Status != toolenv.StatusOK {
		t.Fatalf("the write, uncut: %v %+v", err, r)
	}
	if got := stock(t, at(4), id); got != 40 {
		t.Fatalf("after the write, green tea's stock reads %g, want 40", got)
	}
	end, err := at(5).Step(ctx, "p", id, &episode.Action{Type: episode.ActionFinalAnswer})
	if err != nil || !end.Done {
		t.Fatalf("final answer: %v %+v", err, end)
	}
	rec, err := at(5).Record(ctx, "p", id)
	if err != nil {
		t.Fatal(err)
	}
	return id, rec.Outcome
}

// checkCutWrite checks the outcome of cutWrite's episode: the state
// check holds and the world changed exactly one row (the cut step's
// write was not applied twice, nor left a row of its own).
func checkCutWrite(t *testing.T, o *episode.Outcome) {
	t.Helper()
	if o == nil || o.State == nil {
		t.Fatalf("no state in the outcome: %+v", o)
	}
	if o.Success != 1 || o.State.Success != 1 || o.State.Passed != 1 {
		t.Fatalf("the restocked episode's state: success %g, %+v", o.Success, o.State)
	}
	if n := o.State.Changes.Rows(); n != 1 {
		t.Fatalf("the world changed %d rows, want 1 (green tea)", n)
	}
}

// TestCutWriteStepLeavesNoRow: a step that wrote a row and was cut
// (its context cancelled after the write) leaves neither its labels nor
// its rows in the episode's world: a later read in the episode sees the
// row as before the step, the episode's end state holds only the later,
// uncut write, and the session's log holds only the calls the record
// shows — in memory, with a SQLite store, and on two replicas sharing a
// PostgreSQL store taking turns (each rebuilding the world from the
// log).
func TestCutWriteStepLeavesNoRow(t *testing.T) {
	ctx := context.Background()
	t.Run("memory", func(t *testing.T) {
		env, err := environment.Open(ctx, &environment.Config{DemoShop: true})
		if err != nil {
			t.Fatal(err)
		}
		defer env.Close()
		eps, err := episode.New(ctx, env, episode.Options{Persist: "memory"})
		if err != nil {
			t.Fatal(err)
		}
		defer eps.Close()
		_, o := cutWrite(t, func(int) *episode.Env { return eps })
		checkCutWrite(t, o)
	})
	shop := func(t *testing.T, store string) *replica {
		env, err := environment.Open(ctx, &environment.Config{DemoShop: true, Store: store, Sessions: "store"})
		if err != nil {
			t.Fatal(err)
		}
		eps, err := episode.New(ctx, env, episode.Options{})
		if err != nil {
			env.Close()
			t.Fatal(err)
		}
		return &replica{env: env, eps: eps}
	}
	t.Run("sqlite", func(t *testing.T) {
		r := shop(t, filepath.Join(t.TempDir(), "store.db"))
		defer r.close()
		id, o := cutWrite(t, func(int) *episode.Env { return r.eps })
		checkCutWrite(t, o)
		logged := sessionLog(t, r.env, id)
		if strings.Count(logged, `"op":"update_rows"`) != 1 {
			t.Fatalf("the session's log holds %d writes, want 1 (the uncut one): %s", strings.Count(logged, `"op":"update_rows"`), logged)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DB(t)
		a, b := shop(t, dsn), shop(t, dsn)
		defer a.close()
		defer b.close()
		id, o := cutWrite(t, func(step int) *episode.Env {
			if step%2 == 1 {
				return b.eps
			}
			return a.eps
		})
		checkCutWrite(t, o)
		if n := strings.Count(sessionLog(t, a.env, id), `"op":"update_rows"`); n != 1 {
			t.Fatalf("the session's log holds %d writes, want 1 (the uncut one)", n)
		}
	})
}

// sessionLog returns the store's task-session log entries of session
// id, joined.
func sessionLog(t *testing.T, env *environment.Environment, id string) string {
	t.Helper()
	db := env.Store.SQL()
	rows, err := db.Read.Query(db.Rebind(`SELECT data FROM task_session_calls WHERE session = ? ORDER BY seq`), []byte(id))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
