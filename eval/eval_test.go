package eval_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/report"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/store"
)

func config(f *fixture, a agent.Agent, out string) eval.Config {
	return eval.Config{
		Tasks: f.tasks, Collections: map[string]*toolenv.Collection{f.coll.Name: f.coll}, Env: f.env, Agent: a,
		ModelName: "test", Runs: 2, Concurrency: 3, Seed: 42, Out: out,
	}
}

func TestOracleCompletesEveryTask(t *testing.T) {
	f := newFixture(t)
	out := t.TempDir()
	res, err := eval.Run(context.Background(), config(f, agent.Oracle{}, out))
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != len(f.tasks)*2 || len(res.Episodes) != len(f.tasks)*2 {
		t.Fatalf("ran %d, %d episodes", res.Ran, len(res.Episodes))
	}
	for _, e := range res.Episodes {
		if !e.Score.Completed {
			t.Errorf("oracle did not complete %s: %s", e.TaskID, e.Score.AnswerError)
		}
	}
	s, err := report.Write(out, &eval.RunInfo{Agent: "oracle", Model: "test", Runs: 2, TaskCount: 3, Env: "in-process", Prompts: agent.Prompts()}, res.Episodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Groups[0]
	if g.Completion.Mean != 1 || g.FullMatch.Mean != 1 || g.Intent.F1.Mean != 1 || g.SetMetrics.F1.Mean != 1 || g.NestfulSlot.F1.Mean != 1 {
		t.Errorf("oracle group: %+v", g)
	}
	for _, name := range report.Files {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, want := range []string{"<svg", "Completion", "hero-2", "filter_data(", "Gold sequence"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, banned := range []string{"<script src", "<link", "src=\"http", "href=\"http", "@import"} {
		if strings.Contains(string(page), banned) {
			t.Errorf("report.html loads something from outside: %q", banned)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| bird-slot | oracle | test | 3 | 2 | 6 | 1.00 ± 0.00 (n=6) |") {
		t.Errorf("report.md:\n%s", md)
	}
}

// TestInterruptAndResume cancels a run midway: the finished episodes are
// in the journal, a line cut by the crash is skipped, and --resume runs
// only what is missing.
func TestInterruptAndResume(t *testing.T) {
	f := newFixture(t)
	// Each episode is one model call. The fourth call is answered only
	// once the run is interrupted (after the third episode is journaled),
	// so the interrupt lands mid-run however the machine schedules the
	// run's goroutines.
	var calls atomic.Int64
	interrupted := make(chan struct{})
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if calls.Add(1) > 3 {
			select {
			case <-interrupted:
			case <-time.After(time.Minute): // a safety net, not a pace: the journal check then fails
			}
		}
		return llmtest.Reply{Content: "Thought: I know.\nFinal Answer: 42", Delay: 30 * time.Millisecond}
	})
	defer srv.Close()
	out := t.TempDir()
	cfg := config(f, agent.ReAct{}, out)
	cfg.Runs, cfg.Concurrency = 4, 1
	cfg.Model = llm.New(srv.URL(), llm.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int64
	cfg.Progress = func(n, total int, e *eval.Episode) {
		if done.Add(1) == 3 {
			cancel()
			close(interrupted)
		}
	}
	res, err := eval.Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("err %v interrupted %v", err, res.Interrupted)
	}
	journal := filepath.Join(out, "episodes.jsonl")
	lines := countLines(t, journal)
	if lines != 3 { // the three before the interrupt; the fourth ended by it is not journaled
		t.Fatalf("%d episodes journaled after the interrupt", lines)
	}
	// A crash in the middle of a write leaves half a line.
	fh, _ := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`{"task_id": "hero-1", "run": 3, "outc`)
	fh.Close()

	if _, err := eval.Run(context.Background(), cfg); !errors.Is(err, eval.ErrOutExists) {
		t.Fatalf("a second run into the same folder: %v", err)
	}
	cfg.Resume = true
	cfg.Progress = nil
	res, err = eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Episodes) != 12 || res.Skipped != lines || res.Ran != 12-lines {
		t.Fatalf("resumed: %d episodes, skipped %d, ran %d (had %d)", len(res.Episodes), res.Skipped, res.Ran, lines)
	}
	eps, problems, err := eval.ReadJournals(out)
	if err != nil || len(eps) != 12 || len(problems) != 1 {
		t.Fatalf("journal: %d episodes, problems %v, err %v", len(eps), problems, err)
	}
	seen := map[string]bool{}
	for _, e := range eps {
		k := e.TaskID + string(rune('0'+e.Run))
		if seen[k] {
			t.Errorf("episode %s run %d twice", e.TaskID, e.Run)
		}
		seen[k] = true
	}
}

