package embed

import (
	"context"
	"log/slog"
	"os"
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
// dimensions. Its tags are the flags of the toolenv map commands
// (internal/configfile binds them).
type Config struct {
	// URL is the embeddings endpoint, e.g. http://127.0.0.1:8000/v1;
	// empty means the offline embedder.
	URL string `json:"url" flag:"embed-url" url:"http" help:"OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:8000/v1; empty: the deterministic offline embedder"`
	// Model is the embedding model the endpoint serves (required with
	// URL).
	Model string `json:"model" flag:"embed-model" help:"embedding model name at --embed-url"`
	// KeyEnv names the variable holding the endpoint's key; APIKey is the
	// key itself, for Go programs, and wins over it.
	KeyEnv string `json:"key_env" flag:"embed-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the embeddings endpoint's API key"`
	APIKey string `json:"api_key,omitempty" secret:"embed.key_env" help:"the embeddings endpoint's API key itself"`
	// Dims are the offline embedder's dimensions (0 means its default).
	Dims int `json:"dims" flag:"embed-dims" default:"512" help:"dimensions of the offline embedder"`
	// Timeout bounds one request to the endpoint.
	Timeout time.Duration `json:"timeout" flag:"embed-timeout" default:"30s" help:"timeout of one embeddings request"`
	Logger  *slog.Logger  `json:"-"`
	// Getenv reads the variable KeyEnv names; nil means os.Getenv.
	Getenv func(string) string `json:"-"`
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
	key := cfg.APIKey
	if getenv := cfg.Getenv; key == "" && cfg.KeyEnv != "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		key = getenv(cfg.KeyEnv)
	}
	c := llm.New(cfg.URL, llm.Options{APIKey: key, Timeout: cfg.Timeout, MaxRetries: 1, Backoff: 500 * time.Millisecond, Logger: cfg.Logger})
	return Remote{Client: c, Model: cfg.Model}, nil
}

// Check asks a remote embedder's endpoint once (llm.Client's
// CheckEmbeddings), so that a command that needs it fails in seconds
// when it cannot answer; the offline embedder needs no check.
func Check(ctx context.Context, e Embedder) error {
	r, ok := e.(Remote)
	if !ok {
		return nil
	}
	return llm.Preflight(ctx, llm.Endpoint{Role: "--embed-url, --embed-model", Client: r.Client, Model: r.Model, Embeddings: true})
}
