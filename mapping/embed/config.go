package embed

import (
	"context"
	"log/slog"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
)

// Embedder is what New returns: a Hash or a Remote. It is the embedder
// the tool index (mapping/index.Embedder) takes.
type Embedder interface {
	// Name identifies the model.
	Name() string
	// Embed returns one vector per text.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Config says which embedder to use: a remote OpenAI-compatible endpoint
// (URL and Model), else the deterministic offline Hash embedder of Dims
// dimensions.
type Config struct {
	// URL is the embeddings endpoint, e.g. http://127.0.0.1:8000/v1;
	// empty means the offline embedder.
	URL string
	// Model is the embedding model the endpoint serves (required with
	// URL); APIKey its key.
	Model, APIKey string
	// Dims are the offline embedder's dimensions (0 means its default).
	Dims int
	// Timeout bounds one request to the endpoint.
	Timeout time.Duration
	Logger  *slog.Logger
}

// New returns the embedder cfg describes. A URL without a Model is an
// invalid_arguments error.
func New(cfg Config) (Embedder, error) {
	if cfg.URL == "" {
		return Hash{Dims: cfg.Dims}, nil
	}
	if cfg.Model == "" {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--embed-url needs --embed-model (the embedding model the endpoint serves)")
	}
	c := llm.New(cfg.URL, llm.Options{APIKey: cfg.APIKey, Timeout: cfg.Timeout, MaxRetries: 1, Backoff: 500 * time.Millisecond, Logger: cfg.Logger})
	return Remote{Client: c, Model: cfg.Model}, nil
}
