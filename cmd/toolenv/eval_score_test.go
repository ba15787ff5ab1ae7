package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// scoreJSON reads DIR/score.json as Python would (NaN written as null by
// the report stays null).
func scoreJSON(t *testing.T, dir string) pyfmt.Dict {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "score.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := pyfmt.Loads(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v.(pyfmt.Dict)
}

func get(v any, path ...string) any {
	for _, k := range path {
		d, ok := v.(pyfmt.Dict)
		if !ok {
			return nil
		}
		v, _ = d.Get(k)
	}
	return v
}

func num(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case float64:
		return x
	case nil:
		return math.NaN()
	}
	return math.Inf(1)
}

// TestEvalScoreNestfulFixture runs "toolenv eval score nestful" on the
// NESTful fixture and holds score.json to what NESTful's own scorer
// returned (reference.json): every set as a whole and every sample alone,
// to 1e-9, and the samples it has no score for.
func TestEvalScoreNestfulFixture(t *testing.T) {
	dir := shareddata.RequireFixture(t, "reference-metrics", "nestful")
	out := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "eval", "score", "nestful", "--in", filepath.Join(dir, "cases.json"),
		"--reference", filepath.Join(dir, "reference.json"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}

	if !strings.Contains(stdout, " samples, intent F1 ") || !strings.Contains(stderr, "nestful: ") {
		t.Errorf("overview or progress missing:\n%s\n%s", stdout, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	refv, err := pyfmt.Loads(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	ref := get(refv, "sets").(pyfmt.Dict)
	got := scoreJSON(t, out)
	if get(got, "variant") != "reference" {
		t.Errorf("variant %v", get(got, "variant"))
	}
	same := func(a, b float64) bool {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.IsNaN(a) && math.IsNaN(b)
		}
		return math.Abs(a-b) <= 1e-9
	}
	// check compares one result of score.json with one of reference.json.
	check := func(what string, res any, errText any, want any) bool {
		if e := get(want, "error"); e != nil {
			return res == nil && strings.Contains(pyfmt.Str(errText), "unknown is not supported")
		}
		if res == nil {
			t.Errorf("%s: no result: %v", what, errText)
			return false
		}
		ok := true
		for _, k := range []string{"intent", "slot"} {
			w := get(want, k).([]any)
			for i, f := range []string{"precision", "recall", "f1"} {
				ok = ok && same(num(get(res, k, f)), num(w[i]))
			}
		}
		ok = ok && same(num(get(res, "partial_match")), num(get(want, "partial")))
		ok = ok && same(num(get(res, "full_match")), num(get(want, "full")))
		ok = ok && num(get(res, "parse_errors")) == num(get(want, "parse_errors"))
		return ok
	}
	samples, equal := 0, 0
	sets := get(got, "sets").([]any)
	for _, s := range sets {
		name := get(s, "name").(string)
		want, ok := ref.Get(name)
		if !ok {
			t.Fatalf("set %s not in the reference", name)
		}
		if !check(name, get(s, "result"), get(s, "error"), get(want, "aggregate")) {
			t.Errorf("set %s differs from the reference", name)
		}
		for _, p := range get(s, "per_sample").([]any) {
			id := get(p, "id").(string)
			samples++
			if check(name+" "+id, get(p, "result"), get(p, "error"), get(want, "per", id)) {
				equal++
			} else if samples-equal <= 5 {
				t.Errorf("%s %s differs from the reference", name, id)
			}
		}
	}
	if samples == 0 || equal != samples {
		t.Errorf("%d of %d samples equal to the reference", equal, samples)
	}
	// The command says so itself (--reference).
	if line := fmt.Sprintf("equal to NESTful's own output to 1e-9: %d of %d samples, %d of %d sets", samples, samples, len(sets), len(sets)); !strings.Contains(stdout, line) {
		t.Errorf("%q not in\n%s", line, stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "score.md"))
	if first := get(sets[0], "name").(string); err != nil || !strings.Contains(string(md), "| "+first+" | ") {
		t.Errorf("score.md: %v\n%.600s", err, md)
	}
}

// TestEvalScoreNestfulJSONL: the same records as JSON Lines with NESTful's
// own field names, read one set per "set" field, score alike.
func TestEvalScoreNestfulJSONL(t *testing.T) {
	lines := []string{
		`{"set": "a", "id": "1", "output": "[{\"name\": \"f\", \"arguments\": {\"q\": 1}, \"label\": \"var1\"}, {\"name\": \"g\", \"arguments\": {\"y\": \"$var1.out$\"}, \"label\": \"var2\"}]", "generated_text": "[{\"name\": \"f\", \"arguments\": {\"q\": 1}, \"label\": \"var7\"}, {\"name\": \"g\", \"arguments\": {\"y\": \"$var7.out$\"}, \"label\": \"var8\"}]"}`,
		``,
		`{"set": "a", "id": "2", "gold": [{"name": "f", "arguments": {"q": 1}}, {"name": "h", "arguments": {"z": [1, 2]}}], "pred": [{"name": "h", "arguments": {"z": [1, 2]}}]}`,
		`{"set": "b", "gold": [{"name": "f", "arguments": {"x": {"b": 1, "a": 2}}}, {"name": "g", "arguments": {"y": 1}}], "pred": [{"name": "f", "arguments": {"x": {"a": 2, "b": 1}}}, {"name": "g", "arguments": {"y": 1}}]}`,
	}
	in := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		flags      []string
		wantBFull  float64
		wantVarint string
	}{
		{nil, 0, "reference"},
		{[]string{"--unordered-objects"}, 1, "unordered-objects"},
		{[]string{"--corrected"}, 1, "unordered-objects,single-label-as-multi-label,scalar-prediction-as-parse-error"},
	} {
		out := t.TempDir()
		code, _, stderr := run(t, context.Background(), append([]string{"eval", "score", "nestful", "--in", in, "--out", out}, tt.flags...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		got := scoreJSON(t, out)
		sets := get(got, "sets").([]any)
		if len(sets) != 2 || get(sets[0], "name") != "a" || get(sets[1], "name") != "b" {
			t.Fatalf("sets: %v", pyfmt.Repr(sets))
		}
		// Set a: sample 1 matches once grounded (labels differ, APIs
		// agree); sample 2 misses f: aligned [f(q = 1), h(...)] against
		// ["", h(...)], accuracy 1/2.
		if p := num(get(sets[0], "result", "partial_match")); p != 0.75 {
			t.Errorf("%v: set a partial %v, want 0.75", tt.flags, p)
		}
		if f := num(get(sets[1], "result", "full_match")); f != tt.wantBFull {
			t.Errorf("%v: set b full %v, want %v", tt.flags, f, tt.wantBFull)
		}
		if v := get(got, "variant"); v != tt.wantVarint {
			t.Errorf("variant %v, want %s", v, tt.wantVarint)
		}
		ids := get(sets[1], "per_sample").([]any)
		if get(ids[0], "id") != "p.jsonl:4" {
			t.Errorf("a record without an id is named by its line: %v", get(ids[0], "id"))
		}
	}
}

// TestEvalScoreBFCLFixture runs "toolenv eval score bfcl" on the BFCL
// fixture: each case's two verdicts against BFCL's own, with the gold
// calls as the only possible answers, counted in the report.
func TestEvalScoreBFCLFixture(t *testing.T) {
	p := shareddata.RequireFixture(t, "reference-metrics", "bfcl", "cases.json")
	out := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "eval", "score", "bfcl", "--in", p, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := scoreJSON(t, out)
	cases := get(got, "per_case").([]any)
	nAST, nOrd := 0, 0
	for _, c := range cases {
		okAST := get(c, "ast") == get(c, "expect_ast")
		okOrd := get(c, "ordered") == get(c, "expect_ordered")
		if okAST {
			nAST++
		}
		if okOrd {
			nOrd++
		}
		// Which differences are allowed is TestBFCLMatchesReference's
		// business (eval/metrics); here the report must count them.
	}
	if line := fmt.Sprintf("verdicts equal to the file's: AST %d of %d, ordered %d of %d", nAST, len(cases), nOrd, len(cases)); !strings.Contains(stdout, line) {
		t.Errorf("%q not in\n%s", line, stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "score.md"))
	if err != nil || !strings.Contains(string(md), "## Agreement with the verdicts in the file") {
		t.Errorf("score.md: %v", err)
	}
}

// TestEvalScoreBadInput: malformed inputs fail with exit 2 and a message
// naming the file, the record and what is wrong; a missing file is 3.
func TestEvalScoreBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		metric, file, text string
		code               int
		want               []string
	}{
		{"nestful", "a.jsonl", "{\"gold\": \"[]\", \"pred\": \"[]\"}\n{\"gold\": \"[]\"}\n", 2, []string{"a.jsonl: line 2", `no "pred"`}},
		{"nestful", "b.jsonl", "{\"gold\": \"[]\", \"pred\": \"[]\"}\nnot json\n", 2, []string{"b.jsonl: line 2", "not JSON"}},
		{"nestful", "c.json", "{\"sets\": [{\"name\": \"s\", \"samples\": [{\"gold\": \"[]\", \"pred\": \"[]\"},\n 7]}]}", 2, []string{"c.json: sets[0] (s), samples[1]", "must be an object"}},
		{"nestful", "d.json", "{\"sets\": [{\"name\": \"s\",\n \"samples\": [}]}", 2, []string{"d.json: line 2, column 14", "not JSON"}},
		{"nestful", "e.jsonl", "{\"id\": \"q\", \"gold\": \"[{\\\"arguments\\\": {}}]\", \"pred\": \"[]\"}\n", 2, []string{"e.jsonl: line 1", "sample 1 (q): gold: KeyError: 'name'"}},
		{"nestful", "f.jsonl", "{\"gold\": \"[{\\\"name\\\": \\\"f\\\", \\\"arguments\\\": {\\\"x\\\": 1}}]\", \"pred\": \"7\"}\n", 2, []string{"f.jsonl: line 1", "'int' object is not iterable", "scalar-prediction-as-parse-error"}},
		{"nestful", "g.jsonl", "", 2, []string{"g.jsonl: the file is empty"}},
		{"nestful", "h.jsonl", "[1, 2]", 2, []string{"h.jsonl: record 1", "must be an object, not a number"}},
		{"bfcl", "i.jsonl", "{\"id\": \"simple_1\", \"tools\": [], \"gold\": []}\n", 2, []string{"i.jsonl: line 1 (simple_1)", `no "model_output"`}},
		{"bfcl", "j.jsonl", "{\"id\": \"simple_1\", \"model_output\": null}\n", 2, []string{"j.jsonl: line 1 (simple_1)", `no "gold" and no "ground_truth"`}},
		// A case BFCL's checker cannot check is reported, not fatal: the
		// others are scored (here, a second one that is).
		{"bfcl", "k.jsonl", "{\"id\": \"multiple_1\", \"tools\": [{\"name\": \"f\", \"properties\": [\"x\"]}], \"gold\": [{\"name\": \"g\", \"arguments\": {}}], \"model_output\": [{\"g\": {}}]}\n{\"id\": \"simple_2\", \"tools\": [{\"name\": \"f\", \"properties\": [\"x\"]}], \"gold\": [{\"name\": \"f\", \"arguments\": {\"x\": 1}}], \"model_output\": [{\"f\": {\"x\": 1}}]}\n", 0, []string{"## Not scored", `multiple_1 (ast): bfcl: no function description for "g"`, "| AST (leaderboard: any order for parallel categories) | 1 | 1 of 2 | 1.0000 |"}},
		{"bfcl", "l.jsonl", "{\"id\": \"x\", \"tools\": 3, \"gold\": [], \"model_output\": []}\n", 2, []string{"l.jsonl: line 1 (x)", "tools:"}},
	}
	for _, tt := range tests {
		p := write(tt.file, tt.text)
		code, stdout, stderr := run(t, context.Background(), "eval", "score", tt.metric, "--in", p)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d: %s", tt.file, code, tt.code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr+stdout, w) {
				t.Errorf("%s: %q not in %q", tt.file, w, stderr)
			}
		}
	}
	if code, _, stderr := run(t, context.Background(), "eval", "score", "nestful", "--in", filepath.Join(dir, "nope.json")); code != 3 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing file: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, context.Background(), "eval", "score", "bfcl"); code != 2 || !strings.Contains(stderr, "--in FILE is required") {
		t.Errorf("no --in: exit %d: %s", code, stderr)
	}
	code, stdout, _ := run(t, context.Background(), "eval", "score", "nestful", "--help")
	if code != 0 || !strings.Contains(stdout, "toolenv eval score nestful --in") {
		t.Errorf("--help has no example:\n%s", stdout)
	}
}