func countLines(t *testing.T, path string) int {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	n := 0
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return n
}

// TestShardsMergeToTheWholeRun runs the tasks in two shards (as on two
// machines) and checks that merging them gives the summary of one run.
func TestShardsMergeToTheWholeRun(t *testing.T) {
	f := newFixture(t)
	whole := t.TempDir()
	res, err := eval.Run(context.Background(), config(f, agent.Oracle{}, whole))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for i := 0; i < 2; i++ {
		d := t.TempDir()
		cfg := config(f, agent.Oracle{}, d)
		cfg.Shard = eval.Shard{Index: i, Count: 2}
		r, err := eval.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(d, "episodes-"+string(rune('0'+i))+"-of-2.jsonl")); err != nil || len(r.Episodes) == 0 {
			t.Fatalf("shard %d: %v, %d episodes", i, err, len(r.Episodes))
		}
		dirs = append(dirs, d)
	}
	merged, problems, err := eval.Merge(t.TempDir(), dirs)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	a, b := eval.Summarize(res.Episodes), eval.Summarize(merged)
	zeroWall(a)
	zeroWall(b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("merged shards summarise differently:\n%+v\n%+v", a, b)
	}
}

func zeroWall(s *eval.Summary) {}

// TestReplayReproducesTheReport records a react run's model requests in
// the store, then replays it with the model gone: same trajectories, same
// summary.
func TestReplayReproducesTheReport(t *testing.T) {
	f := newFixture(t)
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		q := req.Messages[1].Content
		switch {
		case len(req.Messages) == 2 && strings.Contains(q, "3-D Man"):
			return llmtest.Reply{Content: "Thought: find him\nAction: filter_data\nAction Input: {\"data_source\": \"$starting_table$\", \"key_name\": \"superhero_superhero_name\", \"condition\": \"equal_to\", \"value\": \"3-D Man\", \"label\": \"H\"}"}
		case len(req.Messages) == 4 && strings.Contains(q, "3-D Man"):
			return llmtest.Reply{Content: "Thought: eyes\nAction: retrieve_data\nAction Input: {\"data_source\": \"$H$\", \"key_names\": [\"eye_colour_colour\"]}"}
		}
		return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"}
	})
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "records.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first := t.TempDir()
	cfg := config(f, agent.ReAct{}, first)
	cfg.Model = llm.New(srv.URL(), llm.Options{Recorder: st})
	r1, err := eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	srv.Close()
	second := t.TempDir()
	cfg.Out = second
	cfg.Model = llm.New(url, llm.Options{Recorder: st, Replay: true})
	r2, err := eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r1.Episodes {
		a, b := r1.Episodes[i], r2.Episodes[i]
		if a.Outcome.Trajectory.Error != "" || b.Outcome.Trajectory.Error != "" {
			t.Fatalf("errors: %q / %q", a.Outcome.Trajectory.Error, b.Outcome.Trajectory.Error)
		}
		a.Outcome.Trajectory.Counts.Wall, b.Outcome.Trajectory.Counts.Wall = 0, 0
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Errorf("replayed episode differs:\n%s\n%s", ja, jb)
		}
	}
	if !reflect.DeepEqual(eval.Summarize(r1.Episodes), eval.Summarize(r2.Episodes)) {
		t.Error("replayed summary differs")
	}
	if g := eval.Summarize(r2.Episodes).Groups[0]; g.Completion.PerRun[0] != 1.0/3 {
		t.Errorf("completion per run = %v, want 1/3 (only hero-1 is answered)", g.Completion.PerRun)
	}
}

