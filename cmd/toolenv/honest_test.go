package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// demoFolder writes the demo collection and its tasks into dir as a
// collection named name, and returns dir.
func demoFolder(t *testing.T, dir, name string) string {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	nc := toolenv.NewCollection(name, c.Kind, c.Tools)
	nc.Policy, nc.Backend = c.Policy, toolenv.BackendSpec{Type: "virtual"}
	if err := toolenv.WriteCollection(dir, nc); err != nil {
		t.Fatal(err)
	}
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		task.Collection = name
		for i := range task.Gold {
			task.Gold[i].Name = strings.TrimPrefix(task.Gold[i].Name, "demo/")
		}
	}
	if err := toolenv.WriteTasks(filepath.Join(dir, toolenv.TasksFile), tasks); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEvalConfigAndTasksNameOneFolder is docs/config.md's tour line: a
// --config file serving out/bird/slot (among others) and --tasks naming
// the same folder again. The folder is loaded once, and only the tasks of
// --tasks are evaluated (the file's other collections are served for
// their tools).
func TestEvalConfigAndTasksNameOneFolder(t *testing.T) {
	tmp := t.TempDir()
	demoFolder(t, filepath.Join(tmp, "out", "slot"), "slot")
	demoFolder(t, filepath.Join(tmp, "out", "sel"), "sel")
	cfg := filepath.Join(tmp, "examples", "env.yaml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("store: \":memory:\"\ncollections: [../out/slot, ../out/sel]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "runs", "o")
	code, _, stderr := run(t, context.Background(), "eval", "--config", cfg, "--tasks", filepath.Join(tmp, "out", "slot"),
		"--agent", "oracle", "--out", out, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readSummary(t, out)
	if len(s.Groups) != 1 || s.Groups[0].Split != "slot" || s.Groups[0].Episodes != 4 {
		t.Fatalf("groups %+v: want the 4 tasks of slot alone", s.Groups)
	}
}

// TestBuildRootNamesItsFlavors points commands that take one collection
// at the root of a build (out/bird rather than out/bird/slot): each says
// which collections the folder holds.
func TestBuildRootNamesItsFlavors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bird")
	slot := demoFolder(t, filepath.Join(root, "slot"), "slot")
	rest := demoFolder(t, filepath.Join(root, "rest"), "rest")
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--collection", root, "--store", ":memory:"}, 3, "name one of them: " + rest + ", " + slot},
		{[]string{"eval", "--tasks", root, "--agent", "oracle", "--out", t.TempDir()}, 2, "name one of them: --tasks " + rest + " or --tasks " + slot},
		{[]string{"map", "index", "--collection", root, "--index", filepath.Join(t.TempDir(), "x.db")}, 3, "name one of them: " + rest + ", " + slot},
	} {
		code, _, stderr := run(t, ctx, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d)\n%s\nwant %q", tc.args, code, tc.code, stderr, tc.want)
		}
	}
}

// leaves returns every command of the tree that runs something (no
// subcommands), hidden ones left out.
func leaves(c *cobra.Command) []*cobra.Command {
	if c.Hidden {
		return nil
	}
	if !c.HasSubCommands() {
		return []*cobra.Command{c}
	}
	var out []*cobra.Command
	for _, s := range c.Commands() {
		out = append(out, leaves(s)...)
	}
	return out
}