// TestEvalScoreStdout: without --out the Markdown report is printed.
func TestEvalScoreStdout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	line := `{"id": "simple_python_3", "tools": [{"name": "f", "properties": ["x"], "required": ["x"]}], "gold": [{"name": "f", "arguments": {"x": "New York"}}], "model_output": [{"f": {"x": "new_york"}}]}`
	if err := os.WriteFile(p, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, context.Background(), "eval", "score", "bfcl", "--in", p)
	if code != 0 || !strings.Contains(stdout, "# BFCL AST checker") || !strings.Contains(stdout, "| simple_python | 1 / 1 | 1 / 1 |") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
}

// TestEvalScoreNestfulParsers: --parser names the reference's parser,
// --model-name picks it as NESTful's scorer.py does, and the figures are
// the reference's (eval/metrics/testdata/nestful_parsers/reference.json:
// set generated/0 has intent F1 0.281 with the Hammer parser, 0.458 with
// Llama's, 0.198 with xLAM's).
func TestEvalScoreNestfulParsers(t *testing.T) {
	in := filepath.Join("..", "..", "eval", "metrics", "testdata", "nestful_parsers", "cases.json")
	out := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--parser", "hammer"}, "generated/0: 24 samples, intent F1 0.281"},
		{[]string{"--model-name", "Hammer2.0-7b"}, "generated/0: 24 samples, intent F1 0.281"},
		{[]string{"--parser", "llama"}, "generated/0: 24 samples, intent F1 0.458"},
		{[]string{"--model-name", "xLAM-7b-fc-r"}, "generated/0: 24 samples, intent F1 0.198"},
	} {
		code, stdout, stderr := run(t, context.Background(), append([]string{"eval", "score", "nestful", "--in", in, "--out", out}, tt.args...)...)
		if code != 0 || !strings.Contains(stdout, tt.want) {
			t.Errorf("%v: exit %d, %q not in\n%s%s", tt.args, code, tt.want, stdout, stderr)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "score.md"))
	if !strings.Contains(string(md), "`parse_xLAM_1b_fc_r` parser") {
		t.Errorf("score.md does not name the parser:\n%.400s", md)
	}
	for _, args := range [][]string{{"--parser", "mistral"}, {"--model-name", "ToolAce-8b"}} {
		code, _, stderr := run(t, context.Background(), append([]string{"eval", "score", "nestful", "--in", in}, args...)...)
		if code != 2 || !strings.Contains(stderr, "granite, llama, hammer") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestEvalScoreMirrorAPI: recorded predictions are scored with the
// models named (servers on loopback), the reports name every n, and a
// judge that does not answer stops the command before anything is
// written (exit 4).
func TestEvalScoreMirrorAPI(t *testing.T) {
	in := filepath.Join("..", "..", "eval", "fidelity", "testdata", "predictions", "generated_predictions.jsonl")
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Messages) == 0 {
			return llmtest.Reply{Embed: func(text string) []float32 { return []float32{float32(len(text) % 7), 1} }}
		}
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "api_3'") {
			return llmtest.Reply{Content: "hard to say"}
		}
		return llmtest.Reply{Content: "Rating: [[7]]"}
	})
	defer srv.Close()
	out := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "eval", "score", "mirrorapi", "--in", in, "--out", out,
		"--judge-url", srv.URL(), "--judge-model", "j", "--embed-url", srv.URL(), "--embed-model", "e")
	if code != 0 || !strings.Contains(stdout, "40 predictions: BLEU-4 48.34 (corpus 44.17)") || !strings.Contains(stdout, "judge rating 7.00 (n=39)") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "predictions.md"))
	if !strings.Contains(string(md), "| Judge rating (1-10, j) | 7.00 | 39 |") || !strings.Contains(string(md), "| Cosine × 100 (openai:e) |") {
		t.Errorf("predictions.md:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(out, "records.db")); err != nil {
		t.Errorf("no records: %v", err)
	}
	dead := t.TempDir()
	code, _, stderr = run(t, context.Background(), "eval", "score", "mirrorapi", "--in", in, "--out", filepath.Join(dead, "x"), "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "j")
	if code != 4 || !strings.Contains(stderr, "judge (--judge-url, --judge-model)") {
		t.Errorf("dead judge: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dead, "x")); err == nil {
		t.Errorf("the reports folder was made before the judge's check")
	}
}
