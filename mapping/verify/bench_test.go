package verify_test

import (
	"context"
	"testing"

	"github.com/toolenv/toolenv/mapping/verify"
)

// BenchmarkBetweenBlinded maps a generated REST API (51 endpoints) onto
// its blinded obfuscated copy, probing through a real environment: most
// endpoints are undecided by their documentation, so this is the cost of
// probing (harvest, source calls, candidate calls, comparisons).
func BenchmarkBetweenBlinded(b *testing.B) {
	env, _ := blindBuild(b, 4)
	caller := verify.Pipeline{Handler: env.Pipeline, Collection: env.Registry.Collection}
	m := matcherOf(env)
	calls := 0
	for b.Loop() {
		res, err := verify.Between(context.Background(), caller, m, "bird-rest", "bird-rest-obfuscated", verify.Options{})
		if err != nil {
			b.Fatal(err)
		}
		calls = res.Calls
	}
	b.ReportMetric(float64(calls), "calls/op")
}
