package mirror_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// runOptions are small sizes for a dataset of a few APIs.
func runOptions(out string) mirror.RunOptions {
	o := mirror.RunOptions{
		Generate: mirror.GenerateOptions{PerAPI: 12, Seed: 1, ScenariosPerCall: 4, Workers: 2},
		Collect:  mirror.CollectOptions{Workers: 4, Backoff: 1},
		Filter:   mirror.FilterOptions{Seed: 1, KeepFailures: 50},
		Synth:    mirror.SynthOptions{Below: 100, Target: 18, PerCall: 4, Seed: 1},
		Split:    mirror.SplitOptions{OODSuccess: 3, OODFailure: 1, OODPerAPI: 3, OODMaxAPIs: 0.34, IDSize: 2, Seed: 1},
		Explain:  mirror.ExplainOptions{Success: 1000, Failure: 1000, Seed: 1},
		Export:   mirror.ExportOptions{Out: out, Seed: 1, Card: mirror.CardInfo{Name: "weather", Sources: []string{"weather: a loopback API"}, Model: "test-model", Seeds: map[string]int64{"seed": 1}}},
	}
	o.Export.Card.Toolenv = buildinfo.Provenance(nil, map[string]any{"stages": o.Config()})
	return o
}

func modelEngine(t *testing.T, st mirror.Store, srvURL, modelURL string, replay bool) *mirror.Engine {
	t.Helper()
	e := engine(t, st, weatherTools(srvURL, "forecast", "cities", "flaky"), 1<<20)
	e.Model = llm.New(modelURL, llm.Options{Recorder: st, Reuse: true, Replay: replay, MaxRetries: -1})
	e.ModelName = "test-model"
	return e
}

