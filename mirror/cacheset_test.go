package mirror_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/store"
)

// TestCacheSet makes the cache-model data from a real toolenv store:
// real answers only, of loaded tools only, a seeded held-out set.
func TestCacheSet(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "store.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tools := exportTools(t)
	var entries []*store.Entry
	for i := range 40 {
		tool := tools[i%2]
		args, _ := toolenv.Canonical(map[string]any{tool.Params()[0]: fmt.Sprint("v", i)})
		origin := []string{"upstream", "import", "simulator", "upstream"}[i%4]
		entries = append(entries, &store.Entry{Tool: tool.ID, Args: string(args), Status: toolenv.StatusOK, Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Origin: origin})
	}
	entries = append(entries, &store.Entry{Tool: "other/api", Args: `{}`, Status: toolenv.StatusOK, Body: json.RawMessage(`1`), Origin: "upstream"})
	if _, err := st.PutMany(ctx, entries, true); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var progress logtest.Buffer
	cs, err := mirror.CacheSet(ctx, st, tools, mirror.CacheSetOptions{Out: out, Test: 5, Seed: 1, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	for _, bar := range []string{"cache-set: choose the test entries: 41\n", "cache-set: write the samples: 41/41 (100%)\n"} {
		if !strings.Contains(progress.String(), bar) {
			t.Errorf("no progress line %q in:\n%s", bar, progress.String())
		}
	}
	if cs.Entries != 41 || cs.Test != 5 || cs.Train != 25 || cs.Skipped["origin simulator"] != 10 || cs.Skipped["tool not loaded"] != 1 {
		t.Fatalf("cache set: %+v", cs)
	}
	if n := len(readSamples(t, filepath.Join(out, mirror.FileTrainOpenAI))); n != 25 {
		t.Fatalf("%d training samples", n)
	}
	pairs, problems, err := fidelity.ReadPairs(filepath.Join(out, mirror.FileCacheTest))
	if err != nil || len(problems) > 0 || len(pairs) != 5 {
		t.Fatalf("held-out pairs: %d %v %v", len(pairs), problems, err)
	}
	again := t.TempDir()
	if _, err := mirror.CacheSet(ctx, st, tools, mirror.CacheSetOptions{Out: again, Test: 5, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	sameTreeMin(t, out, again, 5)
	other := t.TempDir()
	mirror.CacheSet(ctx, st, tools, mirror.CacheSetOptions{Out: other, Test: 5, Seed: 2})
	a, _ := os.ReadFile(filepath.Join(out, mirror.FileCacheTest))
	b, _ := os.ReadFile(filepath.Join(other, mirror.FileCacheTest))
	if string(a) == string(b) {
		t.Fatal("another seed held out the same entries")
	}
}

// sameTreeMin is sameTree for small folders.
func sameTreeMin(t *testing.T, a, b string, min int) {
	t.Helper()
	entries, _ := os.ReadDir(a)
	if len(entries) < min {
		t.Fatalf("%d files in %s", len(entries), a)
	}
	for _, e := range entries {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, _ := os.ReadFile(filepath.Join(b, e.Name()))
		if string(x) != string(y) {
			t.Errorf("%s differs", e.Name())
		}
	}
}

// TestFACFiles writes the FAC annotation files of evaluation episodes and
// has a model on loopback annotate them — it answers as asked, with
// garbage, or refuses — then writes them again from the records alone,
// the model gone, byte for byte the same.
func TestFACFiles(t *testing.T) {
	ctx := context.Background()
	ep := func(task, agentName, final string) *eval.Episode {
		return &eval.Episode{TaskID: task, Agent: agentName, Model: "m", Query: "What is the weather in " + task + "?",
			Outcome: &agent.Outcome{Trajectory: &toolenv.Trajectory{Finished: final != "", Answer: final}, FinalAnswerRaw: final}}
	}
	eps := []*eval.Episode{
		ep("Paris", "cot", `{"return_type": "give_answer", "final_answer": "Sunny, 23 degrees."}`),
		ep("Oslo", "react", "Rain all day."),
		ep("Rome", "cot", ""),
		ep("Lima", "cot", "Foggy."),
		ep("Kyiv", "cot", "Snow."),
	}
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		p := req.Messages[0].Content
		switch {
		case strings.Contains(p, "Rain all day"):
			return llmtest.Reply{Content: "Answer Status\nUnsolved\nReason\nIt gives no temperature."}
		case strings.Contains(p, "Foggy."):
			return llmtest.Reply{Content: "%%%% <|endoftext|> 0x7f"}
		case strings.Contains(p, "Snow."):
			return llmtest.Reply{Content: "I'm sorry, but I can't help with that."}
		}
		return llmtest.Reply{Content: "Answer Status\nSolved\nReason\nIt answers the question."}
	})
	defer srv.Close()
	rec := newStore(t)
	out := t.TempDir()
	var progress logtest.Buffer
	j := &judge.Judge{Model: llm.New(srv.URL(), llm.Options{MaxRetries: -1, Recorder: rec, Reuse: true}), ModelName: "gpt-4-turbo"}
	st, err := mirror.FACFiles(ctx, eps, mirror.FACOptions{Out: out, Judge: j, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != 4 || st.NoAnswer != 1 || st.Labels["Solved"] != 1 || st.Labels["Unsolved"] != 1 || st.Labels["Unparseable"] != 2 {
		t.Fatalf("fac: %+v", st)
	}
	if !strings.Contains(progress.String(), "fac: episodes: 5/5 (100%)") {
		t.Errorf("no progress bar: %q", progress.String())
	}
	raw, _ := os.ReadFile(filepath.Join(out, mirror.FileFACPrompts))
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var first struct {
		Answer   string
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal([]byte(lines[0]), &first)
	if first.Answer != "Sunny, 23 degrees." || !strings.Contains(first.Messages[0].Content, "Sunny, 23 degrees.") ||
		!strings.Contains(first.Messages[0].Content, "What is the weather in Paris?") || !strings.Contains(first.Messages[0].Content, "DO NOT BE TOO HARSH") {
		t.Fatalf("first prompt: %+v", first)
	}
	f, _ := os.Open(filepath.Join(out, mirror.FileFACSheet))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 5 || rows[0][3] != "label (Solved/Unsolved)" || rows[2][2] != "Rain all day." {
		t.Fatalf("fac.csv: %v %q", err, rows)
	}
	labels, _ := os.ReadFile(filepath.Join(out, mirror.FileFACLabels))
	for _, want := range []string{`"label":"Unsolved"`, `"label":"Solved"`, `"raw":"I'm sorry, but I can't help with that."`, `"raw":"%%%% <|endoftext|> 0x7f"`} {
		if !strings.Contains(string(labels), want) {
			t.Errorf("labels lack %s:\n%s", want, labels)
		}
	}

	// Replay: the records alone, the model gone.
	srv.Close()
	rec2 := newStore(t)
	copyRecords(t, rec.Path(), rec2.Path())
	again := t.TempDir()
	j2 := &judge.Judge{Model: llm.New(srv.URL(), llm.Options{MaxRetries: -1, Recorder: rec2, Replay: true}), ModelName: "gpt-4-turbo"}
	if _, err := mirror.FACFiles(ctx, eps, mirror.FACOptions{Out: again, Judge: j2}); err != nil {
		t.Fatal(err)
	}
	sameTreeMin(t, out, again, 4)
}
