package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/eval/mapeval/mapevaltest"
	"github.com/toolenv/toolenv/mapping"
)

// TestMapFailoverProbes: on a generated corpus whose obfuscated variant's
// documentation names every column of one type alike, "map match --probe"
// and "map eval failover" probe what the documentation cannot decide and
// say so; --no-probe answers fewer tasks; bad flags are usage errors.
func TestMapFailoverProbes(t *testing.T) {
	ctx := context.Background()
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "adv")
	corpus, err := mapevaltest.Generate(data, mapevaltest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, ctx, "build", "bird", "--data", data, "--out", out, "--obfuscate", "--flavors", "rest"); code != 0 {
		t.Fatalf("build: %d %s", code, errs)
	}
	primary, alt := filepath.Join(out, "rest"), filepath.Join(out, "rest-obfuscated")
	if err := mapevaltest.Blind(alt, corpus); err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(t.TempDir(), "failover.json")
	code, _, errs := run(t, ctx, "map", "match", "--collection", primary, "--collection", alt, "--store", ":memory:",
		"--between", "bird-rest", "--between", "bird-rest-obfuscated", "--probe", "--out", mf)
	if code != 0 || !strings.Contains(errs, "by probe") {
		t.Fatalf("match --probe: %d\n%s", code, errs)
	}
	set, err := mapping.ReadSet(mf)
	if err != nil || len(set.Mappings) == 0 || !strings.Contains(set.Mappings[0].Reasoning+set.Mappings[len(set.Mappings)-1].Reasoning, "structural") {
		t.Fatalf("mappings: %v %d", err, len(set.Mappings))
	}
	if code, _, errs := run(t, ctx, "map", "match", "--collection", primary, "--store", ":memory:", "--probe"); code != 2 || !strings.Contains(errs, "--between") {
		t.Fatalf("--probe without --between: %d %s", code, errs)
	}
	code, withProbes, errs := run(t, ctx, "map", "eval", "failover", "--primary", primary, "--alternative", alt)
	if code != 0 || !strings.Contains(withProbes, "by probe (calls of both endpoints agreed)") || !strings.Contains(withProbes, "| oracle | primary down + failover | 51 | 51 (100.0%) | 51 (100.0%) |") {
		t.Fatalf("eval failover: %d\n%s\n%s", code, withProbes, errs)
	}
	code, docsOnly, errs := run(t, ctx, "map", "eval", "failover", "--primary", primary, "--alternative", alt, "--no-probe")
	if code != 0 || strings.Contains(docsOnly, "| 51 (100.0%) | 51 (100.0%) | 51 |") || !strings.Contains(docsOnly, ", 0 by probe") {
		t.Fatalf("eval failover --no-probe: %d\n%s\n%s", code, docsOnly, errs)
	}
	if code, _, _ := run(t, ctx, "map", "eval", "failover", "--primary", primary, "--alternative", alt, "--probe-samples", "-1"); code != 2 {
		t.Fatalf("--probe-samples -1: %d", code)
	}
}
