package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/store"
)

func readMirrorReport(t *testing.T, dir string) *mirror.Report {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Summary *mirror.Summary `json:"summary"`
		Stages  []struct {
			Stage string         `json:"stage"`
			Error string         `json:"error"`
			Stats map[string]any `json:"stats"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	rep := &mirror.Report{Summary: r.Summary}
	for _, s := range r.Stages {
		rep.Stages = append(rep.Stages, mirror.StageReport{Stage: s.Stage, Error: s.Error, Stats: s.Stats})
	}
	return rep
}

// TestMirrorBIRDAndSpider runs "toolenv mirror run" with no model on the
// live REST collections of a BIRD build and a spider-de build, then
// scores the offline synthesizer on an exported benchmark split with
// "toolenv eval fidelity".
func TestMirrorBIRDAndSpider(t *testing.T) {
	bird := builtBird(t)
	spiderData := shareddata.Require(t, "spider-de")
	ctx := context.Background()
	spider := filepath.Join(t.TempDir(), "spider")
	if code, _, stderr := run(t, ctx, "build", "bird", "--data", spiderData, "--out", spider, "--flavors", "rest", "--log-level", "warn"); code != 0 {
		t.Fatalf("build spider-de: %s", stderr)
	}
	out := filepath.Join(t.TempDir(), "mirror")
	code, stdout, stderr := run(t, ctx, "mirror", "run", "--collection", filepath.Join(bird, "rest"), "--collection", "spider-rest="+filepath.Join(spider, "rest"),
		"--out", out, "--per-api", "12", "--ood-success", "20", "--ood-failure", "10", "--id-size", "10", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("mirror run: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "| generated |") {
		t.Fatalf("no funnel on stdout:\n%s", stdout)
	}
	rep := readMirrorReport(t, out)
	s := rep.Summary
	if s.Requests == 0 || s.Real != s.Requests || s.Pending != 0 || s.Kept == 0 || s.KeptFailures == 0 || s.RealOK < s.Real/2 {
		t.Fatalf("summary: requests %d, real %d (ok %d), pending %d, kept %d (failures %d)", s.Requests, s.Real, s.RealOK, s.Pending, s.Kept, s.KeptFailures)
	}
	// The second round learned values from the first round's answers.
	harvested := false
	for _, st := range rep.Stages {
		if st.Stage == "generate (harvest)" {
			h, _ := st.Stats.(map[string]any)["harvested"].(float64)
			added, _ := st.Stats.(map[string]any)["added"].(map[string]any)
			harvested = h > 100 && added["known"].(float64) > 100
		}
	}
	if !harvested {
		t.Fatalf("no harvest round that learned values: %+v", rep.Stages)
	}
	collections := map[string]bool{}
	for _, a := range s.APIs {
		collections[strings.SplitN(a.Tool, "/", 2)[0]] = true
	}
	if !collections["bird-rest"] || !collections["spider-rest"] {
		t.Fatalf("APIs of %v, want both builds", collections)
	}
	sizes := map[string]int{}
	for _, sp := range s.Splits {
		sizes[sp.Split] = sp.Samples
	}
	if sizes["ood_success"] != 20 || sizes["ood_failure"] != 10 || sizes["id_high"] != 10 || sizes["id_low"] != 10 || sizes["train"] == 0 {
		t.Fatalf("splits %v", sizes)
	}
	for _, f := range []string{"report.md", "report.html", "data/train.openai.jsonl", "data/train.sharegpt.jsonl", "data/README.md", "data/bench/ood_success.jsonl", "data/bench/id_low.messages.jsonl"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The dataset card records toolenv's version and the effective
	// configuration, defaults included.
	var card struct {
		Toolenv struct {
			Version string `json:"version"`
			Config  struct {
				Sources map[string]any            `json:"sources"`
				Stages  map[string]map[string]any `json:"stages"`
			} `json:"config"`
		} `json:"toolenv"`
	}
	if raw, err := os.ReadFile(filepath.Join(out, "data", "card.json")); err != nil || json.Unmarshal(raw, &card) != nil {
		t.Fatalf("card.json: %v", err)
	}
	if cfg := card.Toolenv.Config; card.Toolenv.Version == "" || cfg.Stages["split"]["OODSuccess"] != 20.0 || cfg.Stages["collect"]["Workers"] != 32.0 ||
		cfg.Stages["filter"]["KeepFailures"] != 10000.0 || len(cfg.Sources["collections"].([]any)) != 2 {
		t.Fatalf("card.json toolenv: %+v", card.Toolenv)
	}
	// Running again adds nothing and changes nothing.
	before, _ := os.ReadFile(filepath.Join(out, "data", "train.openai.jsonl"))
	if code, _, stderr := run(t, ctx, "mirror", "run", "--collection", filepath.Join(bird, "rest"), "--collection", "spider-rest="+filepath.Join(spider, "rest"),
		"--out", out, "--per-api", "12", "--ood-success", "20", "--ood-failure", "10", "--id-size", "10", "--log-level", "warn"); code != 0 {
		t.Fatalf("second run: %s", stderr)
	}
	if again := readMirrorReport(t, out).Summary; again.Requests != s.Requests || again.Real != s.Real {
		t.Fatalf("the second run changed the dataset: %d/%d requests, %d/%d pairs", again.Requests, s.Requests, again.Real, s.Real)
	}
	after, _ := os.ReadFile(filepath.Join(out, "data", "train.openai.jsonl"))
	if string(before) != string(after) {
		t.Fatal("the second run exported other training data")
	}

	// Close the loop: score the simulator on a split of BIRD's APIs.
	birdOut := filepath.Join(t.TempDir(), "mirror-bird")
	if code, _, stderr := run(t, ctx, "mirror", "run", "--collection", filepath.Join(bird, "rest"), "--out", birdOut, "--per-api", "6",
		"--ood-success", "10", "--ood-failure", "5", "--id-size", "8", "--log-level", "warn"); code != 0 {
		t.Fatalf("mirror run (BIRD): %s", stderr)
	}
	fid := filepath.Join(t.TempDir(), "fidelity")
	code, _, stderr = run(t, ctx, "eval", "fidelity", "--pairs", filepath.Join(birdOut, "data", "bench", "id_high.jsonl"), "--collection", filepath.Join(bird, "rest"),
		"--store", filepath.Join(t.TempDir(), "empty.db"), "--out", fid, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("eval fidelity on the exported split: exit %d\n%s", code, stderr)
	}
	type fidSummary struct {
		Overall struct {
			Pairs        int             `json:"pairs"`
			BLEU         struct{ N int } `json:"bleu"`
			Cosine       struct{ N int } `json:"cosine"`
			Rating       struct{ N int } `json:"rating"`
			DocFollowing struct{ N int } `json:"doc_following"`
		} `json:"overall"`
	}
	readFid := func(dir string) fidSummary {
		raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var fs fidSummary
		if err := json.Unmarshal(raw, &fs); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if fs := readFid(fid); fs.Overall.Pairs != 8 {
		t.Fatalf("eval fidelity scored %d pairs of id_high, want 8", fs.Overall.Pairs)
	}
	// Every exported split at once, with a model simulator, both judges
	// and an embeddings endpoint (BLEU, cosine, rating, documentation
	// following): every pair is scored by each.
	sim, judges := llmtest.New(mirrorModel), llmtest.New(judgeModel)
	defer sim.Close()
	defer judges.Close()
	fidAll := filepath.Join(t.TempDir(), "fidelity-all")
	args := []string{"eval", "fidelity", "--collection", filepath.Join(bird, "rest"), "--store", filepath.Join(t.TempDir(), "empty.db"), "--retries", "0",
		"--llm-url", sim.URL(), "--llm-model", "mirror", "--sim-prompt", "sft", "--judge-url", judges.URL(), "--judge-model", "gpt-4o",
		"--embed-url", judges.URL(), "--embed-model", "e", "--log-level", "warn", "--out", fidAll}
	for _, sp := range mirror.TestSplits {
		args = append(args, "--pairs", filepath.Join(birdOut, "data", "bench", sp+".jsonl"))
	}
	if code, _, stderr := run(t, ctx, args...); code != 0 {
		t.Fatalf("eval fidelity on every split: exit %d\n%s", code, stderr)
	}
	o := readFid(fidAll).Overall
	if want := 10 + 5 + 3*8; o.Pairs != want || o.BLEU.N != want || o.Cosine.N != want || o.Rating.N != want || o.DocFollowing.N != want {
		t.Fatalf("eval fidelity on every split: %+v, want %d pairs scored by each metric", o, want)
	}
}

// TestMirrorBadInput checks that mistakes get a clear error and exit 2.
func TestMirrorBadInput(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "m")
	rest := filepath.Join(bird, "rest")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no out", []string{"mirror", "run", "--collection", rest}, 2, "--out is required"},
		{"no collection", []string{"mirror", "run", "--out", out}, 2, "name the APIs to mirror"},
		{"the same name twice", []string{"mirror", "run", "--collection", rest, "--collection", rest, "--out", out}, 2, "rename one with --collection NAME=DIR"},
		{"a stateful flavor", []string{"mirror", "generate", "--collection", filepath.Join(bird, "slot"), "--out", out}, 2, "per-session state"},
		{"model without name", []string{"mirror", "generate", "--collection", rest, "--out", out, "--llm-url", "http://127.0.0.1:1/v1"}, 2, "--llm-model"},
		{"documented APIs without upstream", []string{"mirror", "generate", "--toolbench", shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction", "G1_tool.json"), "--out", out}, 2, "--upstream-url"},
		{"missing folder", []string{"mirror", "generate", "--collection", filepath.Join(bird, "nope"), "--out", out}, 3, "nope"},
		{"replay with nothing recorded", []string{"mirror", "generate", "--collection", rest, "--out", out, "--replay", "--llm-model", "m", "--per-api", "2"}, 1, "replay"},
	}
	for _, tc := range tests {
		code, _, stderr := run(t, ctx, append(tc.args, "--log-level", "error")...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
}

// TestMirrorCacheSetAndFAC runs "toolenv mirror cache-set" on a store of
// real answers and "toolenv mirror fac" on an eval run.
func TestMirrorCacheSetAndFAC(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := toolenv.ReadCollection(filepath.Join(bird, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []*store.Entry
	for i, tool := range c.Tools[:20] {
		entries = append(entries, &store.Entry{Tool: tool.ID, Args: "{}", Status: toolenv.StatusOK, Body: json.RawMessage(fmt.Sprintf(`{"rows":[[%d]]}`, i)), Origin: "upstream"})
	}
	if _, err := st.PutMany(ctx, entries, true); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out := filepath.Join(t.TempDir(), "cache-model")
	code, stdout, stderr := run(t, ctx, "mirror", "cache-set", "--from", dbPath, "--collection", filepath.Join(bird, "rest"), "--out", out, "--test", "3", "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "20 entries read, 17 training samples, 3 held out") {
		t.Fatalf("cache-set: exit %d\n%s\n%s", code, stdout, stderr)
	}
	runs := filepath.Join(t.TempDir(), "runs")
	if code, _, stderr := run(t, ctx, "eval", "--tasks", filepath.Join(bird, "rest"), "--agent", "oracle", "--out", runs, "--log-level", "warn"); code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	fac := filepath.Join(t.TempDir(), "fac")
	code, stdout, stderr = run(t, ctx, "mirror", "fac", "--runs", runs, "--out", fac, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "FAC files:") {
		t.Fatalf("fac: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"fac.jsonl", "fac.csv", "README.md"} {
		if _, err := os.Stat(filepath.Join(fac, f)); err != nil {
			t.Error(err)
		}
	}
	if code, _, stderr := run(t, ctx, "mirror", "fac", "--runs", t.TempDir(), "--out", fac); code != 2 || !strings.Contains(stderr, "holds no episodes") {
		t.Fatalf("fac of an empty folder: exit %d %s", code, stderr)
	}
}

// TestMirrorCompare runs "toolenv mirror compare" on BIRD's REST APIs with
// a model on loopback writing the queries and playing a ReAct agent.
func TestMirrorCompare(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	toolNames := regexp.MustCompile(`one of \[([^\]]*)\]`)
	apiNames := regexp.MustCompile(`"name":"([^"]*)"`)
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		sys, user := req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.HasPrefix(user, "You will be provided with several tools"):
			_, input, _ := strings.Cut(user, "INPUT: ")
			var related [][]string
			for _, m := range apiNames.FindAllStringSubmatch(input, -1) {
				related = append(related, []string{"superhero", m[1]})
			}
			b, _ := json.Marshal(map[string]any{"query": "Tell me about the superheroes.", "related_apis": related})
			return llmtest.Reply{Content: string(b)}
		case strings.HasPrefix(user, "An AI agent used some APIs"):
			return llmtest.Reply{Content: `{"all_functioning": 1, "broken_apis": [], "reason": "fine"}`}
		case strings.HasPrefix(sys, "Answer the user's question"):
			if len(req.Messages) > 2 {
				return llmtest.Reply{Content: "Thought: done\nFinal Answer: They are many."}
			}
			name := strings.Split(toolNames.FindStringSubmatch(sys)[1], ", ")[0]
			return llmtest.Reply{Content: "Thought: look\nAction: " + name + "\nAction Input: {}"}
		}
		return llmtest.Reply{Content: "?"}
	})
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "m")
	code, stdout, stderr := run(t, ctx, "mirror", "compare", "--collection", filepath.Join(bird, "rest"), "--out", out, "--llm-url", srv.URL(), "--llm-model", "m",
		"--agent", "react", "--agent-model", "agent-m", "--queries", "4", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "| react | agent-m | 100.0 (4) | 100.0 (4) | 100.0 (4) |") {
		t.Fatalf("compare output:\n%s", stdout)
	}
	if code, _, stderr := run(t, ctx, "mirror", "compare", "--collection", filepath.Join(bird, "rest"), "--out", out, "--log-level", "warn"); code != 2 || !strings.Contains(stderr, "--llm-url") {
		t.Fatalf("compare without a model: exit %d %s", code, stderr)
	}
}

