package mirror_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/toolbench"
)

// trainDataset stores training pairs of the tools, a third of them with a
// kept rationale.
func trainDataset(t *testing.T, tools []*toolenv.Tool, per int) *mirror.Engine {
	t.Helper()
	st := newStore(t)
	var pairs []*mirror.Pair
	var rs []*mirror.Rationale
	for _, tool := range tools {
		for i := range per {
			args, _ := toolenv.Canonical(map[string]any{tool.Params()[0]: fmt.Sprintf("value é %d", i)})
			p := &mirror.Pair{Tool: tool.ID, Args: string(args), Origin: mirror.OriginReal, Status: toolenv.StatusOK,
				Body: json.RawMessage(fmt.Sprintf(`{"items":[{"name":"n%d","score":%d.5}],"note":"ünïcode \u2028"}`, i, i)), Class: "success",
				Filter: mirror.FilterKept, Split: mirror.SplitTrain}
			if i%4 == 3 {
				p.Status, p.Body, p.Error = toolenv.StatusInvalidArguments, nil, "missing parameter"
			}
			pairs = append(pairs, p)
			if i%3 == 0 {
				rs = append(rs, &mirror.Rationale{Tool: p.Tool, Args: p.Args, Text: fmt.Sprintf("The API looks the value up (%d).", i), Verdict: mirror.FilterKept})
			}
		}
	}
	ctx := context.Background()
	if err := st.PutPairs(ctx, "test", pairs); err != nil {
		t.Fatal(err)
	}
	if err := st.PutRationales(ctx, "test", rs); err != nil {
		t.Fatal(err)
	}
	return &mirror.Engine{Store: st, Dataset: "test", Tools: tools}
}

// exportTools are a ToolBench API (parameter names standardized, the
// documented ones kept) and a documented weather API.
func exportTools(t *testing.T) []*toolenv.Tool {
	doc := toolbench.APIDoc{CategoryName: "Sports", ToolName: "The Clique", APIName: "Get Player", APIDescription: "Returns a player.",
		RequiredParameters: []toolbench.ParamDoc{{Name: "id", Type: "STRING", Description: "The player's id", Default: "42"}}, Method: "GET"}
	tb := doc.Tool()
	tb.Collection, tb.ID = "toolbench", "toolbench/"+tb.Name
	return []*toolenv.Tool{tb, forecastTool()}
}

// TestExportMatchesSimulator checks that every exported user turn is the
// one toolenv's simulator sends for the same call, so that a model is
// trained on what it is served.
func TestExportMatchesSimulator(t *testing.T) {
	tools := exportTools(t)
	e := trainDataset(t, tools, 12)
	out := t.TempDir()
	if _, err := e.Export(context.Background(), mirror.ExportOptions{Out: out, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, s := range readSamples(t, filepath.Join(out, mirror.FileTrainOpenAI)) {
		exported[s[1]] = true
	}
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": "ok"}`}))
	defer srv.Close()
	for _, prompt := range []string{simulate.PromptSFT, simulate.PromptCoT} {
		sim, err := simulate.New(llm.New(srv.URL(), llm.Options{MaxRetries: -1}), simulate.Options{Prompt: prompt, FewShot: -1})
		if err != nil {
			t.Fatal(err)
		}
		sent := 0
		e.Store.EachPair(context.Background(), "test", mirror.PairQuery{}, func(p *mirror.Pair) error {
			var args map[string]any
			toolenv.DecodeJSON([]byte(p.Args), &args)
			tool := tools[0]
			if tool.ID != p.Tool {
				tool = tools[1]
			}
			sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: args})
			reqs := srv.Requests()
			last := reqs[len(reqs)-1].Messages
			if !exported[last[len(last)-1].Content] {
				t.Fatalf("the simulator (%s) sent a user turn no exported sample has:\n%s", prompt, last[len(last)-1].Content)
			}
			if last[0].Content != map[string]string{simulate.PromptSFT: simulate.SFTSystemPrompt, simulate.PromptCoT: simulate.CoTSystemPrompt}[prompt] {
				t.Fatal("system prompts differ")
			}
			sent++
			return nil
		})
		if sent != 24 {
			t.Fatalf("%d calls", sent)
		}
	}
}

// readSamples returns (system, user, assistant) of each line of an
// OpenAI-messages file.
func readSamples(t *testing.T, path string) [][3]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][3]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, [3]string{s.Messages[0].Content, s.Messages[1].Content, s.Messages[2].Content})
	}
	return out
}

// TestExportFormats checks the two training files against each other,
// the mix of SFT and CoT samples, and that exporting twice gives the
// same bytes.
func TestExportFormats(t *testing.T) {
	e := trainDataset(t, exportTools(t), 60)
	a, b := t.TempDir(), t.TempDir()
	st, err := e.Export(context.Background(), mirror.ExportOptions{Out: a, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.SFT != 120 || st.CoT != 40 {
		t.Fatalf("export: %+v, want 120 SFT and 40 CoT samples", st)
	}
	if _, err := e.Export(context.Background(), mirror.ExportOptions{Out: b, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, a, b)
	oa := readSamples(t, filepath.Join(a, mirror.FileTrainOpenAI))
	f, _ := os.Open(filepath.Join(a, mirror.FileTrainShareGPT))
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	i := 0
	for sc.Scan() {
		var s struct {
			Conversations []struct{ From, Value string } `json:"conversations"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		c := s.Conversations
		if len(c) != 3 || c[0].From != "system" || c[1].From != "human" || c[2].From != "gpt" || c[0].Value != oa[i][0] || c[1].Value != oa[i][1] || c[2].Value != oa[i][2] {
			t.Fatalf("line %d: the ShareGPT sample differs from the OpenAI one", i+1)
		}
		i++
	}
	if i != len(oa) {
		t.Fatalf("%d ShareGPT samples, %d OpenAI ones", i, len(oa))
	}
	// Every quarter of the file holds CoT samples in about their share.
	for q := range 4 {
		cot := 0
		for _, s := range oa[q*40 : (q+1)*40] {
			if s[0] == simulate.CoTSystemPrompt {
				cot++
			}
		}
		if cot < 8 || cot > 12 {
			t.Errorf("quarter %d of the file holds %d CoT samples of 40, want about 10", q+1, cot)
		}
	}
	// Another seed gives another order of the same samples.
	c := t.TempDir()
	if _, err := e.Export(context.Background(), mirror.ExportOptions{Out: c, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	oc := readSamples(t, filepath.Join(c, mirror.FileTrainOpenAI))
	if fmt.Sprint(oc) == fmt.Sprint(oa) {
		t.Fatal("another seed gave the same order")
	}
	key := func(ss [][3]string) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s[0]+s[1]+s[2])
		}
		sort.Strings(out)
		return out
	}
	if fmt.Sprint(key(oc)) != fmt.Sprint(key(oa)) {
		t.Fatal("another seed gave other samples")
	}
	var info map[string]any
	raw, _ := os.ReadFile(filepath.Join(a, mirror.FileDatasetInfo))
	if err := json.Unmarshal(raw, &info); err != nil || info["mirror_openai"] == nil || info["mirror_sharegpt"] == nil {
		t.Fatalf("dataset_info.json: %v %s", err, raw)
	}
}
