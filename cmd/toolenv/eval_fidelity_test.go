package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/store"
)

// fidelityStore writes a real SQLite store with recorded answers of the
// demo's tools: two real ones, one a simulator made and one of a tool no
// loaded collection has.
func fidelityStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, e := range []struct{ tool, args, body, origin string }{
		{"demo/get_book", `{"isbn":"9780441172719"}`, `{"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "year": 1965}`, "upstream"},
		{"demo/current_weather", `{"city":"Lyon"}`, `{"city": "Lyon", "temperature": 17.5, "units": "metric", "condition": "sunny"}`, "import"},
		{"demo/current_weather", `{"city":"Nice"}`, `{"city": "Nice", "temperature": 3}`, "simulator"},
		{"toolbench/other_api", `{}`, `"hello"`, "import"},
	} {
		if _, err := st.Put(context.Background(), &store.Entry{Tool: e.tool, Args: e.args, Body: json.RawMessage(e.body), Origin: e.origin}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// mirrorModel plays MirrorAPI: the book exactly as the real API answered,
// the weather a little off.
func mirrorModel(n int, req *llm.Request) llmtest.Reply {
	last := req.Messages[len(req.Messages)-1].Content
	if strings.Contains(last, "9780441172719") {
		return llmtest.Reply{Content: `{"error": "", "response": {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "year": 1965}}`}
	}
	return llmtest.Reply{Content: `{"error": "", "response": {"city": "Lyon", "temperature": 12.0, "units": "metric", "condition": "cloudy"}}`}
}

// judgeModel answers the two judge prompts and embeddings requests.
func judgeModel(n int, req *llm.Request) llmtest.Reply {
	switch {
	case len(req.Messages) == 0:
		return llmtest.Reply{} // embeddings: a vector from each text's length
	case req.Messages[0].Content == "You are a helpful assistant.":
		if strings.Contains(req.Messages[1].Content, "Lyon") {
			return llmtest.Reply{Content: "Plausible weather, other values. Rating: [[7]]"}
		}
		return llmtest.Reply{Content: "Exactly as documented. Rating: [[10]]"}
	}
	return llmtest.Reply{Content: `{"overall_eval": 1, "reason": "follows the documentation"}`}
}

// TestEvalFidelityEndToEnd runs "toolenv eval fidelity" with the MirrorAPI
// simulator, the judges and an embeddings endpoint on loopback test
// servers, then again with --replay and the servers gone: the same
// summary, byte for byte.
func TestEvalFidelityEndToEnd(t *testing.T) {
	db := fidelityStore(t)
	sim := llmtest.New(mirrorModel)
	judge := llmtest.New(judgeModel)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"eval", "fidelity", "--demo", "--store", db, "--out", out, "--retries", "0",
		"--llm-url", sim.URL(), "--llm-model", "mirror", "--sim-prompt", "sft",
		"--judge-url", judge.URL(), "--judge-model", "gpt-4o", "--embed-url", judge.URL(), "--embed-model", "text-embedding-3-small"}
	code, stdout, stderr := run(t, context.Background(), args...)
	sim.Close()
	judge.Close()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "| 2 |") || !strings.Contains(stdout, "simulator 2") {
		t.Errorf("overview: %s", stdout)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s fidelity.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	o := s.Overall
	if o.Pairs != 2 || o.Rating.Mean != 8.5 || o.DocFollowing.Mean != 100 || o.Cosine.N != 2 || o.Sources["simulator"] != 2 || o.StatusAgreement.Mean != 100 {
		t.Errorf("overall %+v", o)
	}
	if len(s.Tools) != 2 || s.Tools[0].Tool != "demo/current_weather" || s.Tools[1].Tool != "demo/get_book" || s.Tools[1].BLEU.Mean != 100 {
		t.Errorf("tools %+v", s.Tools)
	}
	if b := s.Tools[0].BLEU.Mean; b <= 20 || b >= 100 {
		t.Errorf("the weather's BLEU %v", b)
	}
	if s.Settings.Embedder != "openai:text-embedding-3-small" || s.Settings.EmbedderOffline || s.Settings.Judge != "gpt-4o" || len(s.Settings.Prompts) != 4 {
		t.Errorf("settings %+v", s.Settings)
	}
	if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "toolbench/other_api") {
		t.Errorf("skipped %v", s.Skipped)
	}
	for _, name := range append(fidelity.Files, "run.json", "records.db") {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}

	// Replay: no server, the same scores.
	again := filepath.Join(t.TempDir(), "replay")
	code, _, stderr = run(t, context.Background(), append(args[:len(args):len(args)], "--out", again, "--replay", "--records", filepath.Join(out, "records.db"))...)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	raw2, err := os.ReadFile(filepath.Join(again, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same summary but for the command line each records (the
	// replay's has --replay and its own --out).
	var s2 fidelity.Summary
	if err := json.Unmarshal(raw2, &s2); err != nil {
		t.Fatal(err)
	}
	if s.Provenance == nil || s2.Provenance == nil || !strings.Contains(strings.Join(s2.Provenance.Command, " "), "--replay") {
		t.Fatalf("the summaries do not record their command lines: %v %v", s.Provenance, s2.Provenance)
	}
	s.Provenance.Command, s2.Provenance.Command = nil, nil
	if a, b := mustJSON(t, s), mustJSON(t, s2); !bytes.Equal(a, b) {
		t.Errorf("the replay scored differently:\n%s\n%s", a, b)
	}
}

// TestEvalFidelityOffline scores the demo's documented answers and a
// pairs file with the offline synthesizer and embedder, one tool only.
func TestEvalFidelityOffline(t *testing.T) {
	dir := t.TempDir()
	pairs := filepath.Join(dir, "pairs.jsonl")
	lines := `{"tool": "get_book", "args": {"isbn": "9780553293357"}, "response": {"isbn": "9780553293357", "title": "Foundation"}}
{"tool": "demo/current_weather", "args": "{\"city\": \"Rome\"}", "response": {"city": "Rome", "temperature": 25}}
this line is broken
`
	if err := os.WriteFile(pairs, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := run(t, context.Background(), "eval", "fidelity", "--demo", "--store", filepath.Join(dir, "empty.db"),
		"--pairs", pairs, "--doc-examples", "--tool", "demo/get_book", "--sample", "2", "--seed", "5", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s fidelity.Summary
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Overall.Pairs != 2 || len(s.Tools) != 1 || s.Tools[0].Tool != "demo/get_book" || s.Overall.Sources[string(toolenv.SourceSynthesizer)] != 2 {
		t.Errorf("summary %+v", s)
	}
	if !s.Settings.EmbedderOffline || s.Settings.Embedder != "hash-v1-512" || s.Overall.Cosine.N != 2 || s.Overall.Rating.N != 0 {
		t.Errorf("offline settings %+v, overall %+v", s.Settings, s.Overall)
	}
	if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "pairs.jsonl:3") {
		t.Errorf("skipped %v", s.Skipped)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "offline lexical embedder") || !strings.Contains(string(md), "At most 2 pair(s) per tool") {
		t.Errorf("report.md:\n%s", md)
	}
}

func TestEvalFidelityUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo"}, "--out is required"},
		{[]string{"--demo", "--out", dir, "--judge-url", "http://127.0.0.1:9/v1"}, "--judge-url and --judge-model go together"},
		{[]string{"--demo", "--out", dir, "--embed-model", "e"}, "--embed-url and --embed-model go together"},
		{[]string{"--demo", "--out", dir, "--bleu-smoothing", "method6"}, "unknown BLEU smoothing"},
		{[]string{"--demo", "--out", dir, "--bleu-tokens", "jieba"}, `--bleu-tokens: "jieba" is not one of chars, words`},
		{[]string{"--demo", "--out", dir, "--upstream-url", "http://127.0.0.1:9"}, "do not apply"},
		{[]string{"--demo", "--out", filepath.Join(dir, "r"), "--replay"}, "no records"},
		{[]string{"--demo", "--out", dir, "--store", filepath.Join(dir, "s.db")}, "no real answers to score"},
		{[]string{"--demo", "--out", dir, "--store", filepath.Join(dir, "s.db"), "--pairs", filepath.Join(dir, "missing.jsonl")}, "--pairs"},
	} {
		code, _, stderr := run(t, context.Background(), append([]string{"eval", "fidelity"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestEvalFidelityInterrupted cancels the run while the second pair is
// being simulated (request 0 is the endpoint's check): the first pair's
// scores are written, the reports say 1 of 2 pairs was scored, the exit
// code is 130.
func TestEvalFidelityInterrupted(t *testing.T) {
	db := fidelityStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if n <= 1 {
			return mirrorModel(n, req)
		}
		cancel()
		return llmtest.Reply{Delay: 10 * time.Second}
	})
	defer sim.Close()
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := run(t, ctx, "eval", "fidelity", "--demo", "--store", db, "--out", out, "--retries", "0", "--concurrency", "1",
		"--llm-url", sim.URL(), "--llm-model", "mirror")
	if code != 130 || !strings.Contains(stderr, "interrupted") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s fidelity.Summary
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Overall.Pairs != 1 || s.Overall.Sources["simulator"] != 1 {
		t.Errorf("after the interrupt: %+v", s.Overall)
	}
	if want := (fidelity.RunStatus{Planned: 2, Scored: 1, Missing: 1, Interrupted: true}); s.Status == nil || *s.Status != want {
		t.Errorf("status %+v, want %+v", s.Status, want)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "> **Incomplete run: 1 of 2 planned pairs scored; 1 never asked because the run was interrupted.") {
		t.Errorf("report.md has no banner:\n%s", md)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
