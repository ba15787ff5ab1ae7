package episode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
)

var (
	limitsOnce   sync.Once
	limitsCorpus map[string]string
	limitsDir    string // removed by TestMain
)

// corpus is a generated NL2SQL corpus built once for these tests.
func corpus(t *testing.T) map[string]string {
	t.Helper()
	limitsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "episode-corpus-")
		if err != nil {
			t.Fatal(err)
		}
		limitsDir = dir
		limitsCorpus = episodetest.Corpus(t, dir, 23)
	})
	if limitsCorpus == nil {
		t.Fatal("the corpus was not built")
	}
	return limitsCorpus
}

func demo(t *testing.T, opts episode.Options) *episode.Env {
	t.Helper()
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	eps, err := episode.New(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eps.Close() })
	return eps
}

var convert = &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{{Name: "convert_currency", Args: map[string]any{"amount": 100, "from": "EUR", "to": "USD"}}}}

// TestDoneFreesSlot: an episode that is done gives its slot back at
// once, without a close, and its state and record stay readable.
func TestDoneFreesSlot(t *testing.T) {
	ctx := context.Background()
	eps := demo(t, episode.Options{Max: 1})
	first, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	if _, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"}); !errors.Is(err, episode.ErrFull) {
		t.Fatalf("a second reset at the cap of 1: %v", err)
	}
	if _, err := eps.Step(ctx, "", id, convert); err != nil {
		t.Fatal(err)
	}
	r, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "108"}})
	if err != nil || !r.Done {
		t.Fatalf("final answer: %v %v", r, err)
	}
	if eps.Open() != 0 {
		t.Fatalf("%d episodes open after the only one is done", eps.Open())
	}
	if _, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"}); err != nil {
		t.Fatalf("a reset after the episode is done: %v", err)
	}
	st, err := eps.State(ctx, "", id)
	if err != nil || !st.Done || st.StepCount != 2 {
		t.Fatalf("the done episode's state: %+v %v", st, err)
	}
	rec, err := eps.Record(ctx, "", id)
	if err != nil || len(rec.Steps) != 2 || rec.Return != 1 {
		t.Fatalf("the done episode's record: %+v %v", rec, err)
	}
	if _, err := eps.Step(ctx, "", id, convert); !errors.Is(err, episode.ErrDone) {
		t.Fatalf("a step after done: %v", err)
	}
	if c := eps.Counts(); c.Done != 1 || c.RefusedFull != 1 || c.Open != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// TestClientShare: one client cannot take every slot: at its share of