// TestEveryCommandHasAnExample walks the command tree: every leaf
// command's --help shows an example, and every flag an example gives to
// its own command exists (a renamed flag fails here).
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRootCmd(&env{})
	ls := leaves(root)
	if len(ls) < 40 {
		t.Fatalf("only %d leaf commands found", len(ls))
	}
	for _, c := range ls {
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no example in its --help", path)
			continue
		}
		// Join continued lines, then check the flags of each line that
		// runs this command.
		text := strings.ReplaceAll(c.Example, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			i := strings.Index(line, path+" ")
			if i < 0 && !strings.HasSuffix(strings.TrimSpace(line), path) {
				continue
			}
			for _, tok := range strings.Fields(line[max(i, 0):]) {
				name, ok := strings.CutPrefix(tok, "--")
				if !ok || name == "" {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				if c.Flags().Lookup(name) == nil && c.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s: its example gives --%s, which it does not have: %s", path, name, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestUnknownFlagsAndValuesSuggest checks the usage errors of flags and
// commands: an unknown flag names the nearest one, a value outside a
// flag's set names the set and the nearest value, a URL flag refuses what
// is not an http(s) URL and says the URL meant, hiding credentials, and a
// word that names no subcommand names the nearest (a group of commands
// used to print its help and exit 0). All exit 2; a group given no word
// prints its help.
func TestUnknownFlagsAndValuesSuggest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"serve", "--colection", "x"}, []string{"unknown flag: --colection", "did you mean --collection?"}, ""},
		{[]string{"serve", "--colection=x"}, []string{"did you mean --collection?"}, ""},
		{[]string{"eval", "--mdoel", "http://x/v1"}, []string{"did you mean --model?"}, ""},
		{[]string{"serve", "--log-levle", "warn"}, []string{"did you mean --log-level?"}, ""},
		{[]string{"serve", "--zzzzzzzz"}, []string{"toolenv serve --help lists its flags"}, ""},
		{[]string{"serve", "--feedback", "tesre"}, []string{"--feedback", `"tesre" is not one of`, "terse", "did you mean terse?"}, ""},
		{[]string{"eval", "--agent", "recat"}, []string{"--agent", "direct, react, cot, dfsdt, oracle", "did you mean react?"}, ""},
		{[]string{"config", "print", "--format", "ymal"}, []string{"want yaml, json", "did you mean yaml?"}, ""},
		{[]string{"serve", "--log-level", "warnn"}, []string{"did you mean warn?"}, ""},
		{[]string{"cache", "export", "--format", "jsnl"}, []string{"did you mean jsonl?"}, ""},
		{[]string{"eval", "--model", "localhost:8000/v1?api-key=SECRET1"}, []string{"--model", "not an http(s) URL", "http://localhost:8000/v1"}, "SECRET1"},
		{[]string{"serve", "--llm-url", "ftp://user:SECRET2@h/v1"}, []string{"--llm-url", "its scheme is ftp"}, "SECRET2"},
		{[]string{"eval", "fidelity", "--judge-url", "http:///v1"}, []string{"--judge-url", "has no host"}, ""},
		{[]string{"mirror", "run", "--llm-url", "127.0.0.1:8000"}, []string{"--llm-url", "http://127.0.0.1:8000"}, ""},
		{[]string{"map", "indx"}, []string{`unknown command "indx" for "toolenv map"`, "did you mean index?"}, ""},
		{[]string{"eval", "stb", "convrt", "x"}, []string{"did you mean convert?"}, ""},
		{[]string{"eval", "scor", "--in", "x"}, []string{`unknown command "scor" for "toolenv eval"`, "did you mean score?"}, ""},
		{[]string{"map", "zzzzzz"}, []string{"toolenv map --help lists its commands"}, ""},
	} {
		code, _, stderr := run(t, ctx, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: %q lacks %q", tc.args, stderr, w)
			}
		}
		if tc.not != "" && strings.Contains(stderr, tc.not) {
			t.Errorf("%v: %q shows the credential", tc.args, stderr)
		}
	}
	if code, stdout, _ := run(t, ctx, "map"); code != 0 || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("map with no command: exit %d: %s", code, stdout)
	}
}

// deadModel returns the URL of a loopback port nothing listens on.
func deadModel(t *testing.T) string {
	t.Helper()
	return deadport.URL(t, "/v1")
}

// TestEvalChecksItsModelsFirst: eval with a model (or a judge) that
// cannot answer stops before its first episode, in one request, with
// exit 4 and a message naming the endpoint and what answered; nothing is
// written.
func TestEvalChecksItsModelsFirst(t *testing.T) {
	tasks := demoFolder(t, filepath.Join(t.TempDir(), "demo2"), "demo2")
	ok := llmtest.New(llmtest.Script(llmtest.Reply{Content: "Thought: done\nFinal Answer: 21.5"}))
	defer ok.Close()
	html := llmtest.New(llmtest.Script(llmtest.Reply{Raw: "<html>not a model</html>"}))
	defer html.Close()
	dead := deadModel(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"dead model", []string{"--model", dead, "--no-judge"}, []string{"--model: model endpoint " + dead, "connection refused"}},
		{"not a model", []string{"--model", html.URL(), "--no-judge"}, []string{"--model: model endpoint", "not an OpenAI chat completion", "<html>not a model</html>"}},
		{"dead judge", []string{"--model", ok.URL(), "--judge-url", dead, "--judge-model", "j"}, []string{"the judge (--judge-url, --judge-model): model endpoint " + dead, `(model "j")`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"eval", "--tasks", tasks, "--agent", "react", "--model-name", "m", "--out", out, "--store", ":memory:", "--log-level", "warn"}, tc.args...)
			code, _, stderr := run(t, context.Background(), args...)
			if code != 4 {
				t.Fatalf("exit %d, want 4: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%q lacks %q", stderr, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output folder was written")
			}
		})
	}
	if n := len(html.Requests()); n != 1 {
		t.Errorf("the endpoint that is not a model got %d requests, want 1", n)
	}
}

