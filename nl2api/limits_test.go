package nl2api_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// TestBuildDoesNotDependOnMachineSpeed builds generated corpora twice:
// with the default limits, and with a first limit of 1 ns (a machine so
// slow that every gold query and every verification call runs out of
// time). The slow build runs everything again under the longer limit and
// writes byte-identical collections and task files, its report saying
// what needed the longer limit; with both limits at 1 ns the build fails,
// naming questions, rather than drop them.
func TestBuildDoesNotDependOnMachineSpeed(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{11, 12} {
		data := t.TempDir()
		if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed}); err != nil {
			t.Fatal(err)
		}
		build := func(first, last time.Duration) (string, *nl2api.Report, error) {
			out := t.TempDir()
			rep, err := nl2api.Build(ctx, nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Obfuscate: true, Seed: int64(seed), Workers: 2, CallTimeout: first, MaxCallTimeout: last})
			return out, rep, err
		}
		quick, qrep, err := build(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		slow, srep, err := build(time.Nanosecond, time.Minute)
		if err != nil {
			t.Fatalf("seed %d: the slow build failed: %v", seed, err)
		}
		files := 0
		filepath.WalkDir(quick, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "report.") {
				return err
			}
			rel, _ := filepath.Rel(quick, p)
			a, _ := os.ReadFile(p)
			b, err := os.ReadFile(filepath.Join(slow, rel))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("seed %d: %s differs between the quick and the slow build (%v)", seed, rel, err)
			}
			files++
			return nil
		})
		if files < 6 {
			t.Fatalf("seed %d: only %d files compared", seed, files)
		}
		if qrep.Limits.CallTimeout != "10s" || qrep.Limits.MaxCallTimeout != "5m0s" {
			t.Errorf("seed %d: quick build's limits %+v", seed, qrep.Limits)
		}
		stages := map[string]bool{}
		for _, r := range srep.Limits.Retried {
			stages[strings.Fields(r.Stage)[0]] = true
		}
		if srep.Limits.CallTimeout != "1ns" || !stages["gold"] || !stages["verify"] {
			t.Errorf("seed %d: slow build's limits %+v", seed, srep.Limits)
		}
		md, _ := os.ReadFile(filepath.Join(slow, "report.md"))
		if !strings.Contains(string(md), "Time limits: 1ns per gold query or verification, 1m0s for one that ran out of it") {
			t.Errorf("seed %d: report.md does not record the limits", seed)
		}

		_, _, err = build(time.Nanosecond, time.Nanosecond)
		var te *toolenv.Error
		if !errors.As(err, &te) || te.Status != toolenv.StatusTimeout || !strings.Contains(err.Error(), "question ") ||
			!strings.Contains(err.Error(), "ran out of time under --max-call-timeout 1ns") || !strings.Contains(err.Error(), "raise --max-call-timeout") {
			t.Errorf("seed %d: a build whose queries run out of every limit: %v", seed, err)
		}
	}
}
