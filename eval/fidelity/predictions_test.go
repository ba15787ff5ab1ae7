package fidelity

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping/embed"
)

// TestPredictionsBLEUEqualsNLTK scores a generated_predictions.jsonl in
// the form LLaMA-Factory writes it and holds every sentence BLEU, their
// mean and the corpus BLEU to what NLTK 3.8 computes for the same file
// (testdata/predictions/make.py), for characters and words, smoothing
// method3 (MirrorAPI's) and method1.
func TestPredictionsBLEUEqualsNLTK(t *testing.T) {
	dir := filepath.Join("testdata", "predictions")
	preds, err := ReadPredictions(filepath.Join(dir, "generated_predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 40 || preds[5].Predict != "" || !strings.HasPrefix(preds[0].Prompt, "API doc:") {
		t.Fatalf("read %d predictions: %+v", len(preds), preds[5])
	}
	raw, err := os.ReadFile(filepath.Join(dir, "nltk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Sets map[string]struct {
			PerLine []string `json:"per_line"`
			Mean    string   `json:"mean_x100"`
			Corpus  string   `json:"corpus_x100"`
		} `json:"sets"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	f := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for name, want := range ref.Sets {
		tokens, method, _ := strings.Cut(name, "/")
		sm, err := bleu.ParseSmoothing(method)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ScorePredictions(context.Background(), "p", preds, PredictionsConfig{BLEU: &BLEUOptions{Tokens: tokens, Smoothing: sm}})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range rep.Scored {
			if w := f(want.PerLine[i]); math.Abs(s.BLEU-w) > 1e-15 {
				t.Errorf("%s line %d: BLEU %v, NLTK %v", name, s.Line, s.BLEU, w)
			}
		}
		if w := f(want.Mean); math.Abs(rep.BLEU.Mean-w) > 1e-12 || rep.BLEU.N != 40 {
			t.Errorf("%s: mean %v (n=%d), NLTK %v", name, rep.BLEU.Mean, rep.BLEU.N, w)
		}
		if w := f(want.Corpus); math.Abs(rep.CorpusBLEU-w) > 1e-12 {
			t.Errorf("%s: corpus %v, NLTK %v", name, rep.CorpusBLEU, w)
		}
	}
}

// TestPredictionsJudgeAndCosine: with an embeddings endpoint and a judge
// (servers on loopback), the cosine and the rating are measured over the
// predictions that got them, the prompt is the judge's question, and an
// unreadable verdict is counted and left out, never scored; with no
// readable verdict the report says so instead of a number.
func TestPredictionsJudgeAndCosine(t *testing.T) {
	preds := []Prediction{
		{Line: 1, Prompt: "API doc: weather", Predict: `{"error": "", "response": "sunny"}`, Label: `{"error": "", "response": "sunny"}`},
		{Line: 2, Prompt: "API doc: songs", Predict: `{"error": "", "response": "[]"}`, Label: `{"error": "", "response": "[1]"}`},
		{Line: 3, Prompt: "API doc: rates", Predict: "x", Label: "y"},
	}
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Messages) == 0 {
			return llmtest.Reply{Embed: func(text string) []float32 { return []float32{float32(len(text)), 1} }}
		}
		user := req.Messages[1].Content
		switch {
		case strings.Contains(user, "API doc: weather"):
			return llmtest.Reply{Content: "Rating: [[9]]"}
		case strings.Contains(user, "API doc: songs"):
			return llmtest.Reply{Content: "Rating: [[3]]"}
		}
		return llmtest.Reply{Content: "I cannot rate this."}
	})
	defer srv.Close()
	client := llm.New(srv.URL(), llm.Options{MaxRetries: -1})
	rep, err := ScorePredictions(context.Background(), "p", preds, PredictionsConfig{
		Embedder: embed.Remote{Client: client, Model: "emb"},
		Judge:    &Judge{Model: client, ModelName: "judge"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rating == nil || rep.Rating.N != 2 || rep.Rating.Mean != 6 || rep.Unparseable != 1 {
		t.Errorf("rating %+v, unparseable %d", rep.Rating, rep.Unparseable)
	}
	if rep.Cosine == nil || rep.Cosine.N != 3 || rep.Cosine.Mean <= 0 || rep.Cosine.Mean > 100 {
		t.Errorf("cosine %+v", rep.Cosine)
	}
	md := rep.Markdown()
	if !strings.Contains(md, "| Judge rating (1-10, judge) | 6.00 | 2 |") || !strings.Contains(md, "1 judge verdict(s) with no rating") {
		t.Errorf("report:\n%s", md)
	}

	none := llmtest.New(func(n int, req *llm.Request) llmtest.Reply { return llmtest.Reply{Content: "no idea"} })
	defer none.Close()
	rep, err = ScorePredictions(context.Background(), "p", preds, PredictionsConfig{Judge: &Judge{Model: llm.New(none.URL(), llm.Options{MaxRetries: -1}), ModelName: "judge"}})
	if err != nil {
		t.Fatal(err)
	}
	md = rep.Markdown()
	if !strings.Contains(md, "none: no verdict could be read (3 unreadable") || strings.Contains(md, "| 0.00 | 0 |") || !strings.Contains(md, "not measured (give --embed-url") {
		t.Errorf("a figure over nothing shown as measured:\n%s", md)
	}
}

// TestReadPredictionsBadInput: a line that is not a prediction names the
// file and the line.
func TestReadPredictionsBadInput(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{`{"predict": "a", "label": "b"}` + "\n" + `{"predict": "a"}`, `line 2: no "label"`},
		{`{"predict": 3, "label": "b"}`, `line 1: "predict" must be text`},
		{"not json", "line 1: not a JSON object"},
		{"\n\n", "no predictions"},
	} {
		p := filepath.Join(t.TempDir(), "g.jsonl")
		if err := os.WriteFile(p, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPredictions(p); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "g.jsonl") {
			t.Errorf("%q: %v, want %q", tt.text, err, tt.want)
		}
	}
}
