package embed

import (
	"context"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// New gives the offline embedder without a URL, a remote one with a URL
// and a model, and refuses a URL without a model.
func TestNew(t *testing.T) {
	e, err := New(Config{Dims: 64})
	if err != nil || e.Name() != "hash-v1-64" {
		t.Fatalf("offline: %v %v", e, err)
	}
	v, err := e.Embed(context.Background(), []string{"weather in Paris"})
	if err != nil || len(v) != 1 || len(v[0]) != 64 {
		t.Fatalf("offline vectors: %d %v", len(v), err)
	}
	if _, err := New(Config{URL: "http://127.0.0.1:1/v1"}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "--embed-model") {
		t.Errorf("a URL without a model: %v", err)
	}
	srv := llmtest.New(nil)
	defer srv.Close()
	e, err = New(Config{URL: srv.URL(), Model: "emb"})
	if err != nil || e.Name() != "openai:emb" {
		t.Fatalf("remote: %v %v", e, err)
	}
	if _, ok := e.(Remote); !ok {
		t.Errorf("remote embedder is %T", e)
	}
}
