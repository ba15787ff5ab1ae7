package mapeval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
)

// TestFailoverFigures re-runs the failover figures docs/mapping.md
// documents — `toolenv build bird --data DATA --out OUT --obfuscate`,
// then `toolenv map eval failover --primary OUT/rest --alternative
// OUT/rest-obfuscated` — on BIRD and spider-de, with probes and from the
// documentation alone, and fails when the share of tasks answered with
// the primary down falls under the documented one by more than the
// tolerance: 0.5 percentage points (one task of BIRD's 287 or
// spider-de's 348), and never under the 98 % target; every endpoint must
// be mapped.
func TestFailoverFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds BIRD and spider-de")
	}
	const tolerance = 0.005
	for _, tc := range []struct {
		corpus     string
		tasks      int
		endpoints  int
		documented float64 // answered share with probes and with the documentation alone
	}{
		{"bird", 287, 263, 1.0},
		{"spider-de", 348, 180, 1.0},
	} {
		t.Run(tc.corpus, func(t *testing.T) {
			data := shareddata.Require(t, tc.corpus)
			out := t.TempDir()
			if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out, Flavors: []string{nl2api.Rest}, Obfuscate: true, Workers: 2}); err != nil {
				t.Fatal(err)
			}
			for _, noProbe := range []bool{false, true} {
				rep, err := Failover(context.Background(), FailoverOptions{Primary: filepath.Join(out, "rest"), Alternative: filepath.Join(out, "rest-obfuscated"), NoProbe: noProbe})
				if err != nil {
					t.Fatal(err)
				}
				down := rep.Runs[len(rep.Runs)-1]
				got := answered(rep)
				t.Logf("%s, no probe %v: %d of %d tasks answered (%.1f %%); %s", tc.corpus, noProbe, down.Correct, down.Checkable, 100*got, rep.Title)
				if down.Tasks != tc.tasks || rep.Tools != tc.endpoints {
					t.Errorf("%d tasks and %d endpoints, documented %d and %d: update docs/mapping.md", down.Tasks, rep.Tools, tc.tasks, tc.endpoints)
				}
				if got < tc.documented-tolerance || got < 0.98 {
					t.Errorf("no probe %v: %.1f %% answered with the primary down, documented %.1f %% (tolerance %.1f points); unmapped: %+v",
						noProbe, 100*got, 100*tc.documented, 100*tolerance, rep.Mapping.Unmapped)
				}
				if rep.Mapped != rep.Tools {
					t.Errorf("no probe %v: %d of %d endpoints mapped: %+v", noProbe, rep.Mapped, rep.Tools, rep.Mapping.Unmapped)
				}
			}
		})
	}
}
