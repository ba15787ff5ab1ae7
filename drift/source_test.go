package drift

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestSourceLoad(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		src  Source
	}{
		{"none", Source{}},
		{"two", Source{Demo: true, In: "x"}},
	} {
		if _, _, _, err := tc.src.Load(ctx); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "exactly one source") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	l, tasks, base, err := Source{Demo: true}.Load(ctx)
	if err != nil || l.Current == nil || len(tasks) == 0 || base != "" {
		t.Fatalf("demo: %v %d tasks, base %q", err, len(tasks), base)
	}
	// The summary names what changed and where it went; the folder
	// written loads again as a drifted source with its tasks.
	d, err := Drift(l, Options{Seed: 2, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "v2")
	if err := Write(out, d, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := d.Summary(out); !strings.Contains(s, " → v2 (seed 2): ") || !strings.Contains(s, "tasks translated: ") || !strings.Contains(s, "toolenv serve --collection "+out) {
		t.Errorf("summary %q", s)
	}
	l2, tasks2, _, err := Source{In: out}.Load(ctx)
	if err != nil || l2.Manifest == nil || len(tasks2) != len(d.Tasks) {
		t.Errorf("drifted folder: %v, %d tasks", err, len(tasks2))
	}
}

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]float64
		err  string
	}{
		{"", map[string]float64{}, ""},
		{" rename=0.5, type=0.2", map[string]float64{"rename": 0.5, "type": 0.2}, ""},
		{"rename", nil, "want op=probability pairs"},
		{"=1", nil, "want op=probability pairs"},
		{"rename=often", nil, `--rate rename: "often" is not a number`},
	} {
		got, err := ParseRates(tc.in)
		if tc.err != "" {
			if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v", tc.in, got, err)
		}
	}
}
