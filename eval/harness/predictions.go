package harness

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/embed"
)

// PredictionsConfig is what toolenv eval score mirrorapi scores and how:
// a file of recorded simulator predictions and the models that judge
// them.
type PredictionsConfig struct {
	In          string `json:"in" flag:"in" path:"file" help:"LLaMA-Factory's generated_predictions.jsonl ({\"prompt\", \"predict\", \"label\"} per line)"`
	Out         string `json:"out" flag:"out" path:"file" help:"output folder (predictions.md, predictions.json, records.db)"`
	Seed        int64  `json:"seed" flag:"seed" default:"1" help:"seed of every judge request"`
	Concurrency int    `json:"concurrency" flag:"concurrency" default:"4" help:"predictions scored at once"`
	Replay      bool   `json:"replay" flag:"replay" help:"serve every embedding and judge request from the records, with no network"`
	Records     string `json:"records" flag:"records" path:"file" help:"database of recorded requests (default DIR/records.db)"`
	Retries     int    `json:"retries" flag:"retries" default:"3" help:"retries of an embedding or judge request that failed with a timeout, 429 or 5xx"`

	EmbedURL     string        `json:"embed_url" flag:"embed-url" url:"http" help:"OpenAI-compatible embeddings endpoint for the cosine (the paper: text-embedding-3-small); empty: no cosine"`
	EmbedModel   string        `json:"embed_model" flag:"embed-model" help:"embedding model name"`
	EmbedKeyEnv  string        `json:"embed_key_env" flag:"embed-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the embeddings endpoint's API key"`
	JudgeURL     string        `json:"judge_url" flag:"judge-url" url:"http" help:"OpenAI-compatible endpoint of the judge (the paper: gpt-4o); empty: no judging"`
	JudgeModel   string        `json:"judge_model" flag:"judge-model" help:"judge model name"`
	JudgeKeyEnv  string        `json:"judge_key_env" flag:"judge-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the judge's API key"`
	JudgeTimeout time.Duration `json:"judge_timeout" flag:"judge-timeout" default:"2m" help:"timeout of one judge or embeddings request"`

	BLEUTokens    string `json:"bleu_tokens" flag:"bleu-tokens" default:"chars" enum:"chars,words" help:"BLEU tokens: chars (Python's list(text), MirrorAPI's and LLaMA-Factory's) or words (str.split())"`
	BLEUSmoothing string `json:"bleu_smoothing" flag:"bleu-smoothing" default:"method3" help:"NLTK smoothing: none, method1 ... method5, method7 (method3 is MirrorAPI's)"`
}

// DefaultPredictions returns the configuration toolenv eval score
// mirrorapi starts from.
func DefaultPredictions() PredictionsConfig { return configfile.Default[PredictionsConfig]() }

// ScorePredictions reads a file of recorded simulator predictions, checks
// every model it names (one request each, before anything is written;
// not on a replay), scores the predictions with MirrorAPI's measures
// (fidelity.ScorePredictions), recording every model exchange in
// DIR/records.db, and writes DIR/predictions.md and DIR/predictions.json,
// printing the overview to w. Progress goes to opts.Progress.
func ScorePredictions(ctx context.Context, pc *PredictionsConfig, opts Options, w io.Writer) (*fidelity.PredictionsReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if pc.In == "" || pc.Out == "" {
		return nil, invalid("--in FILE and --out DIR are required: the predictions to score and the folder for the reports")
	}
	if (pc.JudgeURL == "") != (pc.JudgeModel == "") {
		return nil, invalid("--judge-url and --judge-model go together (the judge's endpoint and model)")
	}
	if (pc.EmbedURL == "") != (pc.EmbedModel == "") {
		return nil, invalid("--embed-url and --embed-model go together (the embeddings endpoint and model)")
	}
	if pc.Concurrency < 1 {
		return nil, invalid("--concurrency must be at least 1")
	}
	if _, err := bleu.ParseTokenizer(pc.BLEUTokens); err != nil {
		return nil, invalid("--bleu-tokens: %v", err)
	}
	smoothing, err := bleu.ParseSmoothing(pc.BLEUSmoothing)
	if err != nil {
		return nil, invalid("--bleu-smoothing: %v", err)
	}
	preds, err := fidelity.ReadPredictions(pc.In)
	if err != nil {
		return nil, err
	}
	if !pc.Replay {
		check := func(url, keyEnv string) *llm.Client {
			if url == "" {
				return nil
			}
			return llm.New(url, llm.Options{APIKey: getenv(keyEnv), Timeout: pc.JudgeTimeout})
		}
		if err := llm.Preflight(ctx,
			llm.Endpoint{Role: "judge (--judge-url, --judge-model)", Client: check(pc.JudgeURL, pc.JudgeKeyEnv), Model: pc.JudgeModel},
			llm.Endpoint{Role: "embeddings (--embed-url, --embed-model)", Client: check(pc.EmbedURL, pc.EmbedKeyEnv), Model: pc.EmbedModel, Embeddings: true},
		); err != nil {
			return nil, err
		}
	}
	cfg := fidelity.PredictionsConfig{BLEU: &fidelity.BLEUOptions{Tokens: pc.BLEUTokens, Smoothing: smoothing}, Concurrency: pc.Concurrency}
	if pc.EmbedURL != "" || pc.JudgeURL != "" {
		if err := os.MkdirAll(pc.Out, 0o755); err != nil {
			return nil, err
		}
		records, err := OpenRecords(ctx, pc.Records, pc.Out, pc.Replay, log)
		if err != nil {
			return nil, err
		}
		defer records.Close()
		newClient := func(url, keyEnv string) *llm.Client {
			return llm.New(url, llm.Options{APIKey: getenv(keyEnv), Timeout: pc.JudgeTimeout, MaxRetries: Retries(pc.Retries), Recorder: records, Replay: pc.Replay, Logger: log})
		}
		if pc.EmbedURL != "" {
			cfg.Embedder = embed.Remote{Client: newClient(pc.EmbedURL, pc.EmbedKeyEnv), Model: pc.EmbedModel}
		}
		if pc.JudgeURL != "" {
			cfg.Judge = &fidelity.Judge{Model: newClient(pc.JudgeURL, pc.JudgeKeyEnv), ModelName: pc.JudgeModel, Seed: pc.Seed}
		}
	}
	bar := progress.New(opts.Progress, len(preds), "predictions")
	cfg.Progress = func(done, total int) { bar.Add(1) }
	rep, err := fidelity.ScorePredictions(ctx, pc.In, preds, cfg)
	bar.Finish()
	if err != nil {
		return nil, err
	}
	return rep, fidelity.WritePredictions(w, pc.Out, rep)
}