// TestPipelineWithModel runs every stage with a model on loopback and
// checks what each model-facing stage did with good answers and bad ones.
// It then runs the whole pipeline again from the records alone, with the
// model server gone, and checks that every exported file is byte for byte
// the same.
func TestPipelineWithModel(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	m := newModel(t)
	dirA := t.TempDir()
	stA := newStore(t)
	e := modelEngine(t, stA, srv.URL, m.srv.URL(), false)
	var progress logtest.Buffer
	e.Progress = &progress
	rep, err := e.Run(ctx, runOptions(filepath.Join(dirA, "data")))
	if err != nil {
		t.Fatal(err)
	}
	// A progress bar per stage (plain lines: the writer is not a
	// terminal), each ending at its total.
	for _, bar := range []string{"generate requests", "collect responses", "filter: Appendix D rules", "filter: documentation check",
		"synthesize long-tail APIs", "split: MirrorAPI-Bench", "explain: rationales", "export training samples"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(bar) + `: (\d+)/(\d+) \(100%\)$`).MatchString(progress.String()) {
			t.Errorf("no finished progress bar %q in:\n%s", bar, progress.String())
		}
	}
	checkReportHTML(t, t.TempDir(), rep)
	stages := map[string]any{}
	for _, s := range rep.Stages {
		if s.Error != "" {
			t.Fatalf("stage %s: %s", s.Stage, s.Error)
		}
		stages[s.Stage] = s.Stats
	}
	gen := stages[mirror.StageGenerate].(*mirror.GenerateStats)
	if gen.Method != mirror.RequestLLM || gen.Added["scenario"] < 20 {
		t.Fatalf("generate: %+v", gen)
	}
	for _, reason := range []string{mirror.RejectUnparseable, mirror.RejectWrongAPI, mirror.RejectRefused} {
		if gen.Rejected[reason] == 0 {
			t.Errorf("generate rejected nothing as %s: %+v", reason, gen.Rejected)
		}
	}
	if m.count("scenarios") == 0 || m.count("call") < gen.Added["scenario"] {
		t.Errorf("model requests: %v", m.kinds)
	}
	// Refused and garbled scenario requests are rejects, and the API
	// gets its requests from further rounds.
	if m.count("scenarios:refused") == 0 || m.count("scenarios:unparseable") == 0 ||
		gen.Rejected[mirror.RejectRefused] < m.count("scenarios:refused") || gen.Rejected[mirror.RejectUnparseable] < m.count("scenarios:unparseable") {
		t.Errorf("bad scenario answers %v, rejected %v", m.kinds, gen.Rejected)
	}
	// Every request the model wrote is a call of its API with the
	// scenario's city.
	err = stA.EachRequest(ctx, e.Dataset, mirror.RequestQuery{Tool: "weather/forecast"}, func(r *mirror.Request) error {
		var args map[string]any
		json.Unmarshal([]byte(r.Args), &args)
		if r.Origin != mirror.RequestLLM || r.Scenario == "" || !strings.Contains(r.Scenario, args["city"].(string)) {
			return errors.New("request " + r.Args + " does not serve its scenario " + r.Scenario)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := stages[mirror.StageFilter].(*mirror.FilterStats)
	if !fs.DocChecked || fs.DocFollows == 0 || fs.DocNot == 0 || fs.DocUnparsed == 0 || fs.Dropped[mirror.FilterDocMismatch] != fs.DocNot {
		t.Errorf("documentation check: %+v", fs)
	}
	// The verdicts are stored with the model's words.
	for _, p := range pairsOf(t, e, "weather/forecast") {
		if p.Doc == nil || p.Doc.Model != "test-model" || p.Doc.Raw == "" {
			t.Fatalf("pair %s has no recorded verdict: %+v", p.Args, p.Doc)
		}
		if p.Doc.Eval == 0 && p.Filter != mirror.FilterDocMismatch {
			t.Fatalf("pair %s failed the check but is %q", p.Args, p.Filter)
		}
		if p.Doc.Eval == -1 && p.Filter != mirror.FilterKept {
			t.Fatalf("an unreadable verdict dropped pair %s (%q)", p.Args, p.Filter)
		}
	}
	syn := stages[mirror.StageSynthesize].(*mirror.SynthStats)
	if syn.Added == 0 || syn.Rejected[mirror.RejectDuplicate] == 0 || syn.Rejected[mirror.RejectConflict] == 0 || syn.Rejected[mirror.RejectUnparseable] == 0 ||
		syn.Rejected[mirror.RejectDocMismatch] == 0 {
		t.Errorf("synthesize: %+v", syn)
	}
	// The temperatures of §2.1.1 (scenarios 1.0, calls 0.1), the checks at
	// 0, and synthesis varying temperature and seed (§2.1.3).
	for kind, want := range map[string]string{"scenarios": "[1]", "call": "[0.1]", "doc": "[0]", "explain": "[1]"} {
		if temps, _ := m.asked(kind); fmt.Sprint(temps) != want {
			t.Errorf("%s requests at temperatures %v, want %s", kind, temps, want)
		}
	}
	if temps, seeds := m.asked("synthesize"); len(temps) < 2 || seeds < 2 {
		t.Errorf("synthesis asked at temperatures %v with %d seeds: not varied", temps, seeds)
	}
	for _, p := range pairsOf(t, e, "weather/forecast") {
		if p.Origin != mirror.OriginSynthesized {
			continue
		}
		var prov map[string]any
		if err := json.Unmarshal(p.Provenance, &prov); err != nil || prov["model"] != "test-model" || len(prov["examples"].([]any)) == 0 {
			t.Fatalf("synthesized pair %s: provenance %s", p.Args, p.Provenance)
		}
		if p.Split == mirror.SplitOODSuccess || p.Split == mirror.SplitIDHigh || p.Split == mirror.SplitIDMedium || p.Split == mirror.SplitIDLow {
			t.Fatalf("a synthesized pair is in test split %s", p.Split)
		}
	}
	ex := stages[mirror.StageExplain].(*mirror.ExplainStats)
	for _, reason := range []string{mirror.RationaleTooLong, mirror.RationaleLeak, mirror.RationaleRefused} {
		if ex.Dropped[reason] == 0 {
			t.Errorf("explain dropped nothing as %s: %+v", reason, ex)
		}
	}
	exp := stages[mirror.StageExport].(*mirror.ExportStats)
	if exp.CoT != ex.Kept || exp.SFT == 0 || exp.CoT == 0 {
		t.Errorf("export: %+v (kept rationales %d)", exp, ex.Kept)
	}
	checkExport(t, e, filepath.Join(dirA, "data"), exp)

	// Replay: a new store holding only the model records, the model gone.
	m.srv.Close()
	stB, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "replay.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	copyRecords(t, stA.Path(), stB.Path())
	dirB := t.TempDir()
	eB := modelEngine(t, stB, srv.URL, m.srv.URL(), true)
	if _, err := eB.Run(ctx, runOptions(filepath.Join(dirB, "data"))); err != nil {
		t.Fatalf("replay: %v", err)
	}
	sameTree(t, filepath.Join(dirA, "data"), filepath.Join(dirB, "data"))
}

// checkReportHTML writes the report and checks its HTML page draws the
// funnel: a bar per step (generated → called → kept → synthesized →
// explained → exported), in order, each as wide as its count.
func checkReportHTML(t *testing.T, dir string, rep *mirror.Report) {
	t.Helper()
	if err := mirror.WriteReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	svg := regexp.MustCompile(`(?s)<svg[^>]*aria-label="funnel">(.*?)</svg>`).FindSubmatch(page)
	if svg == nil {
		t.Fatal("report.html has no funnel chart")
	}
	bars := regexp.MustCompile(`<rect x="[\d.]+" y="\d+" width="([\d.]+)"[^>]*><title>([a-z]+): (\d+) `).FindAllSubmatch(svg[1], -1)
	steps := []string{mirror.StepGenerated, mirror.StepCalled, mirror.StepKept, mirror.StepSynthesized, mirror.StepExplained, mirror.StepExported}
	if len(bars) != len(steps) {
		t.Fatalf("the funnel has %d bars, want %d:\n%s", len(bars), len(steps), svg[1])
	}
	top := 0
	for _, f := range rep.Summary.Funnel {
		top = max(top, f.Count)
	}
	for i, b := range bars {
		f := rep.Summary.Funnel[i]
		w, _ := strconv.ParseFloat(string(b[1]), 64)
		n, _ := strconv.Atoi(string(b[3]))
		if string(b[2]) != steps[i] || f.Step != steps[i] || n != f.Count || f.Count == 0 {
			t.Errorf("bar %d: %s %d, want %s %d (non-zero)", i, b[2], n, steps[i], f.Count)
		}
		if want := 560 * float64(f.Count) / float64(top); w < want-0.1 || w > want+0.1 {
			t.Errorf("bar %s is %.1f wide for %d of %d", steps[i], w, f.Count, top)
		}
	}
	for _, want := range []string{"<table", "Per category", "Appendix D"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// copyRecords copies the model records of one store file into another.
func copyRecords(t *testing.T, from, to string) {
	t.Helper()
	db, err := sql.Open("sqlite", to)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{`ATTACH DATABASE '` + from + `' AS a`, `INSERT INTO records SELECT * FROM a.records`, `DETACH DATABASE a`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
}

// sameTree fails unless the two folders hold the same files, byte for
// byte.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		x, _ := os.ReadFile(path)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Errorf("%s: missing from the replay: %v", rel, err)
			return nil
		}
		n++
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the run and its replay (%d and %d bytes)", rel, len(x), len(y))
		}
		return nil
	})
	if n < 10 {
		t.Fatalf("only %d files compared", n)
	}
}

