package episode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/internal/pgtest"
)

// imageCache is the test binary's own image cache (rodb.DiskCache): the
// BIRD builds and the environments opened over their collections index
// each database once per run, not once per build and per environment,
// and nothing is read from or left in the user's cache folder.
var imageCache *rodb.DiskCache

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolenv-episode-images-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(rodb.CacheEnv, dir)
	imageCache = &rodb.DiskCache{Dir: dir}
	pgtest.Main(m, func() {
		os.RemoveAll(dir)
		if limitsDir != "" {
			os.RemoveAll(limitsDir)
		}
	})
}

// replica is one server's environment and episodes over a shared store.
type replica struct {
	env *environment.Environment
	eps *episode.Env
}

func open(t *testing.T, store string, colls []string) *replica {
	t.Helper()
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Collections: colls, Store: store, Sessions: "store"})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		env.Close()
		t.Fatal(err)
	}
	if !eps.Persistent() {
		t.Fatal("episodes are not in the store")
	}
	return &replica{env: env, eps: eps}
}

func (r *replica) close() {
	r.eps.Close()
	r.env.Close()
}

// policy is what an agent does: the oracle's calls, each preceded by a
// call with a misspelt argument (an invalid call, penalised), retried
// while a fault fails it.
type policy struct {
	o       *episodetest.Oracle
	pending *toolenv.GoldCall
	bad     bool
	retries int
	done    bool
}

func (p *policy) next(t *testing.T, last *episode.StepResult) *episode.Action {
	if p.pending != nil && last != nil && last.Observation.Result != nil {
		res := last.Observation.Result
		switch {
		case p.bad: // the misspelt call failed: now the right one
			p.bad = false
			return callOf(*p.pending)
		case res.Status == toolenv.StatusOK:
			p.o.Observe(p.pending.Label, res.Data)
			p.pending = nil
		case p.retries < 8: // a fault: retry
			p.retries++
			return callOf(*p.pending)
		default:
			p.pending = nil
		}
	}
	g, ok, err := p.o.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		p.done = true
		return &episode.Action{Type: episode.ActionFinalAnswer}
	}
	p.pending, p.bad, p.retries = &g, true, 0
	wrong := map[string]any{"no_such_argument": 1}
	for k, v := range g.Args {
		wrong[k] = v
	}
	return &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: g.Name, Args: wrong, Label: g.Label}}}
}

func callOf(g toolenv.GoldCall) *episode.Action {
	return &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: g.Name, Args: g.Args, Label: g.Label}}}
}

// canon is a step as compared across runs: the episode's id replaced.
func canon(t *testing.T, r *episode.StepResult) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), r.Observation.EpisodeID, "EPISODE")
}

// play runs one episode of task, taking each step on the replica
// at(step) returns, and returns the steps as compared.
func play(t *testing.T, at func(step int) *episode.Env, coll *toolenv.Collection, task *toolenv.Task, o episode.ResetOptions) []string {
	t.Helper()
	ctx := context.Background()
	o.Collection, o.TaskID = coll.Name, task.ID
	first, err := at(0).Reset(ctx, "", &o)
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	out := []string{canon(t, first)}
	p := &policy{o: episodetest.NewOracle(coll, task)}
	var last *episode.StepResult
	for i := 1; !p.done; i++ {
		a := p.next(t, last)
		last, err = at(i).Step(ctx, "", id, a)
		if err != nil {
			t.Fatalf("%s step %d: %v", task.ID, i, err)
		}
		out = append(out, canon(t, last))
	}
	if !last.Done {
		t.Fatalf("%s: not done after the final answer", task.ID)
	}
	rec, err := at(len(out)).Record(ctx, "", id)
	if err != nil || len(rec.Steps) != len(out)-1 || rec.Return != last.Info.Return {
		t.Fatalf("%s: record %+v %v", task.ID, rec, err)
	}
	return out
}

