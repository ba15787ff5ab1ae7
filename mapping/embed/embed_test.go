package embed

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashIsDeterministicAndMeaningful(t *testing.T) {
	h := Hash{Dims: 256}
	vs, _ := h.Embed(context.Background(), []string{"fetch the current weather in a city", "get current weather for a town", "convert euros to dollars", ""})
	again, _ := Hash{Dims: 256}.Embed(context.Background(), []string{"fetch the current weather in a city"})
	for i := range vs[0] {
		if vs[0][i] != again[0][i] {
			t.Fatal("the same text gave another vector")
		}
	}
	for i, v := range vs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if len(v) != 256 || math.Abs(n-1) > 1e-5 {
			t.Fatalf("vector %d: %d dims, norm² %v", i, len(v), n)
		}
	}
	// Synonyms (fetch/get, city/town) bring the first two together.
	if near, far := cos(vs[0], vs[1]), cos(vs[0], vs[2]); near <= far || near < 0.4 {
		t.Fatalf("similar %.3f, different %.3f", near, far)
	}
	if h.Name() != "hash-v1-256" || (Hash{}).Name() != "hash-v1-512" {
		t.Fatal("names")
	}
}

func TestRemote(t *testing.T) {
	srv := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{Embeddings: [][]float32{{1, 0}, {0, 1}}}
		}
		return llmtest.Reply{Embeddings: [][]float32{{1, 0, 0}}}
	})
	defer srv.Close()
	r := Remote{Client: llm.New(srv.URL(), llm.Options{MaxRetries: -1}), Model: "m", Batch: 2}
	vs, err := r.Embed(context.Background(), []string{"a", "b"})
	if err != nil || len(vs) != 2 || r.Name() != "openai:m" {
		t.Fatalf("vs %v, err %v", vs, err)
	}
	// A second batch with another size is an error, not a mixed index.
	if _, err := r.Embed(context.Background(), []string{"a", "b", "c"}); err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("err = %v", err)
	}
	down := llmtest.New(llmtest.Script(llmtest.Reply{Status: 503}))
	defer down.Close()
	if _, err := (Remote{Client: llm.New(down.URL(), llm.Options{MaxRetries: -1}), Model: "m"}).Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("a down endpoint embedded")
	}
}

// TestHashIsBitwiseDeterministic: the same text gives the same vector,
// bit for bit, every time. Features that land in one dimension are
// summed; summed in Go's random map order, three or more of them could
// round differently from one call to the next, and two builds of one
// index differed in their vectors.
func TestHashIsBitwiseDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	words := []string{"get", "city", "weather", "forecast", "currency", "convert", "amount", "rate", "book", "isbn",
		"author", "title", "superhero", "power", "student", "club", "event", "budget", "member", "zip_code", "HTTPServer", "IDs"}
	h := Hash{Dims: 64} // few dimensions: many features share one
	for n := range 40 {
		var b strings.Builder
		for range 20 + rng.IntN(400) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString(fmt.Sprint(rng.IntN(50)))
			b.WriteByte(' ')
		}
		text := b.String()
		first, _ := h.Embed(context.Background(), []string{text})
		for range 20 {
			again, _ := h.Embed(context.Background(), []string{text})
			for i := range first[0] {
				if math.Float32bits(first[0][i]) != math.Float32bits(again[0][i]) {
					t.Fatalf("text %d: dimension %d is %v, then %v", n, i, first[0][i], again[0][i])
				}
			}
		}
	}
}