// checkExport reads the exported files back as a fine-tuning tool would.
func checkExport(t *testing.T, e *mirror.Engine, dir string, exp *mirror.ExportStats) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, mirror.FileTrainOpenAI))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var sft, cot, firstCoT, lastCoT int
	line := 0
	for sc.Scan() {
		line++
		var s struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if len(s.Messages) != 3 || s.Messages[0].Role != "system" || s.Messages[1].Role != "user" || s.Messages[2].Role != "assistant" {
			t.Fatalf("line %d: roles %+v", line, s.Messages)
		}
		var answer map[string]any
		if err := json.Unmarshal([]byte(s.Messages[2].Content), &answer); err != nil {
			t.Fatalf("line %d: the answer is not JSON: %v", line, err)
		}
		switch s.Messages[0].Content {
		case simulate.SFTSystemPrompt:
			sft++
			if _, ok := answer["mechanism_of_the_api"]; ok || len(answer) != 2 {
				t.Fatalf("line %d: an SFT answer %v", line, answer)
			}
		case simulate.CoTSystemPrompt:
			cot++
			if firstCoT == 0 {
				firstCoT = line
			}
			lastCoT = line
			if m, _ := answer["mechanism_of_the_api"].(string); m == "" || len(answer) != 3 {
				t.Fatalf("line %d: a CoT answer %v", line, answer)
			}
		default:
			t.Fatalf("line %d: the system prompt is neither Table 10's nor Table 11's", line)
		}
		if !strings.HasPrefix(s.Messages[1].Content, "API doc:\n{'api_name': ") {
			t.Fatalf("line %d: user turn %q", line, s.Messages[1].Content[:40])
		}
	}
	if sft != exp.SFT || cot != exp.CoT {
		t.Fatalf("file holds %d SFT and %d CoT samples, stats say %d and %d", sft, cot, exp.SFT, exp.CoT)
	}
	// Mixed: the CoT samples are spread through the file.
	if cot > 2 && (firstCoT > line/2 || lastCoT < line/2) {
		t.Fatalf("CoT samples at lines %d..%d of %d: not mixed", firstCoT, lastCoT, line)
	}
	if !strings.HasPrefix(simulate.CoTSystemPrompt, "[CHAIN_OF_THOUGHT]") {
		t.Fatal("the CoT system prompt lost its tag")
	}
	// The benchmark files are what eval fidelity reads.
	for _, split := range mirror.TestSplits {
		pairs, problems, err := fidelity.ReadPairs(filepath.Join(dir, mirror.DirBench, split+".jsonl"))
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", split, err, problems)
		}
		if len(pairs) != exp.Bench[split] {
			t.Fatalf("%s: %d pairs read, %d written", split, len(pairs), exp.Bench[split])
		}
		for _, p := range pairs {
			ok := p.Status == toolenv.StatusOK || p.Status == ""
			if (split == mirror.SplitOODFailure) == ok {
				t.Fatalf("%s holds a pair of status %s", split, p.Status)
			}
		}
	}
	checkCard(t, dir, exp)
}