// TestMirrorConfigFile: the mirror commands read their options from
// --config (paths relative to the file's folder), flags given override
// it, and a file that is wrong is an error naming what to fix.
func TestMirrorConfigFile(t *testing.T) {
	bird := builtBird(t)
	ctx := context.Background()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mirror.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("out: m\ncollections: [%q]\nstages:\n  per_api: 5\n", filepath.Join(bird, "rest"))), 0o644)
	if code, _, stderr := run(t, ctx, "mirror", "generate", "--config", cfg, "--per-api", "2", "--log-level", "warn"); code != 0 {
		t.Fatalf("mirror generate --config: exit %d\n%s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "m", "report.json"))
	var rep struct {
		Settings map[string]any `json:"settings"`
	}
	if err != nil || json.Unmarshal(raw, &rep) != nil || rep.Settings["per_api"] != 2.0 {
		t.Fatalf("report of the run the file configured (flag --per-api 2 over the file's 5): %v %s", err, raw)
	}
	os.WriteFile(cfg, []byte("stages:\n  per_apii: 5\n"), 0o644)
	if code, _, stderr := run(t, ctx, "mirror", "run", "--config", cfg); code != 2 || !strings.Contains(stderr, "per_api") {
		t.Errorf("a mistyped key: exit %d %s", code, stderr)
	}
	if code, _, stderr := run(t, ctx, "mirror", "run", "--config", filepath.Join(dir, "none.yaml")); code != 3 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("a missing file: exit %d %s", code, stderr)
	}
}