// incompleteRun runs react over the demo's 4 tasks × 5 runs, one episode
// at a time, with a model that answers each episode in one request and
// does what act says at its nth request (the check is request 0), and
// returns the exit code, stderr and the run's folder.
func incompleteRun(t *testing.T, ctx context.Context, act func(n int, srv *llmtest.Server) llmtest.Reply) (int, string, string) {
	t.Helper()
	tasks := demoFolder(t, filepath.Join(t.TempDir(), "demo2"), "demo2")
	var srv *llmtest.Server
	srv = llmtest.New(func(n int, _ *llm.Request) llmtest.Reply { return act(n, srv) })
	t.Cleanup(srv.Close)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, ctx, "eval", "--tasks", tasks, "--agent", "react", "--model", srv.URL(), "--model-name", "m",
		"--runs", "5", "--concurrency", "1", "--no-judge", "--model-retries", "1", "--out", out, "--store", ":memory:", "--log-level", "error")
	return code, stderr, out
}

// checkIncomplete checks the three reports of an incomplete run: the
// counts in summary.json, the banner at the top of report.md and
// report.html, and every figure naming its denominator.
func checkIncomplete(t *testing.T, out string, want eval.RunStatus, why string) {
	t.Helper()
	s := readSummary(t, out)
	if s.Status == nil || *s.Status != want {
		t.Fatalf("status %+v, want %+v", s.Status, want)
	}
	banner := fmt.Sprintf("Incomplete run: %d of %d planned episodes ran (%d completed, %d errored); %d never ran because %s",
		want.Completed+want.Errored, want.Planned, want.Completed, want.Errored, want.Missing, why)
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.HasPrefix(string(md), "# toolenv evaluation\n\n> **"+banner) {
		t.Errorf("report.md does not open with the banner %q:\n%s", banner, md)
	}
	if i, j := strings.Index(string(page), `<div class="banner" role="alert">`+banner), strings.Index(string(page), "<h2>"); i < 0 || i > j {
		t.Errorf("report.html has no banner %q above its first section", banner)
	}
	plan := fmt.Sprintf("4 task(s) × 5 run(s) planned (20 episodes; %d in this report)", want.Completed+want.Errored)
	if !strings.Contains(string(md), plan) {
		t.Errorf("report.md's run line does not say %q", plan)
	}
	g := s.Groups[0]
	if f1 := fmt.Sprintf("%.2f (n=%d)", g.Intent.F1.Mean, g.GoldEpisodes); g.GoldEpisodes != want.Completed+want.Errored || !strings.Contains(string(md), f1) {
		t.Errorf("the intent F1 does not name its denominator (%s):\n%s", f1, md)
	}
}

// TestModelDiesMidRun: the model answers five episodes, then its server
// goes away. The run stops after three episodes in a row measured
// nothing (each after its one retry), exits 4 saying so, and its reports
// say at their top how many of the planned episodes ran.
func TestModelDiesMidRun(t *testing.T) {
	code, stderr, out := incompleteRun(t, context.Background(), func(n int, srv *llmtest.Server) llmtest.Reply {
		// After the fifth episode's answer, connections are refused.
		return llmtest.Reply{Content: "Thought: I know it.\nFinal Answer: 21.5", Last: n == 5}
	})
	// Episodes that finished while the run was stopping are kept (one
	// running, one waiting to be written): 3 to 5 errored.
	errored := readSummary(t, out).Groups[0].Errors
	if code != 4 || errored < 3 || errored > 5 || !strings.Contains(stderr, fmt.Sprintf("the run stopped after %d of 20 episodes: ", 5+errored)) ||
		!strings.Contains(stderr, "episodes in a row measured nothing") ||
		!strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "--resume --retry-errors") {
		t.Fatalf("exit %d, %d errored: %s", code, errored, stderr)
	}
	checkIncomplete(t, out, eval.RunStatus{Planned: 20, Completed: 5, Errored: errored, Missing: 15 - errored,
		Stopped: "3 episodes in a row measured nothing (the last: " + lastError(t, out) + ")"}, "the run stopped")
}