// checkCard checks that the dataset card records the counts per
// category, API and split, the filter's losses per reason and rule, the
// sources, the seeds, and toolenv's version with the effective
// configuration, in card.json and README.md alike.
func checkCard(t *testing.T, dir string, exp *mirror.ExportStats) {
	t.Helper()
	card, err := os.ReadFile(filepath.Join(dir, mirror.FileCard))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| generated |", "## Sources", "weather: a loopback API", "## Splits", "| ood_success |", "## Per category", "| Weather |",
		"## Per API", "`weather/forecast`", "Dropped because", "## Seeds", "- seed: 1", "## Made with", "toolenv ", `"split": {`, `"OODSuccess": 3`} {
		if !bytes.Contains(card, []byte(want)) {
			t.Errorf("the dataset card lacks %q", want)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, mirror.FileCardJSON))
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Sources []string         `json:"sources"`
		Seeds   map[string]int64 `json:"seeds"`
		Toolenv struct {
			Version string `json:"version"`
			Go      string `json:"go"`
			Config  struct {
				Stages map[string]map[string]any `json:"stages"`
			} `json:"config"`
		} `json:"toolenv"`
		Summary mirror.Summary `json:"summary"`
	}
	if err := json.Unmarshal(raw, &cj); err != nil {
		t.Fatal(err)
	}
	s := cj.Summary
	splits := map[string]int{}
	for _, sp := range s.Splits {
		splits[sp.Split] = sp.Samples
	}
	apis := map[string]bool{}
	for _, a := range s.APIs {
		apis[a.Tool] = a.Requests > 0
	}
	if len(cj.Sources) == 0 || cj.Seeds["seed"] != 1 || cj.Toolenv.Version == "" || cj.Toolenv.Go == "" ||
		cj.Toolenv.Config.Stages["filter"]["KeepFailures"] != 50.0 || cj.Toolenv.Config.Stages["collect"]["Attempts"] != 3.0 {
		t.Errorf("card.json: sources %v, seeds %v, toolenv %+v", cj.Sources, cj.Seeds, cj.Toolenv)
	}
	if len(s.Categories) == 0 || s.Categories[0].Category != "Weather" || !apis["weather/forecast"] || !apis["weather/cities"] ||
		splits[mirror.SplitOODSuccess] != exp.Bench[mirror.SplitOODSuccess] || splits["train"] == 0 || len(s.Dropped) == 0 || len(s.DroppedByRule) == 0 {
		t.Errorf("card.json summary: categories %+v, APIs %v, splits %v, dropped %v by rule %v", s.Categories, apis, splits, s.Dropped, s.DroppedByRule)
	}
}

// TestConfigDefaults checks that the defaults are the paper's: 200
// requests per API, 3 attempts, ~10,000 failures kept, 10 examples per
// synthesis request, MirrorAPI-Bench's sizes (Table 1), 43,597 + 2,000
// rationales under 2,560 tokens.
func TestConfigDefaults(t *testing.T) {
	raw, err := json.Marshal(mirror.RunOptions{}.Config())
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage, key string
		want       float64
	}{
		{"generate", "PerAPI", 200}, {"collect", "Attempts", 3}, {"filter", "KeepFailures", 10000}, {"synthesize", "Examples", 10},
		{"split", "OODSuccess", 200}, {"split", "OODFailure", 100}, {"split", "IDSize", 100},
		{"explain", "Success", 43597}, {"explain", "Failure", 2000}, {"explain", "MaxTokens", 2560},
	} {
		if got := cfg[c.stage][c.key]; got != c.want {
			t.Errorf("%s.%s = %v, want %v", c.stage, c.key, got, c.want)
		}
	}
}
