package main

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

var (
	birdOnce sync.Once
	birdDir  string
	birdErr  string
)

// builtBird builds the BIRD collections once for the eval tests, with the
// real "toolenv build bird".
func builtBird(t *testing.T) string {
	t.Helper()
	data := shareddata.Require(t, "bird")
	birdOnce.Do(func() {
		// One build per test process, in a folder of its own (test
		// processes may run at once), removed by TestMain at the end.
		dir, err := os.MkdirTemp("", "toolenv-eval-bird-")
		if err != nil {
			birdErr = err.Error()
			return
		}
		code, _, stderr := run(t, context.Background(), "build", "bird", "--data", data, "--out", dir, "--log-level", "warn")
		if code != 0 {
			birdErr = stderr
			return
		}
		birdDir = dir
	})
	if birdErr != "" {
		t.Fatalf("toolenv build bird: %s", birdErr)
	}
	return birdDir
}

// removeBuiltBird removes the shared BIRD build, if one was made.
func removeBuiltBird() {
	if birdDir != "" {
		os.RemoveAll(birdDir)
	}
}

func readSummary(t *testing.T, dir string) *eval.Summary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s eval.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestEvalOracleCompletesEveryVerifiedTask: the oracle agent executes the
// gold sequence of every task "toolenv build bird" kept, in every flavor,
// and must reach the gold answer each time.
func TestEvalOracleCompletesEveryVerifiedTask(t *testing.T) {
	bird := builtBird(t)
	for _, flavor := range []string{"slot", "sel", "rest"} {
		t.Run(flavor, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := run(t, context.Background(), "eval", "--tasks", filepath.Join(bird, flavor), "--agent", "oracle",
				"--out", out, "--concurrency", "4", "--store", filepath.Join(out, "cache.db"), "--log-level", "warn")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			s := readSummary(t, out)
			g := s.Groups[0]
			if g.Completion == nil || g.Completion.Mean != 1 || g.Errors != 0 || g.Tasks < 250 {
				t.Fatalf("oracle on %s: %d tasks, completion %+v, errors %d", flavor, g.Tasks, g.Completion, g.Errors)
			}
			if !strings.Contains(stdout, "| bird-"+flavor+" | oracle |") {
				t.Errorf("stdout lacks the overview:\n%s", stdout)
			}
		})
	}
}

// reactModel answers like a ReAct model on SLOT: one filter on the name
// in the question (when it quotes one), one retrieve, a final answer.
func reactModel() llmtest.Func {
	return func(n int, req *llm.Request) llmtest.Reply {
		switch len(req.Messages) {
		case 2:
			return llmtest.Reply{Content: "Thought: I look at the data first.\nAction: retrieve_data\nAction Input: {\"data_source\": \"$starting_table$\", \"key_names\": [\"superhero_superhero_name\"], \"limit\": 2}"}
		default:
			return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: 3-D Man"}
		}
	}
}

// TestEvalRecordsAndReplays runs react with a model, then replays the
// evaluation with the model gone: the same summary, byte for byte.
func TestEvalRecordsAndReplays(t *testing.T) {
	bird := builtBird(t)
	srv := llmtest.New(reactModel())
	url := srv.URL()
	out1, out2 := t.TempDir(), t.TempDir()
	common := []string{"eval", "--tasks", filepath.Join(bird, "slot"), "--agent", "react", "--model", url, "--model-name", "m",
		"--task-id", "bird-717,bird-718,bird-719", "--runs", "2", "--no-judge", "--log-level", "warn", "--store", filepath.Join(out1, "cache.db")}
	code, _, stderr := run(t, context.Background(), append(common, "--out", out1)...)
	srv.Close()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, context.Background(), append(common, "--out", out2, "--replay", "--records", filepath.Join(out1, "records.db"))...)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out1, "summary.json"))
	b, _ := os.ReadFile(filepath.Join(out2, "summary.json"))
	if string(a) != string(b) {
		t.Errorf("replayed summary differs:\n%s\n%s", a, b)
	}
	s := readSummary(t, out2)
	if g := s.Groups[0]; g.Episodes != 6 || g.Loops == nil || g.Loops.AvgLoops != 2 || g.Errors != 0 {
		t.Errorf("react group %+v", g)
	}
	// Replaying with no records fails clearly.
	code, _, stderr = run(t, context.Background(), append(common, "--out", t.TempDir(), "--replay")...)
	if code != 2 || !strings.Contains(stderr, "no records") {
		t.Errorf("replay without records: exit %d: %s", code, stderr)
	}
}