// --max-episodes its resets are refused (naming the flag) while another
// client's go through, and an episode ending gives the client room again.
func TestClientShare(t *testing.T) {
	ctx := context.Background()
	eps := demo(t, episode.Options{Max: 4}) // a share of 2 each
	var mine []string
	for i := 0; i < 2; i++ {
		r, err := eps.Reset(ctx, "alice", &episode.ResetOptions{TaskID: "demo-3"})
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, r.Observation.EpisodeID)
	}
	_, err := eps.Reset(ctx, "alice", &episode.ResetOptions{TaskID: "demo-3"})
	if !errors.Is(err, episode.ErrFull) || !strings.Contains(err.Error(), episode.MaxPerClientFlag) || toolenv.StatusOf(err) != toolenv.StatusUnavailable {
		t.Fatalf("alice over her share: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := eps.Reset(ctx, "bob", &episode.ResetOptions{TaskID: "demo-3"}); err != nil {
			t.Fatalf("bob's reset %d while alice holds her share: %v", i, err)
		}
	}
	if err := eps.End(ctx, "alice", mine[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := eps.Reset(ctx, "alice", &episode.ResetOptions{TaskID: "demo-3"}); err != nil {
		t.Fatalf("alice after closing one: %v", err)
	}
	// The client key a front-end gives (an address) counts apart from
	// the principal.
	if _, err := eps.Reset(ctx, "alice", &episode.ResetOptions{TaskID: "demo-3", Client: "addr:10.0.0.9"}); !errors.Is(err, episode.ErrFull) {
		t.Fatalf("the server is full: %v", err)
	}
	if c := eps.Counts(); c.RefusedClient != 1 || c.RefusedFull != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// TestMaxStepsBounds: max_steps 0 is refused, as is one over the
// ceiling (naming its flag); left out it is the server's default.
func TestMaxStepsBounds(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{`{"max_steps": 0}`, `{"max_steps": -3}`} {
		o, err := episode.ParseResetOptions([]byte(raw))
		if err == nil {
			_, err = demo(t, episode.Options{}).Reset(ctx, "", o)
		}
		if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	eps := demo(t, episode.Options{MaxStepsCeiling: 100, MaxSteps: 7})
	o, _ := episode.ParseResetOptions([]byte(`{"task_id": "demo-3", "max_steps": 1000000000}`))
	if _, err := eps.Reset(ctx, "", o); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), episode.MaxStepsCeilingFlag) {
		t.Fatalf("max_steps over the ceiling: %v", err)
	}
	o, _ = episode.ParseResetOptions([]byte(`{"task_id": "demo-3"}`))
	r, err := eps.Reset(ctx, "", o)
	if err != nil || r.Observation.MaxSteps != 7 {
		t.Fatalf("the default: %v %v", r, err)
	}
	o, _ = episode.ParseResetOptions([]byte(`{"task_id": "demo-3", "max_steps": 1}`))
	r, err = eps.Reset(ctx, "", o)
	if err != nil {
		t.Fatal(err)
	}
	last, err := eps.Step(ctx, "", r.Observation.EpisodeID, convert)
	if err != nil || !last.Done || !last.Truncated {
		t.Fatalf("max_steps 1: %+v %v", last, err)
	}
}

// slotTask returns a SLOT task of the corpus with at least n gold calls.
func slotTask(t *testing.T, env *environment.Environment, n int) (*toolenv.Collection, *toolenv.Task) {
	t.Helper()
	coll := env.Registry.Collection("bird-slot")
	for _, task := range env.Tasks["bird-slot"] {
		if len(task.Gold) >= n {
			return coll, task
		}
	}
	t.Fatalf("no SLOT task with %d gold calls", n)
	return nil, nil
}

func gold(g toolenv.GoldCall) episode.Call {
	return episode.Call{Name: g.Name, Args: g.Args, Label: strings.Trim(g.Label, "$")}
}

// TestStepCaps: a step of more calls than --episode-max-calls is
// refused before anything runs; a step whose answers pass
// --episode-max-step-bytes is cut: it does not happen, and the session
// holds none of its results.
func TestStepCaps(t *testing.T) {
	ctx := context.Background()
	f := corpus(t)
	env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"]}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	coll, task := slotTask(t, env, 2)
	g := task.Gold[0]
	// The budget: one answer of the task's first call fits, two do not.
	probe, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := probe.Reset(ctx, "", &episode.ResetOptions{Collection: coll.Name, TaskID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	measured, err := probe.Step(ctx, "", first.Observation.EpisodeID, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(g)}})
	if err != nil || measured.Observation.Result.Status != toolenv.StatusOK {
		t.Fatalf("the task's first call: %v %v", measured, err)
	}
	probe.Close()
	size := len(measured.Observation.Result.Data)
	eps, err := episode.New(ctx, env, episode.Options{MaxCalls: 2, MaxStepBytes: size + size/2})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	first, err = eps.Reset(ctx, "", &episode.ResetOptions{Collection: coll.Name, TaskID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	many := &episode.Action{Type: episode.ActionToolCalls}
	for i := 0; i < 3; i++ {
		many.Calls = append(many.Calls, gold(g))
	}
	if _, err := eps.Step(ctx, "", id, many); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), episode.MaxCallsFlag) {
		t.Fatalf("3 calls over a cap of 2: %v", err)
	}
	// Two calls storing results: their answers pass the budget.
	big := &episode.Action{Type: episode.ActionToolCalls, Calls: []episode.Call{gold(g), gold(g)}}
	big.Calls[0].Label, big.Calls[1].Label = "CUT_A", "CUT_B"
	if _, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionToolCalls, Calls: []episode.Call{big.Calls[0]}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eps.Step(ctx, "", id, big); toolenv.StatusOf(err) != toolenv.StatusTooLarge || !strings.Contains(err.Error(), episode.MaxStepBytesFlag) {
		t.Fatalf("a step over the answer budget: %v", err)
	}
	st, _ := eps.State(ctx, "", id)
	if st.StepCount != 1 {
		t.Fatalf("the cut step was counted: %d steps", st.StepCount)
	}
	// CUT_B was stored by the cut step only: the session must not hold it.
	ref := gold(task.Gold[1])
	ref.Args = relabel(ref.Args, strings.Trim(g.Label, "$"), "CUT_B")
	r, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{ref}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Observation.Result.Status == toolenv.StatusOK {
		t.Fatalf("a call on the cut step's result CUT_B succeeded: %s", r.Observation.Result.Data)
	}
	if _, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Labels: []string{"CUT_B"}}}); err == nil {
		t.Fatal("a final answer named the cut step's label")
	}
}

