package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/devtools/bench"
)

// TestBenchReady generates a small ToolBench-format set, starts serve
// over it (as a child process) and reports its start: every API served,
// a ready time, CPU time and memory read from /proc, a tools/list page and
// search_tools through the go-sdk client; the set is reused by a second
// run.
func TestBenchReady(t *testing.T) {
	data := t.TempDir()
	out := filepath.Join(t.TempDir(), "ready.json")
	code, stdout, stderr := run(t, context.Background(), "bench", "ready", "--apis", "1200", "--runs", "2", "--settle", "100ms", "--data-dir", data, "--json", out)
	if code != 0 {
		t.Fatalf("bench ready exited %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.ReadyReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Generated || rep.APIs != 1200 || len(rep.Runs) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	for _, r := range rep.Runs {
		// Above 1,000 tools: a first page of 1,000 and search_tools.
		if r.Tools != 1200 || r.ReadySeconds <= 0 || r.RSSMiB <= 0 || r.PeakMiB < r.RSSMiB || r.SettledRSSMiB <= 0 ||
			r.ListPageTools != 1000 || r.FirstSearchSeconds <= 0 || r.SearchSeconds <= 0 || r.AfterSearchRSSMiB <= 0 {
			t.Errorf("run = %+v", r)
		}
	}
	if !strings.Contains(stdout, "| 1200 |") {
		t.Errorf("table: %s", stdout)
	}
	sets, _ := filepath.Glob(filepath.Join(data, "toolenv-toolbenchgen-v*-1200-seed1"))
	if len(sets) != 1 {
		t.Fatalf("generated sets kept: %v", sets)
	}
	// A second run reuses the set.
	if code, _, stderr := run(t, context.Background(), "bench", "ready", "--apis", "1200", "--runs", "1", "--settle", "0s", "--data-dir", data); code != 0 || strings.Contains(stderr, "generating") {
		t.Errorf("second run: exit %d, %s", code, stderr)
	}
	if code, _, stderr := run(t, context.Background(), "bench", "ready", "--runs", "0"); code != 2 || !strings.Contains(stderr, "at least 1") {
		t.Errorf("--runs 0: exit %d, %s", code, stderr)
	}
}
