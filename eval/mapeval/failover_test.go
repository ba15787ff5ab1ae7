package mapeval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/mapeval/mapevaltest"
	"github.com/toolenv/toolenv/nl2api"
)

// adversarialBuild generates an adversarial corpus for seed, builds its
// REST flavor with the obfuscated variant, and returns the build folder
// and the corpus.
func adversarialBuild(t *testing.T, seed uint64) (string, *mapevaltest.Corpus) {
	t.Helper()
	data, out := t.TempDir(), t.TempDir()
	c, err := mapevaltest.Generate(data, mapevaltest.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out, Flavors: []string{nl2api.Rest}, Obfuscate: true, Seed: int64(seed), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Flavors) != 1 || rep.Flavors[0].Kept < c.Questions*9/10 {
		t.Fatalf("the build kept too few of %d questions: %+v", c.Questions, rep.Flavors)
	}
	return out, c
}

// answered is the share of tasks whose answer equals the gold one with
// the primary down and failover on.
func answered(rep *Report) float64 {
	r := rep.Runs[len(rep.Runs)-1]
	return float64(r.Correct) / float64(r.Checkable)
}

// TestFailoverAdversarial measures failover on generated databases made
// to be hard to map (near-duplicate endpoints one filter column apart,
// columns of one type described alike, shared column names, permuted
// result columns), onto the obfuscated variant as built and onto a
// blinded one whose documentation names every column of one type alike.
// As built, the documentation decides: at least 98 % of tasks answered.
// Blinded, the documentation cannot tell the near-duplicates apart: with
// probes at least 98 % are still answered, and the report says the probes
// decided; without them fewer are.
func TestFailoverAdversarial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three corpora")
	}
	ctx := context.Background()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			out, c := adversarialBuild(t, seed)
			primary, alt := filepath.Join(out, "rest"), filepath.Join(out, "rest-obfuscated")
			rep, err := Failover(ctx, FailoverOptions{Primary: primary, Alternative: alt})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("as built: %.1f %% answered; %s", 100*answered(rep), rep.Title)
			if answered(rep) < 0.98 || rep.Mapped != rep.Tools {
				t.Errorf("as built: %.3f answered, %d of %d mapped: %+v", answered(rep), rep.Mapped, rep.Tools, rep.Mapping.Unmapped)
			}
			if err := mapevaltest.Blind(alt, c); err != nil {
				t.Fatal(err)
			}
			blind, err := Failover(ctx, FailoverOptions{Primary: primary, Alternative: alt})
			if err != nil {
				t.Fatal(err)
			}
			docsOnly, err := Failover(ctx, FailoverOptions{Primary: primary, Alternative: alt, NoProbe: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("blinded: %.1f %% answered with probes (%s), %.1f %% without", 100*answered(blind), blind.Title, 100*answered(docsOnly))
			if answered(blind) < 0.98 {
				var b strings.Builder
				blind.Markdown(&b)
				t.Errorf("blinded, with probes: %.3f answered\n%s", answered(blind), b.String())
				logWrong(t, out, blind)
			}
			if blind.Mapping.ByProbe == 0 || blind.Mapping.Probed["disagree"] == 0 {
				t.Errorf("blinded: the probes decided nothing: %+v", blind.Mapping)
			}
			if answered(docsOnly) >= answered(blind) {
				t.Errorf("blinded: documentation alone answered %.3f, no fewer than with probes (%.3f): the corpus is not adversarial", answered(docsOnly), answered(blind))
			}
		})
	}
}

// logWrong logs the pairs of rep that the obfuscation's mapping file
// says are wrong, with the probes of their source.
func logWrong(t *testing.T, out string, rep *Report) {
	var mf struct{ Tools map[string]string }
	raw, err := os.ReadFile(filepath.Join(out, "rest-obfuscated.mapping.json"))
	if err == nil {
		err = json.Unmarshal(raw, &mf)
	}
	if err != nil {
		t.Log(err)
		return
	}
	want := map[string]string{}
	for f, o := range mf.Tools {
		want[o] = f
	}
	for _, p := range rep.Mapping.Pairs {
		_, from, _ := toolenv.SplitToolID(p.From)
		_, to, _ := toolenv.SplitToolID(p.To)
		if want[from] != to {
			t.Logf("wrong: %s → %s (%.3f, %s), want %s", from, to, p.Score, p.Evidence, want[from])
			for _, v := range rep.Mapping.Verdicts {
				if v.From == p.From {
					t.Logf("   probed %s: %+v", v.To, *v)
				}
			}
		}
	}
}

// TestFailoverReportSaysWhyUnmapped: an endpoint whose counterpart the
// alternative lacks is reported unmapped with the reason, in the JSON
// and the Markdown, and the tasks that need it are the ones lost.
func TestFailoverReportSaysWhyUnmapped(t *testing.T) {
	out, _ := adversarialBuild(t, 2)
	alt := filepath.Join(out, "rest-obfuscated")
	var mf struct{ Tools map[string]string }
	raw, err := os.ReadFile(filepath.Join(out, "rest-obfuscated.mapping.json"))
	if err == nil {
		err = json.Unmarshal(raw, &mf)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Remove the counterpart of the first near-duplicate filter endpoint.
	var gone, victim string
	for f, o := range mf.Tools {
		if strings.Contains(o, "_by_") && (victim == "" || o < victim) {
			gone, victim = f, o
		}
	}
	var tools []*toolenv.Tool
	raw, err = os.ReadFile(filepath.Join(alt, toolenv.ToolsFile))
	if err == nil {
		err = toolenv.DecodeJSON(raw, &tools)
	}
	if err != nil {
		t.Fatal(err)
	}
	kept := tools[:0]
	for _, tl := range tools {
		if tl.Name != gone {
			kept = append(kept, tl)
		}
	}
	if err := toolenv.WriteJSONFile(filepath.Join(alt, toolenv.ToolsFile), kept); err != nil {
		t.Fatal(err)
	}
	rep, err := Failover(context.Background(), FailoverOptions{Primary: filepath.Join(out, "rest"), Alternative: alt})
	if err != nil {
		t.Fatal(err)
	}
	var why string
	for _, u := range rep.Mapping.Unmapped {
		if u.Tool == "bird-rest/"+victim {
			why = u.Reason
		}
	}
	if why == "" || rep.Mapped != rep.Tools-1 {
		t.Fatalf("%s (counterpart %s removed): mapped %d of %d, unmapped %+v", victim, gone, rep.Mapped, rep.Tools, rep.Mapping.Unmapped)
	}
	var b strings.Builder
	rep.Markdown(&b)
	if !strings.Contains(b.String(), "Unmapped endpoints:") || !strings.Contains(b.String(), "- bird-rest/"+victim+": ") ||
		!strings.Contains(b.String(), fmt.Sprintf("Mapped %d of %d endpoints", rep.Tools-1, rep.Tools)) {
		t.Errorf("markdown:\n%s", b.String())
	}
	if down := rep.Runs[len(rep.Runs)-1]; down.Correct == down.Checkable || down.Correct < down.Checkable-3 {
		t.Errorf("with one endpoint unmapped: %d of %d answered", down.Correct, down.Checkable)
	}
	t.Logf("unmapped %s: %s", victim, why)
}
