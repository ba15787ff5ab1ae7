package fidelity

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/internal/promptfile"
)

// Prediction is one recorded simulator answer and the real one, as
// LLaMA-Factory writes them to generated_predictions.jsonl after a
// predict run (MirrorAPI-Bench's released predictions have this form):
// {"prompt", "predict", "label"} per line, the prompt optional.
type Prediction struct {
	// Line is the record's line in its file (from 1).
	Line    int    `json:"line"`
	Prompt  string `json:"prompt,omitempty"`
	Predict string `json:"predict"`
	Label   string `json:"label"`
}

// ReadPredictions reads a JSON Lines file of {"predict", "label"}
// objects ("prompt" optional). A line that is not such an object is an
// error naming the line; a missing file is a StatusNotFound error.
func ReadPredictions(path string) ([]Prediction, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, toolenv.Errorw(toolenv.StatusNotFound, "give the path of LLaMA-Factory's generated_predictions.jsonl", "%s: no such file", path)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	return readPredictions(f, path)
}

// readPredictions reads predictions from r, naming them path in errors.
func readPredictions(r io.Reader, path string) ([]Prediction, error) {
	const hint = `each line is {"predict": TEXT, "label": TEXT}, as LLaMA-Factory writes generated_predictions.jsonl ("prompt" optional)`
	var out []Prediction
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: line %d: not a JSON object: %v", path, n, err)
		}
		p := Prediction{Line: n}
		for _, fld := range []struct {
			name     string
			dst      *string
			required bool
		}{{"predict", &p.Predict, true}, {"label", &p.Label, true}, {"prompt", &p.Prompt, false}} {
			raw, ok := rec[fld.name]
			if !ok {
				if fld.required {
					return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: line %d: no %q", path, n, fld.name)
				}
				continue
			}
			if err := json.Unmarshal(raw, fld.dst); err != nil {
				return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: line %d: %q must be text", path, n, fld.name)
			}
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: no predictions", path)
	}
	return out, nil
}

// PredictionsConfig configures ScorePredictions.
type PredictionsConfig struct {
	// BLEU defaults to DefaultBLEU (characters, method3: MirrorAPI's).
	BLEU *BLEUOptions
	// Embedder scores the cosine; nil: not measured.
	Embedder Embedder
	// Judge rates each prediction against its label; nil: not judged.
	Judge *Judge
	// Concurrency is how many predictions are scored at once; default 4.
	Concurrency int
	// Progress is called after each scored prediction; may be nil.
	Progress func(done, total int)
}

// ScoredPrediction is one prediction's scores.
type ScoredPrediction struct {
	Prediction
	// BLEU is NLTK's sentence_bleu([label], predict), from 0 to 1.
	BLEU       float64  `json:"bleu"`
	Cosine     *float64 `json:"cosine,omitempty"`
	EmbedError string   `json:"embed_error,omitempty"`
	Rating     *Rating  `json:"rating,omitempty"`
}

// PredictionsReport is what ScorePredictions measured. Every mean names
// its n: the predictions that have the value.
type PredictionsReport struct {
	Input       string `json:"input"`
	Predictions int    `json:"predictions"`
	// BLEUTokens and BLEUSmoothing say how BLEU was computed.
	BLEUTokens    string `json:"bleu_tokens"`
	BLEUSmoothing string `json:"bleu_smoothing"`
	// BLEU is the mean sentence BLEU × 100 (MirrorAPI's figure and
	// LLaMA-Factory's "bleu-4"); CorpusBLEU NLTK's corpus_bleu × 100.
	BLEU       Stat    `json:"bleu"`
	CorpusBLEU float64 `json:"corpus_bleu"`
	// Embedder is the embedding model ("" when the cosine was not
	// measured); Cosine the mean cosine × 100 over the predictions whose
	// embeddings came back; EmbedFailed counts the others.
	Embedder    string `json:"embedder,omitempty"`
	Cosine      *Stat  `json:"cosine,omitempty"`
	EmbedFailed int    `json:"embed_failed,omitempty"`
	// Judge is the judge model ("" when not judged); Rating the mean
	// rating (1-10) over the readable verdicts; Unparseable counts the
	// verdicts with no rating, JudgeFailed the requests that failed.
	Judge       string              `json:"judge,omitempty"`
	Prompts     []promptfile.Prompt `json:"prompts,omitempty"`
	Rating      *Stat               `json:"rating,omitempty"`
	Unparseable int                 `json:"unparseable,omitempty"`
	JudgeFailed int                 `json:"judge_failed,omitempty"`
	Scored      []*ScoredPrediction `json:"per_prediction"`
}