// TestEvalSkipsBrokenTaskLines: a task file with a broken line is
// evaluated without it, and run.json says which line and why.
func TestEvalSkipsBrokenTaskLines(t *testing.T) {
	bird := builtBird(t)
	dir := t.TempDir()
	c, err := toolenv.ReadCollection(filepath.Join(bird, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	json.Unmarshal(c.Backend.Config, &cfg)
	dbs := cfg["databases"].(map[string]any)
	for k, v := range dbs {
		dbs[k] = filepath.Join(filepath.Join(bird, "rest"), v.(string))
	}
	c.Backend.Config, _ = json.Marshal(cfg)
	if err := toolenv.WriteCollection(dir, c); err != nil {
		t.Fatal(err)
	}
	tasks, _, _ := toolenv.ReadTasks(filepath.Join(bird, "rest", toolenv.TasksFile))
	var lines []string
	for _, tk := range tasks[:3] {
		b, _ := json.Marshal(tk)
		lines = append(lines, string(b))
	}
	lines = append(lines[:1], append([]string{`{"id": "broken", "query": `}, lines[1:]...)...)
	os.WriteFile(filepath.Join(dir, toolenv.TasksFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	out := t.TempDir()
	code, _, stderr := run(t, context.Background(), "eval", "--tasks", dir, "--agent", "oracle", "--out", out, "--log-level", "error", "--store", filepath.Join(out, "c.db"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := eval.ReadRunInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.TaskCount != 3 || len(info.Skipped) != 1 || !strings.Contains(info.Skipped[0], "tasks.jsonl:2") {
		t.Errorf("task count %d, skipped %q", info.TaskCount, info.Skipped)
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(page), "tasks.jsonl:2") {
		t.Error("the report does not show the skipped line")
	}
}

// TestEvalShardsAndMerge runs two shards into one folder, merges them,
// and compares with an unsharded run.
func TestEvalShardsAndMerge(t *testing.T) {
	bird := builtBird(t)
	sharded, whole := t.TempDir(), t.TempDir()
	base := []string{"eval", "--tasks", filepath.Join(bird, "sel"), "--agent", "oracle", "--limit", "20", "--log-level", "warn", "--store", filepath.Join(whole, "c.db")}
	for _, sh := range []string{"0/2", "1/2"} {
		if code, _, stderr := run(t, context.Background(), append(base, "--out", sharded, "--shard", sh)...); code != 0 {
			t.Fatalf("shard %s: %s", sh, stderr)
		}
	}
	if code, _, stderr := run(t, context.Background(), append(base, "--out", whole)...); code != 0 {
		t.Fatal(stderr)
	}
	merged := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "eval", "merge", "--out", merged, sharded)
	if code != 0 {
		t.Fatal(stderr)
	}
	a, b := readSummary(t, merged), readSummary(t, whole)
	if a.Episodes != 20 || b.Episodes != 20 || a.Groups[0].Completion.Mean != b.Groups[0].Completion.Mean {
		t.Errorf("merged %d episodes, whole %d\n%s", a.Episodes, b.Episodes, stdout)
	}
	code, stdout, _ = run(t, context.Background(), "eval", "compare", merged, whole, "--html", filepath.Join(merged, "cmp.html"))
	if code != 0 || !strings.Contains(stdout, "## bird-sel") || !strings.Contains(stdout, "| Completion — NL2SQL answer check | 1.00 (n=20) | 1.00 (n=20) |") {
		t.Errorf("compare:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(merged, "cmp.html")); err != nil {
		t.Error(err)
	}
}

// TestEvalAgainstARunningServer runs the oracle through --env-url.
func TestEvalAgainstARunningServer(t *testing.T) {
	bird := builtBird(t)
	slot := filepath.Join(bird, "slot")
	base, stop := serveInBackground(t, "--collection", slot, "--store", filepath.Join(t.TempDir(), "s.db"))
	defer stop()
	out := t.TempDir()
	code, _, stderr := run(t, context.Background(), "eval", "--tasks", slot, "--agent", "oracle", "--env-url", base, "--limit", "25", "--out", out, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if g := readSummary(t, out).Groups[0]; g.Completion.Mean != 1 || g.Tasks != 25 {
		t.Errorf("oracle over HTTP: %+v", g.Completion)
	}
}

func TestEvalStableToolBenchCommands(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "data_example")
	code, stdout, stderr := run(t, context.Background(), "eval", "stb", "passrate", "--evaluate-times", "3",
		filepath.Join(dir, "pass_rate_results", "virtual_chatgpt_cot", "G1_instruction_virtual_chatgpt_cot.json"),
		filepath.Join(dir, "pass_rate_results", "virtual_chatgpt_dfs", "G1_instruction_virtual_chatgpt_dfs.json"))
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"G1_instruction_virtual_chatgpt_cot.json: 3 queries. Solve rate: 66.7% Std: 0.0%", "G1_instruction_virtual_chatgpt_dfs.json: 3 queries. Solve rate: 100.0% Std: 0.0%"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	out := filepath.Join(t.TempDir(), "G1_instruction.json")
	code, stdout, stderr = run(t, context.Background(), "eval", "stb", "convert", filepath.Join(dir, "answer", "virtual_chatgpt_cot", "G1_instruction"), "--method", "CoT@1", "--out", out)
	if code != 0 || !strings.Contains(stdout, "Converted 3 answers") {
		t.Fatalf("convert: %d %s %s", code, stdout, stderr)
	}
}

func TestEvalUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--out", "x"}, "--tasks is required"},
		{[]string{"eval", "--tasks", ".", "--agent", "nope", "--out", "x"}, `--agent: "nope" is not one of direct, react`},
		{[]string{"eval", "--tasks", ".", "--agent", "react", "--out", "x"}, "needs --model"},
		{[]string{"eval", "--tasks", ".", "--agent", "oracle", "--out", "x", "--shard", "2/2"}, "--shard"},
	}
	for _, tt := range tests {
		code, _, stderr := run(t, context.Background(), tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %s", tt.args, code, stderr)
		}
	}
}

// pyLiteral writes a JSON-decoded value in Python syntax.
func pyLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, pyLiteral(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// perfectModel answers each task's question with its gold sequence: in
// BFCL's Python call syntax, or as NESTful JSON with labels.
func perfectModel(t *testing.T, tasksFile string, python bool) llmtest.Func {
	tasks, _, err := toolenv.ReadTasks(tasksFile)
	if err != nil {
		t.Fatal(err)
	}
	byQuery := map[string]*toolenv.Task{}
	for _, tk := range tasks {
		byQuery[tk.Query] = tk
	}
	return func(n int, req *llm.Request) llmtest.Reply {
		q := req.Messages[len(req.Messages)-1].Content
		if i := strings.Index(q, "\nEvidence: "); i >= 0 {
			q = q[:i]
		}
		tk := byQuery[q]
		if tk == nil {
			return llmtest.Reply{Content: "I do not know this question."}
		}
		if !python {
			b, _ := json.Marshal(tk.Gold)
			return llmtest.Reply{Content: "Here are the calls:\n" + string(b)}
		}
		var calls []string
		for _, g := range tk.Gold {
			var args []string
			for _, k := range slices.Sorted(maps.Keys(g.Args)) {
				args = append(args, k+"="+pyLiteral(g.Args[k]))
			}
			calls = append(calls, g.Name+"("+strings.Join(args, ", ")+")")
		}
		return llmtest.Reply{Content: "[" + strings.Join(calls, ", ") + "]"}
	}
}

// TestEvalDirectWithAPerfectModel drives the direct agent with a model
// that writes every gold sequence: BFCL Python calls on REST, NESTful JSON
// with labels on SEL. Everything must parse, execute and complete.
func TestEvalDirectWithAPerfectModel(t *testing.T) {
	bird := builtBird(t)
	for _, tt := range []struct {
		flavor string
		python bool
	}{{"rest", true}, {"sel", false}} {
		t.Run(tt.flavor, func(t *testing.T) {
			dir := filepath.Join(bird, tt.flavor)
			srv := llmtest.New(perfectModel(t, filepath.Join(dir, toolenv.TasksFile), tt.python))
			defer srv.Close()
			out := t.TempDir()
			code, _, stderr := run(t, context.Background(), "eval", "--tasks", dir, "--agent", "direct", "--model", srv.URL(), "--model-name", "perfect",
				"--limit", "60", "--concurrency", "8", "--out", out, "--log-level", "warn", "--store", filepath.Join(out, "c.db"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			g := readSummary(t, out).Groups[0]
			if g.Completion.Mean != 1 || g.FullMatch.Mean != 1 || g.Intent.F1.Mean != 1 || len(g.ErrorCategories) != 0 {
				t.Errorf("perfect direct model on %s: completion %+v full %+v intent %+v categories %v", tt.flavor, g.Completion, g.FullMatch, g.Intent, g.ErrorCategories)
			}
		})
	}
}

// TestEvalStableToolBenchQueries runs cot and dfsdt on StableToolBench
// queries in toolenv's virtual environment (the offline synthesizer
// answers), judged for SoPR, with the StableToolBench exports.
func TestEvalStableToolBenchQueries(t *testing.T) {
	queries := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Tools) > 0 && req.Tools[0].Function.Name == "check_answer_status" {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "j", Type: "function", Function: llm.FunctionCall{Name: "check_answer_status", Arguments: `{"answer_status": "Solved", "reason": "ok"}`}}}}
		}
		var tool string
		for _, f := range req.Tools {
			if f.Function.Name != "Finish" {
				tool = f.Function.Name
				break
			}
		}
		if len(req.Messages) == 2 {
			return llmtest.Reply{Content: "I will call a function.", ToolCalls: []llm.ToolCall{{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: tool, Arguments: "{}"}}}}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Type: "function", Function: llm.FunctionCall{Name: "Finish", Arguments: `{"return_type": "give_answer", "final_answer": "Here it is."}`}}}}
	})
	defer srv.Close()
	for _, a := range []string{"cot", "dfsdt"} {
		t.Run(a, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := run(t, context.Background(), "eval", "--tasks", queries, "--agent", a, "--model", srv.URL(), "--model-name", "m",
				"--limit", "5", "--out", out, "--log-level", "warn", "--store", filepath.Join(out, "c.db"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			g := readSummary(t, out).Groups[0]
			if g.Split != "G1_instruction" || g.Tasks != 5 || g.SoPR == nil || g.SoPR.Mean != 100 || g.FinishedEpisodes != 5 {
				t.Errorf("%s on StableToolBench: %+v", a, g)
			}
			if _, err := os.Stat(filepath.Join(out, "stb", "pass_rate", a, "G1_instruction_"+a+".json")); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestEvalExitsNonZeroWhenEveryEpisodeErrored: with a model that passes
// its check, then answers every request with HTTP 500, every episode ends
// with an error; the reports are still written, and eval exits 4 saying
// nothing was measured.
func TestEvalExitsNonZeroWhenEveryEpisodeErrored(t *testing.T) {
	bird := builtBird(t)
	out := t.TempDir()
	srv := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{Content: "OK"} // the check
		}
		return llmtest.Reply{Status: http.StatusInternalServerError}
	})
	defer srv.Close()
	code, _, stderr := run(t, context.Background(), "eval", "--tasks", filepath.Join(bird, "rest"), "--agent", "react", "--limit", "3",
		"--model", srv.URL(), "--model-name", "m", "--model-retries", "0", "--no-judge",
		"--out", out, "--log-level", "error", "--store", filepath.Join(out, "c.db"))
	if code != 4 || !strings.Contains(stderr, "every one of the 3 episodes ended with an error") || !strings.Contains(stderr, "--retry-errors") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Fatalf("no report: %v", err)
	}
}