// lastError is the error of the episode that stopped the run in out:
// the third errored one.
func lastError(t *testing.T, out string) string {
	t.Helper()
	eps, _, err := eval.ReadJournals(out)
	if err != nil || len(eps) == 0 {
		t.Fatal(err)
	}
	n := 0
	for _, e := range eps {
		if e.Errored() != "" {
			if n == 2 {
				return e.Errored()
			}
			n++
		}
	}
	t.Fatal("fewer than 3 errored episodes")
	return ""
}

// TestInterruptedRunSaysSo: the run is interrupted (its context ends)
// while the fourth episode waits for the model; it exits 130, and its
// reports say that 3 of 20 episodes ran.
func TestInterruptedRunSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code, stderr, out := incompleteRun(t, ctx, func(n int, _ *llmtest.Server) llmtest.Reply {
		if n == 4 {
			cancel()
			return llmtest.Reply{Delay: time.Minute}
		}
		return llmtest.Reply{Content: "Thought: I know it.\nFinal Answer: 21.5"}
	})
	if code != 130 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkIncomplete(t, out, eval.RunStatus{Planned: 20, Completed: 3, Missing: 17, Interrupted: true}, "the run was interrupted")
}

// TestEvalFidelityNeverScoresAStandIn: with the simulator's model down
// from the start, eval fidelity fails its check (exit 4) and scores
// nothing; with the model dying after one pair, no pair is answered by
// the synthesizer in its place: the run stops after three pairs in a row
// got no answer (exit 4), and its reports say how many were scored.
func TestEvalFidelityNeverScoresAStandIn(t *testing.T) {
	db := fidelityStore(t)
	ctx := context.Background()
	args := func(url, out string) []string {
		return []string{"eval", "fidelity", "--demo", "--doc-examples", "--store", db, "--out", out, "--retries", "0", "--concurrency", "1",
			"--llm-url", url, "--llm-model", "mirror", "--log-level", "error"}
	}
	dead := deadModel(t)
	out := filepath.Join(t.TempDir(), "dead")
	code, _, stderr := run(t, ctx, args(dead, out)...)
	if code != 4 || !strings.Contains(stderr, "simulator (--llm-url, --llm-model): model endpoint "+dead) || !strings.Contains(stderr, "connection refused") {
		t.Fatalf("dead from the start: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output folder was written for a run that scored nothing")
	}

	sim := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		rep := mirrorModel(n, req)
		rep.Last = n == 1 // the check and one pair are answered
		return rep
	})
	defer sim.Close()
	out = filepath.Join(t.TempDir(), "dies")
	code, _, stderr = run(t, ctx, args(sim.URL(), out)...)
	if code != 4 || !strings.Contains(stderr, "3 pairs in a row met a model that did not answer") {
		t.Fatalf("dies after one pair: exit %d: %s", code, stderr)
	}
	var s fidelity.Summary
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status == nil || s.Status.Scored != 1 || s.Status.Failed < 3 || s.Status.Stopped == "" || s.Status.Complete {
		t.Fatalf("status %+v", s.Status)
	}
	if s.Overall.Sources["synthesizer"] != 0 || s.Overall.BLEU.N != 1 {
		t.Errorf("scored %+v: the synthesizer stood in, or a failed pair was scored", s.Overall)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), fmt.Sprintf("> **Incomplete run: 1 of %d planned pairs scored; %d got no answer from the simulator to score", s.Status.Planned, s.Status.Failed)) {
		t.Errorf("report.md has no banner:\n%s", md)
	}
}

