package verify_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/mapeval/mapevaltest"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
	"github.com/toolenv/toolenv/mapping/verify"
	"github.com/toolenv/toolenv/nl2api"
)

// Map a REST API onto an obfuscated copy whose documentation names every
// column of one type alike, so that endpoints one filter column apart
// read the same: the probes call both sides with the same arguments and
// keep the stand-ins that answer the same.
func ExampleBetween() {
	ctx := context.Background()
	data, _ := os.MkdirTemp("", "verify-example-")
	defer os.RemoveAll(data)
	out := filepath.Join(data, "out")
	corpus, err := mapevaltest.Generate(data, mapevaltest.Options{Seed: 4})
	if err != nil {
		panic(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{nl2api.Rest}, Obfuscate: true}); err != nil {
		panic(err)
	}
	if err := mapevaltest.Blind(filepath.Join(out, "rest-obfuscated"), corpus); err != nil {
		panic(err)
	}
	cfg := environment.Default()
	cfg.Store, cfg.Collections = ":memory:", []string{filepath.Join(out, "rest"), filepath.Join(out, "rest-obfuscated")}
	cfg.Logger = slog.New(slog.DiscardHandler)
	env, err := environment.Open(ctx, &cfg)
	if err != nil {
		panic(err)
	}
	defer env.Close()
	primary, alt := env.Registry.Collection("bird-rest"), env.Registry.Collection("bird-rest-obfuscated")
	m, a, b := truth.NewMatcher(primary.Tools, alt.Tools, structural.Options{})
	res, err := verify.Between(ctx, verify.Pipeline{Handler: env.Pipeline, Collection: env.Registry.Collection}, m, a, b, verify.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("every endpoint mapped:", len(res.Mappings) == len(primary.Tools) && len(res.Unmapped) == 0)
	fmt.Println("most decided by probes:", res.Count(verify.Probe) > res.Count(verify.Structure))
	// Output:
	// every endpoint mapped: true
	// most decided by probes: true
}