// ScorePredictions scores recorded simulator predictions against their
// labels with MirrorAPI's measures: BLEU-4 as NLTK computes it
// (sentence_bleu per prediction, averaged, and corpus_bleu), the cosine
// of the two texts' embeddings, and the paper's LLM-as-a-judge rating
// with the prediction's prompt as the question. The texts are compared
// as written (LLaMA-Factory's compute_metrics compares the decoded texts).
// When ctx ends it returns ctx's error.
func ScorePredictions(ctx context.Context, input string, preds []Prediction, cfg PredictionsConfig) (*PredictionsReport, error) {
	bo := DefaultBLEU
	if cfg.BLEU != nil {
		bo = *cfg.BLEU
	}
	tok, err := bleu.ParseTokenizer(bo.Tokens)
	if err != nil {
		return nil, err
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 4
	}
	out := make([]*ScoredPrediction, len(preds))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for range min(conc, len(preds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := preds[i]
				s := &ScoredPrediction{Prediction: p}
				s.BLEU, _ = bleu.Sentence([][]string{tok(p.Label)}, tok(p.Predict), bleu.Options{Smoothing: bo.Smoothing})
				if cfg.Embedder != nil {
					vs, err := cfg.Embedder.Embed(ctx, []string{p.Label, p.Predict})
					switch {
					case err != nil:
						s.EmbedError = err.Error()
					case len(vs) != 2:
						s.EmbedError = fmt.Sprintf("%d vectors for 2 texts", len(vs))
					default:
						if c, ok := Cosine(vs[0], vs[1]); ok {
							s.Cosine = &c
						} else {
							s.EmbedError = "vectors of different sizes, or a zero vector"
						}
					}
				}
				if cfg.Judge != nil {
					r := cfg.Judge.RateQuestion(ctx, p.Prompt, p.Label, p.Predict)
					s.Rating = &r
				}
				mu.Lock()
				out[i] = s
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(preds))
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range preds {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &PredictionsReport{Input: input, Predictions: len(preds), BLEUTokens: bo.Tokens, BLEUSmoothing: bo.Smoothing.String(), Scored: out}
	var bleus, cosines, ratings []float64
	refs := make([][][]string, len(out))
	hyps := make([][]string, len(out))
	for i, s := range out {
		bleus = append(bleus, s.BLEU*100)
		refs[i], hyps[i] = [][]string{tok(s.Label)}, tok(s.Predict)
		switch {
		case s.Cosine != nil:
			cosines = append(cosines, *s.Cosine*100)
		case cfg.Embedder != nil:
			rep.EmbedFailed++
		}
		if r := s.Rating; r != nil {
			switch {
			case r.Error != "":
				rep.JudgeFailed++
			case !r.Parsed:
				rep.Unparseable++
			default:
				ratings = append(ratings, r.Score)
			}
		}
	}
	rep.BLEU = mean(bleus)
	c, err := bleu.Corpus(refs, hyps, bleu.Options{Smoothing: bo.Smoothing})
	if err != nil {
		return nil, err
	}
	rep.CorpusBLEU = c * 100
	if cfg.Embedder != nil {
		rep.Embedder = cfg.Embedder.Name()
		st := mean(cosines)
		rep.Cosine = &st
	}
	if cfg.Judge != nil {
		rep.Judge = cfg.Judge.ModelName
		rep.Prompts = Prompts()[:2]
		st := mean(ratings)
		rep.Rating = &st
	}
	return rep, nil
}

// Markdown renders the report; a figure with nothing under it says so
// instead of showing a number.
func (r *PredictionsReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Simulator predictions: %s\n\n", r.Input)
	fmt.Fprintf(&b, "%d prediction(s) scored against their labels with MirrorAPI's measures. BLEU-4 is NLTK's `sentence_bleu` (tokens: %s, smoothing %s), averaged and × 100, and NLTK's `corpus_bleu` × 100.\n\n", r.Predictions, r.BLEUTokens, r.BLEUSmoothing)
	b.WriteString("| Measure | Value | n |\n| --- | ---: | ---: |\n")
	fmt.Fprintf(&b, "| BLEU-4 (mean of sentence BLEU × 100) | %.2f | %d |\n", r.BLEU.Mean, r.BLEU.N)
	fmt.Fprintf(&b, "| BLEU-4 (corpus × 100) | %.2f | %d |\n", r.CorpusBLEU, r.Predictions)
	switch {
	case r.Cosine == nil:
		b.WriteString("| Cosine × 100 | not measured (give --embed-url and --embed-model) | 0 |\n")
	case r.Cosine.N == 0:
		fmt.Fprintf(&b, "| Cosine × 100 | none: the embeddings endpoint gave no vectors for any of the %d prediction(s) | 0 |\n", r.EmbedFailed)
	default:
		fmt.Fprintf(&b, "| Cosine × 100 (%s) | %.2f | %d |\n", r.Embedder, r.Cosine.Mean, r.Cosine.N)
	}
	switch {
	case r.Rating == nil:
		b.WriteString("| Judge rating (1-10) | not judged (give --judge-url and --judge-model) | 0 |\n")
	case r.Rating.N == 0:
		fmt.Fprintf(&b, "| Judge rating (1-10) | none: no verdict could be read (%d unreadable, %d requests failed) | 0 |\n", r.Unparseable, r.JudgeFailed)
	default:
		fmt.Fprintf(&b, "| Judge rating (1-10, %s) | %.2f | %d |\n", r.Judge, r.Rating.Mean, r.Rating.N)
	}
	if r.EmbedFailed > 0 || r.Unparseable > 0 || r.JudgeFailed > 0 {
		fmt.Fprintf(&b, "\nLeft out of the means: %d prediction(s) whose embeddings failed, %d judge verdict(s) with no rating in 1-10, %d judge request(s) that failed (predictions.json keeps each raw reply).\n", r.EmbedFailed, r.Unparseable, r.JudgeFailed)
	}
	return b.String()
}

// Overview is the report's short summary.
func (r *PredictionsReport) Overview() string {
	s := fmt.Sprintf("%d predictions: BLEU-4 %.2f (corpus %.2f)", r.Predictions, r.BLEU.Mean, r.CorpusBLEU)
	if r.Cosine != nil && r.Cosine.N > 0 {
		s += fmt.Sprintf(", cosine %.2f (n=%d)", r.Cosine.Mean, r.Cosine.N)
	}
	if r.Rating != nil {
		if r.Rating.N > 0 {
			s += fmt.Sprintf(", judge rating %.2f (n=%d)", r.Rating.Mean, r.Rating.N)
		} else {
			s += ", judge rating: no readable verdict"
		}
	}
	return s
}

// WritePredictions writes DIR/predictions.md and DIR/predictions.json,
// creating DIR, and prints the overview and their paths to w.
func WritePredictions(w io.Writer, dir string, r *PredictionsReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "predictions.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "predictions.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n\nreports: %s, %s\n", r.Overview(), filepath.Join(dir, "predictions.md"), filepath.Join(dir, "predictions.json"))
	return err
}