var replayOptions = []episode.ResetOptions{
	{},
	{Reward: episode.Reward{StepCost: 0.01, Penalty: map[string]float64{"invalid_arguments": 0.1, "*": 0.05}}},
	{Perturbation: "case_mix", Faults: json.RawMessage(`{"rules": [{"tool": "*", "errors": {"rate": 0.4}}, {"tool": "*", "rate_limit": {"per_second": 0.5, "burst": 1, "key": "global"}}]}`)},
}

func seeded(o episode.ResetOptions, seed int64) episode.ResetOptions {
	o.Seed = &seed
	return o
}

// TestReplayAcrossRestart: an episode half played, the server restarted
// on the same SQLite store, goes on where it was, and every observation
// and reward equals those of an uninterrupted run — with costs,
// penalties, a perturbation and faults.
func TestReplayAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	f := episodetest.Corpus(t, filepath.Join(dir, "corpus"), 17)
	colls := []string{f["slot"], f["rest"]}
	store := filepath.Join(dir, "store.db")
	for _, name := range []string{"bird-slot", "bird-rest"} {
		base := open(t, store, colls)
		coll := base.env.Registry.Collection(name)
		tasks := base.env.Tasks[name]
		for i, task := range tasks[:min(6, len(tasks))] {
			o := seeded(replayOptions[i%len(replayOptions)], int64(i))
			want := play(t, func(int) *episode.Env { return base.eps }, coll, task, o)
			if !strings.Contains(want[len(want)-1], `"done":true`) {
				t.Fatalf("%s: %s", task.ID, want[len(want)-1])
			}
			// The same episode with a restart half-way.
			cur := base
			half := len(want) / 2
			got := play(t, func(step int) *episode.Env {
				if step == half {
					cur.close()
					cur = open(t, store, colls)
					coll = cur.env.Registry.Collection(name)
				}
				return cur.eps
			}, coll, task, o)
			base = cur
			compare(t, task.ID, want, got, len(o.Faults) > 0)
			if !strings.Contains(got[len(got)-1], `"success":1`) {
				t.Fatalf("%s: the oracle's episode did not succeed: %s", task.ID, got[len(got)-1])
			}
		}
		base.close()
	}
}

// TestReplayAcrossReplicas: two replicas on one PostgreSQL store take an
// episode's steps in turn, and every observation and reward equals those
// of the episode on one replica.
func TestReplayAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	f := episodetest.Corpus(t, filepath.Join(dir, "corpus"), 19)
	colls := []string{f["slot"], f["sel"], f["rest"]}
	dsn := pgtest.DB(t)
	a, b := open(t, dsn, colls), open(t, dsn, colls)
	defer a.close()
	defer b.close()
	for _, name := range []string{"bird-slot", "bird-sel", "bird-rest"} {
		coll := a.env.Registry.Collection(name)
		tasks := a.env.Tasks[name]
		for i, task := range tasks[:min(5, len(tasks))] {
			o := seeded(replayOptions[i%len(replayOptions)], int64(100+i))
			want := play(t, func(int) *episode.Env { return a.eps }, coll, task, o)
			got := play(t, func(step int) *episode.Env {
				if step%2 == 1 {
					return b.eps
				}
				return a.eps
			}, coll, task, o)
			compare(t, task.ID, want, got, len(o.Faults) > 0)
			if !strings.Contains(got[len(got)-1], `"success":1`) {
				t.Fatalf("%s: the oracle's episode did not succeed: %s", task.ID, got[len(got)-1])
			}
		}
	}
}

func compare(t *testing.T, id string, want, got []string, faulty bool) {
	t.Helper()
	if all := strings.Join(want, "\n"); faulty && !strings.Contains(all, `"faults":[`) {
		t.Fatalf("%s: the episode with faults met none; the test checks nothing about them", id)
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d steps, want %d", id, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s step %d differs:\n got %s\nwant %s", id, i, got[i], want[i])
		}
	}
}
