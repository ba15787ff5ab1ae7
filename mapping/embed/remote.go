package embed

import (
	"context"
	"fmt"

	"github.com/toolenv/toolenv/llm"
)

// Remote embeds with an OpenAI-compatible embeddings endpoint.
type Remote struct {
	// Client talks to the endpoint.
	Client *llm.Client
	// Model is the embedding model's name.
	Model string
	// Batch is how many texts go in one request; 0 means 64.
	Batch int
}

// Name identifies the model (not the host: the same model on another
// host gives the same vectors).
func (r Remote) Name() string { return "openai:" + r.Model }

// Embed returns one vector per text, asking the endpoint in batches.
func (r Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b := r.Batch
	if b <= 0 {
		b = 64
	}
	out := make([][]float32, 0, len(texts))
	dims := 0
	for i := 0; i < len(texts); i += b {
		j := min(i+b, len(texts))
		vs, err := r.Client.Embed(ctx, r.Model, texts[i:j])
		if err != nil {
			return nil, fmt.Errorf("embed with %s at %s: %w", r.Model, r.Client.Endpoint(), err)
		}
		for k, v := range vs {
			if len(v) == 0 {
				return nil, fmt.Errorf("embed with %s: empty vector for input %d", r.Model, i+k)
			}
			if dims == 0 {
				dims = len(v)
			} else if len(v) != dims {
				return nil, fmt.Errorf("embed with %s: vectors of %d and %d dimensions in one run", r.Model, dims, len(v))
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}
