package drift

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// Run drifts a source into its folder, translating other tasks when
// given; what the job asks wrongly is invalid_arguments and writes
// nothing.
func TestRun(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	// Tasks of the demo's tools, one line broken (skipped).
	demoDir := filepath.Join(tmp, "tasks.jsonl")
	b1, _ := json.Marshal(&toolenv.Task{ID: "x1", Collection: "demo", Query: "weather in Oslo", Gold: []toolenv.GoldCall{{Name: "current_weather", Args: map[string]any{"city": "Oslo"}}}})
	if err := os.WriteFile(demoDir, append(append(b1, '\n'), []byte("{broken\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "v2")
	d, err := Run(ctx, Job{Source: Source{Demo: true}, Tasks: demoDir, Out: out, Options: Options{Seed: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tasks) != 1 || d.Tasks[0].ID != "x1" {
		t.Fatalf("translated tasks: %+v", d.Tasks)
	}
	c, err := toolenv.ReadCollection(out)
	if err != nil || len(c.Tools) == 0 {
		t.Fatalf("the new version does not read back: %v", err)
	}
	for _, tc := range []struct {
		name string
		job  Job
		want string
	}{
		{"no out", Job{Source: Source{Demo: true}}, "--out is required"},
		{"rules that do not read", Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "r"), Rules: filepath.Join(tmp, "no-rules")}, "--rules"},
		{"unknown operator", Job{Source: Source{Demo: true}, Out: filepath.Join(tmp, "o"), Options: Options{Seed: 1, Operators: []string{"shuffle"}}}, `unknown operator "shuffle"`},
		{"another seed into the same folder", Job{Source: Source{Demo: true}, Out: out, Options: Options{Seed: 6}}, "already drifted"},
	} {
		_, err := Run(ctx, tc.job)
		if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want invalid_arguments saying %q", tc.name, err, tc.want)
		}
		if tc.job.Out != "" && tc.job.Out != out {
			if _, err := os.Stat(tc.job.Out); !os.IsNotExist(err) {
				t.Errorf("%s: %s was written", tc.name, tc.job.Out)
			}
		}
	}
}