// TestMirrorChecksItsModelsFirst: mirror's model stages, its comparison
// and its FAC annotation ask every model they were given once before any
// work, and a dead one fails in one request with exit 4 naming it; a
// stage that asks no model checks nothing.
func TestMirrorChecksItsModelsFirst(t *testing.T) {
	bird := builtBird(t)
	rest := filepath.Join(bird, "rest")
	ctx := context.Background()
	ok := llmtest.New(func(_ int, req *llm.Request) llmtest.Reply {
		if req.Model == "gone" {
			return llmtest.Reply{Status: 404, Raw: `{"error": {"message": "The model gone does not exist."}}`}
		}
		return llmtest.Reply{Content: "OK"}
	})
	defer ok.Close()
	dead := deadModel(t)
	evalRun := filepath.Join(t.TempDir(), "oracle")
	if code, _, stderr := run(t, ctx, "eval", "--tasks", demoFolder(t, filepath.Join(t.TempDir(), "d"), "d"), "--agent", "oracle", "--out", evalRun, "--log-level", "error"); code != 0 {
		t.Fatal(stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" when no check fails
	}{
		{"generate, model dead", []string{"mirror", "generate", "--collection", rest, "--llm-url", dead, "--llm-model", "m"}, "--llm-url, --llm-model: model endpoint " + dead},
		{"filter, judge model unknown", []string{"mirror", "filter", "--collection", rest, "--llm-url", ok.URL(), "--llm-model", "m", "--judge-model", "gone"}, "--judge-model: model endpoint"},
		{"split asks no model", []string{"mirror", "split", "--collection", rest, "--llm-url", dead, "--llm-model", "m"}, ""},
		{"compare, agent endpoint dead", []string{"mirror", "compare", "--collection", rest, "--llm-url", ok.URL(), "--llm-model", "m", "--agent-url", dead, "--agent-model", "a"}, "--agent-url, --agent-model: model endpoint " + dead},
		{"compare, simulator dead", []string{"mirror", "compare", "--collection", rest, "--llm-url", ok.URL(), "--llm-model", "m", "--agent-model", "a", "--sim-url", dead, "--sim-model", "s"}, "--sim-url, --sim-model: model endpoint " + dead},
		{"fac, annotator dead", []string{"mirror", "fac", "--runs", evalRun, "--llm-url", dead, "--llm-model", "m"}, "--llm-url, --llm-model: model endpoint " + dead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, ctx, append(tc.args, "--out", filepath.Join(t.TempDir(), "m"), "--log-level", "error")...)
			if tc.want == "" {
				if code == 4 {
					t.Errorf("exit 4: %s", stderr)
				}
				return
			}
			if code != 4 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "connection refused") && !strings.Contains(stderr, "HTTP 404: The model gone does not exist.") {
				t.Errorf("exit %d: %s\nwant 4 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestMapAndPerturbCheckTheirModelsFirst: perturb's paraphrases, map
// probe's model and map index's embeddings endpoint are each asked once
// before any work; a dead one fails with exit 4 naming it.
func TestMapAndPerturbCheckTheirModelsFirst(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	coll := demoFolder(t, filepath.Join(tmp, "d"), "d")
	ix := filepath.Join(tmp, "map.db")
	if code, _, stderr := run(t, ctx, "map", "index", "--collection", coll, "--index", ix, "--log-level", "error"); code != 0 {
		t.Fatal(stderr)
	}
	dead := deadModel(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"perturb", "--tasks", filepath.Join(coll, toolenv.TasksFile), "--mode", "paraphrase", "--seed", "1", "--llm-url", dead, "--llm-model", "m", "--out", filepath.Join(tmp, "p.jsonl")}, "--llm-url, --llm-model: model endpoint " + dead},
		{[]string{"map", "probe", "--index", ix, "--queries", filepath.Join(coll, toolenv.TasksFile), "--llm-url", dead, "--model", "m", "--out", filepath.Join(tmp, "probe.json")}, "--llm-url, --model: model endpoint " + dead},
		{[]string{"map", "index", "--collection", coll, "--index", filepath.Join(tmp, "v.db"), "--embed-url", dead, "--embed-model", "e"}, "--embed-url, --embed-model: model endpoint " + dead},
		{[]string{"map", "search", "--index", ix, "--embed-url", dead, "--embed-model", "e", "weather"}, "--embed-url, --embed-model: model endpoint " + dead},
	} {
		code, _, stderr := run(t, ctx, append(tc.args, "--log-level", "error")...)
		if code != 4 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "connection refused") {
			t.Errorf("%v: exit %d: %s\nwant 4 and %q", tc.args[:2], code, stderr, tc.want)
		}
	}
}