// TestDirectErrorCategories: outputs that fail in different ways land in
// the right BFCL categories.
func TestDirectErrorCategories(t *testing.T) {
	f := newFixture(t)
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		q := req.Messages[1].Content
		switch {
		case strings.Contains(q, "3-D Man"): // correct, own labels
			return llmtest.Reply{Content: `[{"name": "filter_data", "arguments": {"data_source": "$starting_table$", "key_name": "superhero_superhero_name", "condition": "equal_to", "value": "3-D Man"}, "label": "X"}, {"name": "retrieve_data", "arguments": {"data_source": "$X$", "key_names": ["eye_colour_colour"]}, "label": "Y"}]`}
		case strings.Contains(q, "Dark Horse"): // wrong value
			return llmtest.Reply{Content: `[{"name": "filter_data", "arguments": {"data_source": "$starting_table$", "key_name": "publisher_publisher_name", "condition": "equal_to", "value": "Dark Horse"}, "label": "DH"}, {"name": "filter_data", "arguments": {"data_source": "$DH$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue"}, "label": "BLUE"}, {"name": "retrieve_data", "arguments": {"data_source": "$BLUE$", "key_names": ["superhero_superhero_name"]}, "label": "NAMES"}]`}
		}
		return llmtest.Reply{Content: "To find the tallest heroes I would sort them by height."} // prose
	})
	defer srv.Close()
	cfg := config(f, agent.Direct{}, t.TempDir())
	cfg.Runs = 1
	cfg.Model = llm.New(srv.URL(), llm.Options{})
	res, err := eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range res.Episodes {
		got[e.TaskID] = e.Score.ErrorCategory
		if e.TaskID == "hero-1" && !e.Score.Completed {
			t.Errorf("hero-1 not completed: %s", e.Score.AnswerError)
		}
	}
	want := map[string]string{"hero-1": "", "hero-2": metrics.ErrValue, "hero-3": metrics.ErrInstructionAlignment}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("categories = %v, want %v", got, want)
	}
	g := eval.Summarize(res.Episodes).Groups[0]
	if !reflect.DeepEqual(g.ErrorCategories, []eval.Count{{metrics.ErrInstructionAlignment, 1}, {metrics.ErrValue, 1}}) {
		t.Errorf("summary categories %v", g.ErrorCategories)
	}
	// The NESTful scorer sees three samples: one exact (with other
	// labels), one with a wrong value, one with no calls.
	if g.NestfulIntent == nil || g.FullMatch.Mean != 0 {
		t.Errorf("nestful: %+v full %+v", g.NestfulIntent, g.FullMatch)
	}
}

// TestJudgedRunExportsToStableToolBench judges react episodes and checks
// that the exported pass-rate file gives, through StableToolBench's
// arithmetic, the SoPR of the summary.
func TestJudgedRunExportsToStableToolBench(t *testing.T) {
	f := newFixture(t)
	model := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if strings.Contains(req.Messages[1].Content, "Dark Horse") {
			return llmtest.Reply{Content: "Thought: no idea\nAction: filter_data\nAction Input: {}"} // never finishes
		}
		return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"}
	})
	defer model.Close()
	judgeSrv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Tools) == 0 { // FAC
			return llmtest.Reply{Content: "Answer Status\nSolved\nReason\nok"}
		}
		status := "Solved"
		if strings.Contains(req.Messages[0].Content, "tallest") {
			status = "Unsure"
		}
		if req.Tools[0].Function.Name == "parse_answer_status" {
			status = "Unsolved"
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "j", Type: "function", Function: llm.FunctionCall{Name: req.Tools[0].Function.Name, Arguments: `{"answer_status": "` + status + `", "reason": "r"}`}}}}
	})
	defer judgeSrv.Close()
	out := t.TempDir()
	cfg := config(f, agent.ReAct{Budget: 2}, out)
	cfg.Model = llm.New(model.URL(), llm.Options{})
	cfg.Judge = &judge.Judge{Model: llm.New(judgeSrv.URL(), llm.Options{}), ModelName: "judge"}
	cfg.FAC, cfg.JudgeRounds = true, 2
	res, err := eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := report.Write(out, nil, res.Episodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Groups[0]
	// hero-1 Solved, hero-2 never finished (Unsolved), hero-3 Unsure then
	// Unsolved: 1/3 in every round.
	if g.SoPR == nil || len(g.SoPR.PerRound) != 4 || g.SoPR.Mean-100.0/3 > 1e-9 || 100.0/3-g.SoPR.Mean > 1e-9 || g.SoPR.Std != 0 {
		t.Fatalf("SoPR %+v", g.SoPR)
	}
	pf, err := stb.ReadPassRate(filepath.Join(out, "stb", "pass_rate", "react", "bird-slot_react.json"))
	if err != nil {
		t.Fatal(err)
	}
	again, problems := stb.SolvePassRate(pf, 0)
	if len(problems) > 0 || again.Mean != g.SoPR.Mean || again.Std != g.SoPR.Std {
		t.Errorf("StableToolBench arithmetic on the export: %+v, summary %+v", again, g.SoPR)
	}
	// FAC: hero-1 and hero-3 gave final answers the FAC judge calls
	// solved; hero-2 has none.
	if g.FAC == nil || g.FAC.Tasks != 3 || g.FAC.Mean-200.0/3 > 1e-9 || 200.0/3-g.FAC.Mean > 1e-9 {
		t.Errorf("FAC %+v", g.FAC)
	}
	if _, err := os.Stat(filepath.Join(out, "stb", "converted", "react", "bird-slot_run1.json")); err != nil {
		t.Error(err)
	}
}