// relabel rewrites the references to label from in args to label to.
func relabel(args map[string]any, from, to string) map[string]any {
	b, _ := json.Marshal(args)
	b = []byte(strings.ReplaceAll(string(b), "$"+from+"$", "$"+to+"$"))
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestInfraFailureMarks: a call the environment fails (here the
// simulator's model endpoint is down and the server answers errors
// rather than synthesize) is marked infra_failure on the call, the step,
// the info and the final reward, and in the record; a fault injected on
// purpose is marked injected and is the agent's.
func TestInfraFailureMarks(t *testing.T) {
	ctx := context.Background()
	down := httptest.NewServer(nil)
	url := down.URL + "/v1"
	down.Close() // nothing listens there any more
	env, err := environment.Open(ctx, &environment.Config{Simulator: environment.SimulatorConfig{URL: url, Model: "m", OnFailure: "error", Budget: 200 * time.Millisecond},
		Breakers: environment.BreakerConfig{Failures: 1}}) // fail fast after the first
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	first, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: "demo-3"})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Observation.EpisodeID
	r, err := eps.Step(ctx, "", id, convert)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Observation.Result
	if res.Status == toolenv.StatusOK || res.InfraFailure == "" || res.Injected || r.Info.InfraFailure != res.InfraFailure || r.Info.InfraFailures != 1 {
		t.Fatalf("a call with the model endpoint down: result %+v, info %+v", res, r.Info)
	}
	last, err := eps.Step(ctx, "", id, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "no idea"}})
	if err != nil {
		t.Fatal(err)
	}
	if last.Info.InfraFailure != "" || last.Observation.Outcome.InfraFailure != res.InfraFailure || last.Observation.Outcome.InfraFailures != 1 {
		t.Fatalf("the final step: info %+v outcome %+v", last.Info, last.Observation.Outcome)
	}
	rec, err := eps.Record(ctx, "", id)
	if err != nil || rec.InfraFailures != 1 || rec.Steps[0].InfraFailure == "" || rec.Steps[0].Calls[0].InfraFailure == "" || rec.Steps[1].InfraFailure != "" {
		t.Fatalf("record %+v %v", rec, err)
	}

	// Injected: the same call failed by the episode's own faults.
	eps2 := demo(t, episode.Options{})
	o, err := episode.ParseResetOptions([]byte(`{"task_id": "demo-3", "faults": {"rules": [{"tool": "*", "errors": {"rate": 1}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	first, err = eps2.Reset(ctx, "", o)
	if err != nil {
		t.Fatal(err)
	}
	r, err = eps2.Step(ctx, "", first.Observation.EpisodeID, convert)
	if err != nil {
		t.Fatal(err)
	}
	res = r.Observation.Result
	if res.Status == toolenv.StatusOK || !res.Injected || res.InfraFailure != "" || r.Info.InfraFailure != "" || r.Info.InfraFailures != 0 {
		t.Fatalf("an injected fault: result %+v, info %+v", res, r.Info)
	}
}

// TestMetricsCountEpisodes: /metrics counts the open episodes, those
// ended (by how) and the resets refused (by why).
func TestMetricsCountEpisodes(t *testing.T) {
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	var ids []string
	for i := 0; i < 3; i++ {
		r, err := eps.Reset(ctx, fmt.Sprint("client-", i), &episode.ResetOptions{TaskID: "demo-3"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Observation.EpisodeID)
	}
	if _, err := eps.Reset(ctx, "client-9", &episode.ResetOptions{TaskID: "demo-3"}); !errors.Is(err, episode.ErrFull) {
		t.Fatal(err)
	}
	if _, err := eps.Step(ctx, "client-0", ids[0], &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "?"}}); err != nil {
		t.Fatal(err)
	}
	if err := eps.End(ctx, "client-1", ids[1]); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(env.Metrics.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"toolenv_episodes_open 1",
		`toolenv_episodes_finished_total{how="done"} 1`,
		`toolenv_episodes_finished_total{how="closed"} 1`,
		`toolenv_episodes_finished_total{how="expired"} 0`,
		`toolenv_episodes_refused_total{reason="full"} 1`,
		`toolenv_episodes_refused_total{reason="client_share"} 0`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestExportFromAnyStore: episodes a server kept in memory are written to
// its store when they end, so that an export from that store (without
// --sessions store) has them; an export given only some collections skips
// the episodes of the others and says so.
func TestExportFromAnyStore(t *testing.T) {
	ctx := context.Background()
	f := corpus(t)
	store := filepath.Join(t.TempDir(), "store.db")
	env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"], f["sel"]}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if eps.Persistent() {
		t.Fatal("the default server keeps its episodes in the store: the test needs them in memory")
	}
	played := map[string]int{}
	for _, name := range []string{"bird-slot", "bird-sel"} {
		for _, task := range env.Tasks[name][:3] {
			r, err := eps.Reset(ctx, "p", &episode.ResetOptions{Collection: name, TaskID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eps.Step(ctx, "p", r.Observation.EpisodeID, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(task.Gold[0])}}); err != nil {
				t.Fatal(err)
			}
			if _, err := eps.Step(ctx, "p", r.Observation.EpisodeID, &episode.Action{Type: episode.ActionFinalAnswer}); err != nil {
				t.Fatal(err)
			}
			played[name]++
		}
	}
	open, err := eps.Reset(ctx, "p", &episode.ResetOptions{Collection: "bird-slot"}) // open: not exported
	if err != nil || open == nil {
		t.Fatal(err)
	}
	eps.Close()
	env.Close()

	only, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"]}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	exp, err := episode.New(ctx, only, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Close()
	var out strings.Builder
	rep, err := exp.Export(ctx, &out, episode.ExportJSONL)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != played["bird-slot"] || rep.Skipped["bird-sel"] != played["bird-sel"] || len(rep.Skipped) != 1 {
		t.Fatalf("export: %+v, want %d written and %d of bird-sel skipped", rep, played["bird-slot"], played["bird-sel"])
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines {
		var rec episode.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Collection != "bird-slot" || !rec.Done || len(rec.Steps) != 2 {
			t.Fatalf("exported %q: %v", l, err)
		}
	}
	if !strings.Contains(episode.SkippedNote(rep), "bird-sel: 3") {
		t.Fatalf("the note %q", episode.SkippedNote(rep))
	}
}

// TestRescore: the episodes of a store rewarded anew under another
// definition — costs, penalties and a success measure read from what the
// records hold — written as new records; a task whose success reads its
// world's end state is marked, not recomputed.
func TestRescore(t *testing.T) {
	ctx := context.Background()
	f := corpus(t)
	store := filepath.Join(t.TempDir(), "store.db")
	env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"]}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	tasks := env.Tasks["bird-slot"]
	stateful := tasks[1]
	stateful.Checks = []toolenv.StateCheck{{Name: "a row was written", SQL: "SELECT 1", Rows: json.RawMessage(`[[1]]`)}}
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{} // by episode: the rewards under the new definition
	for _, task := range tasks[:4] {
		opts := &episode.ResetOptions{Collection: "bird-slot", TaskID: task.ID}
		if task == stateful {
			// A stateful task's default success is its state (its
			// checks and its answer), and this collection keeps no world
			// for its SQL check: the episode is rewarded on its answer.
			opts.Reward = episode.Reward{Success: episode.Completion}
		}
		r, err := eps.Reset(ctx, "p", opts)
		if err != nil {
			t.Fatal(err)
		}
		id := r.Observation.EpisodeID
		bad := gold(task.Gold[0])
		bad.Args = map[string]any{"no_such_argument": 1}
		var rs []float64
		s, err := eps.Step(ctx, "p", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{bad}})
		if err != nil || s.Observation.Result.Status != toolenv.StatusInvalidArguments {
			t.Fatalf("a call with a wrong argument: %v %v", s, err)
		}
		rs = append(rs, -0.25-0.5)
		for _, g := range task.Gold {
			if _, err := eps.Step(ctx, "p", id, &episode.Action{Type: episode.ActionCallTool, Calls: []episode.Call{gold(g)}}); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, -0.25)
		}
		last, err := eps.Step(ctx, "p", id, &episode.Action{Type: episode.ActionFinalAnswer})
		if err != nil || *last.Reward != 1 {
			t.Fatalf("the oracle's final answer: %v %v", last, err)
		}
		rs = append(rs, -0.25+last.Observation.Outcome.Positional.Intent.F1)
		want[id] = rs
	}
	eps.Close()

	again, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	def, err := episode.ParseReward([]byte(`{"success": "intent_f1", "step_cost": 0.25, "penalty": {"invalid_arguments": 0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep, err := again.Rescore(ctx, &out, def, episode.ExportJSONL)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 4 || rep.NeedsState != 0 {
		t.Fatalf("rescore: %+v", rep)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec episode.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		w := want[rec.RescoredFrom]
		if w == nil || rec.SuccessKind != episode.IntentF1 || rec.Reward.StepCost != 0.25 || rec.EpisodeID == rec.RescoredFrom {
			t.Fatalf("a rescored record: %s", line)
		}
		if !equalFloats(rewards(&rec), w) {
			t.Fatalf("%s: rewards %v, want %v", rec.TaskID, rewards(&rec), w)
		}
	}
	// completion reads the end state of a stateful task's world.
	out.Reset()
	rep, err = again.Rescore(ctx, &out, episode.Reward{Success: episode.Completion}, episode.ExportJSONL)
	if err != nil || rep.Written != 4 || rep.NeedsState != 1 {
		t.Fatalf("rescore with completion: %+v %v", rep, err)
	}
	marked := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec episode.Record
		_ = json.Unmarshal([]byte(line), &rec)
		if rec.Outcome.NeedsState != "" {
			marked++
			if rec.TaskID != stateful.ID {
				t.Fatalf("task %s marked needs_state", rec.TaskID)
			}
		}
	}
	if marked != 1 {
		t.Fatalf("%d records marked needs_state, want 1", marked)
	}
	if _, err := episode.ParseReward([]byte(`{"sucess": "intent_f1"}`)); err == nil {
		t.Fatal("a misspelt reward key was accepted")
	}
}
