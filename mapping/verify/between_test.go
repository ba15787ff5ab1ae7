package verify_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/mapeval/mapevaltest"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/verify"
	"github.com/toolenv/toolenv/nl2api"
)

// blindBuild generates an adversarial corpus, builds its REST flavor
// with the obfuscated variant, blinds the variant's documentation (every
// column of one type called alike) and opens an environment serving
// both.
func blindBuild(t testing.TB, seed uint64) (*environment.Environment, string) {
	t.Helper()
	ctx := context.Background()
	data, out := t.TempDir(), t.TempDir()
	c, err := mapevaltest.Generate(data, mapevaltest.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{nl2api.Rest}, Obfuscate: true, Seed: int64(seed), Workers: 2}); err != nil {
		t.Fatal(err)
	}
	alt := filepath.Join(out, "rest-obfuscated")
	if err := mapevaltest.Blind(alt, c); err != nil {
		t.Fatal(err)
	}
	cfg := environment.Default()
	cfg.Store, cfg.Collections = ":memory:", []string{filepath.Join(out, "rest"), alt}
	cfg.Logger = slog.New(slog.DiscardHandler)
	env, err := environment.Open(ctx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env, out
}

// truthOf reads the obfuscation's mapping file: primary tool ID →
// obfuscated tool ID.
func truthOf(t testing.TB, out string) map[string]string {
	var mf struct {
		Collection, Original string
		Tools                map[string]string
	}
	raw, err := os.ReadFile(filepath.Join(out, "rest-obfuscated.mapping.json"))
	if err == nil {
		err = json.Unmarshal(raw, &mf)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for f, o := range mf.Tools {
		want[toolenv.ToolID(mf.Original, o)] = toolenv.ToolID(mf.Collection, f)
	}
	return want
}

func matcherOf(env *environment.Environment) *structural.Matcher {
	var tools []*toolenv.Tool
	for _, c := range []string{"bird-rest", "bird-rest-obfuscated"} {
		tools = append(tools, env.Registry.Collection(c).Tools...)
	}
	return structural.New(tools, nil, structural.Options{})
}

// TestBetweenBlinded: with documentation that cannot tell near-duplicate
// endpoints apart, the probes find each endpoint's counterpart; a
// mapping that is not the counterpart answered the same on every probe
// (an equivalent endpoint). Without its counterpart an endpoint stays
// unmapped, and the reason names what answered differently.
func TestBetweenBlinded(t *testing.T) {
	ctx := context.Background()
	env, out := blindBuild(t, 4)
	want := truthOf(t, out)
	caller := verify.Pipeline{Handler: env.Pipeline, Collection: env.Registry.Collection}
	res, err := verify.Between(ctx, caller, matcherOf(env), "bird-rest", "bird-rest-obfuscated", verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agreed := map[string]bool{}
	for _, v := range res.Verdicts {
		if v.Outcome == verify.Agree {
			agreed[v.From+" "+v.To] = true
		}
	}
	right := 0
	for _, mp := range res.Mappings {
		switch {
		case want[mp.From] == mp.To:
			right++
		case !agreed[mp.From+" "+mp.To]:
			t.Errorf("%s → %s (want %s), not verified by probes: %s", mp.From, mp.To, want[mp.From], mp.Reasoning)
		}
	}
	if len(res.Mappings) != len(want) || right < len(want)*9/10 || res.Count(verify.Probe) < len(want)/2 {
		t.Errorf("%d mappings (%d right, %d by probe) of %d endpoints; unmapped %v", len(res.Mappings), right, res.Count(verify.Probe), len(want), res.Unmapped)
	}

	// Take one near-duplicate's counterpart away: it must stay unmapped,
	// saying which candidates answered differently.
	var victim, gone string
	for _, v := range res.Verdicts {
		if v.Outcome == verify.Disagree && want[v.From] != "" && strings.Contains(v.From, "_by_") {
			victim, gone = v.From, want[v.From]
			break
		}
	}
	if victim == "" {
		t.Fatal("no near-duplicate was told apart by a disagreement")
	}
	var tools []*toolenv.Tool
	for _, c := range []string{"bird-rest", "bird-rest-obfuscated"} {
		for _, tl := range env.Registry.Collection(c).Tools {
			if tl.ID != gone {
				tools = append(tools, tl)
			}
		}
	}
	res2, err := verify.Between(ctx, caller, structural.New(tools, nil, structural.Options{}), "bird-rest", "bird-rest-obfuscated", verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mp := range res2.Mappings {
		if mp.From == victim {
			t.Fatalf("%s mapped to %s although its counterpart %s is gone", victim, mp.To, gone)
		}
	}
	found := false
	for _, u := range res2.Unmapped {
		if u.Tool == victim {
			found = strings.Contains(u.Reason, "answered differently")
			t.Logf("unmapped %s: %s", u.Tool, u.Reason)
		}
	}
	if !found {
		t.Errorf("%s: no unmapped entry naming a different answer: %+v", victim, res2.Unmapped)
	}
}
