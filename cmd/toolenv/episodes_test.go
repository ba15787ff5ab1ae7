package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

// TestEpisodesExport: episodes played against a server whose episodes
// live in the store are written by toolenv episodes export in each
// format, with their rewards, after the server is gone.
func TestEpisodesExport(t *testing.T) {
	ctx := context.Background()
	store := filepath.Join(t.TempDir(), "store.db")
	env, err := environment.Open(ctx, &environment.Config{Store: store, Sessions: "store", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"demo-1", "demo-3"} {
		r, err := eps.Reset(ctx, "", &episode.ResetOptions{TaskID: id})
		if err != nil {
			t.Fatal(err)
		}
		ep := r.Observation.EpisodeID
		if _, err := eps.Step(ctx, "", ep, &episode.Action{Type: episode.ActionFinalAnswer, Answer: &episode.Answer{Text: "no idea"}}); err != nil {
			t.Fatal(err)
		}
	}
	eps.Close()
	env.Close()
	for _, format := range []string{"jsonl", "openai", "sharegpt"} {
		code, stdout, stderr := run(t, ctx, "episodes", "export", "--store", store, "--sessions", "store", "--demo", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 2 || !strings.Contains(stderr, "2 episodes written") {
			t.Fatalf("%s: %d lines: %s / %s", format, len(lines), stdout, stderr)
		}
		for _, l := range lines {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["reward"] == nil && rec["return"] == nil {
				t.Fatalf("%s: %v %s", format, err, l)
			}
		}
	}
	if code, _, stderr := run(t, ctx, "episodes", "export", "--store", store, "--sessions", "store", "--demo", "--format", "csv"); code == 0 || !strings.Contains(stderr, "jsonl, openai or sharegpt") {
		t.Fatalf("a bad format: exit %d: %s", code, stderr)
	}
}
