package fidelity

import (
	"context"
	"testing"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/embed"
)

// BenchmarkRunSynthesizer scores the demo's 15 documented answers with
// the offline synthesizer and embedder: toolenv's own cost per pair
// (held-out call, BLEU, cosine), no model involved.
func BenchmarkRunSynthesizer(b *testing.B) {
	f := newFixture(b)
	backend := f.backend(b, llm.Options{}, "")
	pairs := DocPairs(f.coll.Tools)
	cfg := Config{Simulator: backend, Tools: f.reg, Embedder: embed.Hash{}, Concurrency: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), cfg, pairs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(pairs)), "µs/pair")
}
