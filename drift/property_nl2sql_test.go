package drift_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/nl2api"
)

// highRates drift most of what can drift, so the property is tested on
// every change kind; the second step uses the default rates.
var highRates = map[string]float64{"deprecate": 0.1, "endpoint": 0.5, "nest": 1, "rename": 0.5, "type": 0.6, "required": 0.5, "default": 1, "response": 0.5, "errors": 1}

// TestDriftPreservesMeaningNL2SQL is the proof that drift preserves
// meaning on every verified NL2SQL task: it builds the SLOT, SEL and REST
// collections from BIRD, drifts each twice (v1 → v2 → v3), and replays
// every task's translated gold calls through the drifted collection's
// enforcing pipeline and the original backend: each must reach the gold
// answer (the oracle scores 100% on v2 and v3). It then sends a random
// sample of the original (v1) gold calls to the strict v3 pipeline: every
// call whose translation changes it detectably must be rejected.
func TestDriftPreservesMeaningNL2SQL(t *testing.T) {
	data := shareddata.Require(t, "bird")
	ctx := context.Background()
	out := t.TempDir()
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out}); err != nil {
		t.Fatal(err)
	}
	for _, flavor := range nl2api.Flavors {
		t.Run(flavor, func(t *testing.T) {
			dir := filepath.Join(out, flavor)
			c1, err := toolenv.ReadCollection(dir)
			if err != nil {
				t.Fatal(err)
			}
			tasks1 := readTasks(t, dir)
			lin, tasks, baseDir := drift.NewLineage(c1), tasks1, dir
			for i, seed := range []uint64{101, 202} {
				opts := drift.Options{Seed: seed, Tasks: tasks}
				if i == 0 {
					opts.Rates = highRates
				}
				d, err := drift.Drift(lin, opts)
				if err != nil {
					t.Fatal(err)
				}
				vdir := filepath.Join(out, fmt.Sprintf("%s-%s", flavor, d.Step.To))
				if err := drift.Write(vdir, d, drift.WriteOptions{BaseDir: baseDir}); err != nil {
					t.Fatal(err)
				}
				c, err := toolenv.ReadCollection(vdir)
				if err != nil {
					t.Fatal(err)
				}
				l, err := drift.Open(c)
				if err != nil {
					t.Fatal(err)
				}
				h := sqlPipeline(t, c, l, drift.ModeStrict)
				vtasks := readTasks(t, vdir)
				if len(vtasks) != len(tasks1) {
					t.Fatalf("%s: %d tasks, want %d", d.Step.To, len(vtasks), len(tasks1))
				}
				failed := 0
				for _, task := range vtasks {
					if reason, detail := nl2api.Verify(ctx, h, c, task, "prop-"+d.Step.To+"-"+task.ID); reason != "" {
						failed++
						if failed <= 5 {
							t.Errorf("%s %s: %s: %s", d.Step.To, task.ID, reason, detail)
						}
					}
				}
				t.Logf("%s %s: %d tools changed (%s); oracle with translated gold calls: %d/%d tasks reach the gold answer",
					flavor, d.Step.To, len(d.Step.Tools), changeCounts(d.Step), len(vtasks)-failed, len(vtasks))
				lin, tasks, baseDir = l, vtasks, l.Base.Dir
			}
			rejected, sampled, silent := rejectOldCalls(t, lin, tasks1, 60)
			t.Logf("%s %s strict: %d of %d sampled v1 gold calls that drifted detectably were rejected (%d more changed only silently: a flipped default)", flavor, lin.Manifest.Version, rejected, sampled, silent)
			if sampled == 0 {
				t.Errorf("no v1 gold call of %s drifted detectably: the property is not exercised", flavor)
			}
		})
	}
}

// sqlPipeline is what "toolenv serve --collection DIR" runs for a drifted
// NL2SQL collection: the standard pipeline with the enforcer around
// validation, over the base collection's backend.
func sqlPipeline(t *testing.T, c *toolenv.Collection, l *drift.Lineage, mode string) toolenv.Handler {
	t.Helper()
	var backend toolenv.Handler
	switch l.Base.Backend.Type {
	case sqltools.BackendType:
		b, err := sqltools.Open(context.Background(), l.Base, sqltools.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		backend = b
	case sqlrest.BackendType:
		b, err := sqlrest.Open(context.Background(), l.Base, sqlrest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		backend = b
	default:
		t.Fatalf("base backend %q", l.Base.Backend.Type)
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	enf := drift.NewEnforcer(drift.EnforcerOptions{Mode: mode}, l)
	return invoke.New(reg, invoke.Options{BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
}

// rejectOldCalls sends a seeded sample of the original gold calls that the
// chain changes detectably (anything but an explicit old default) to the
// strict pipeline of the chain's last version, and counts rejections.
func rejectOldCalls(t *testing.T, l *drift.Lineage, tasks []*toolenv.Task, n int) (rejected, sampled, silent int) {
	t.Helper()
	type oldCall struct {
		task string
		g    toolenv.GoldCall
	}
	var cands []oldCall
	m := l.Manifest
	for _, task := range tasks {
		for _, g := range task.Gold {
			name, args, err := m.Forward(m.BaseVersion, g.Name, g.Args)
			if err != nil {
				t.Fatal(err)
			}
			if name == g.Name && canon(t, withoutFlippedDefaults(m, g, args)) == canon(t, g.Args) {
				if canon(t, args) != canon(t, g.Args) {
					silent++
				}
				continue
			}
			cands = append(cands, oldCall{task.ID, g})
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	if len(cands) > n {
		cands = cands[:n]
	}
	c := l.Current
	h := sqlPipeline(t, c, l, drift.ModeStrict)
	for _, oc := range cands {
		tool := c.Tool(oc.g.Name)
		if tool == nil {
			t.Errorf("old tool %s does not resolve in %s (no stub left?)", oc.g.Name, l.Manifest.Version)
			continue
		}
		res := h.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: c, Args: sqltools.CallArgs(oc.g, tool), Session: "reject-" + oc.task, Frontend: "go"})
		sampled++
		switch res.Status {
		case toolenv.StatusInvalidArguments, toolenv.StatusGone:
			rejected++
		default:
			t.Errorf("task %s: old call %s %v was not rejected in strict mode: %s %s", oc.task, oc.g.Name, oc.g.Args, res.Status, res.Error)
		}
	}
	return rejected, sampled, silent
}

// withoutFlippedDefaults removes from translated args the parameters an
// old call left out that translation filled with the old default of a
// flipped default: the one change an old call does not show.
func withoutFlippedDefaults(m *drift.Manifest, g toolenv.GoldCall, args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	name := g.Name
	for _, s := range m.Steps {
		for _, tc := range s.Tools {
			if tc.Tool != name {
				continue
			}
			for _, c := range tc.Changes {
				if c.Op == drift.OpFlipDefault {
					if _, had := g.Args[c.Param]; !had {
						delete(out, c.Param)
					}
				}
			}
			name = tc.Name
		}
	}
	return out
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := toolenv.Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readTasks(t *testing.T, dir string) []*toolenv.Task {
	t.Helper()
	tasks, problems, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
	if err != nil || len(problems) > 0 {
		t.Fatalf("tasks of %s: %v %v", dir, err, problems)
	}
	return tasks
}

func changeCounts(s *drift.Step) string {
	counts := map[string]int{}
	for _, tc := range s.Tools {
		for _, c := range tc.Changes {
			counts[c.Op]++
		}
	}
	var parts []string
	for _, op := range []string{drift.OpRenameTool, drift.OpEndpoint, drift.OpRenameParam, drift.OpRetype, drift.OpEnumCase, drift.OpMakeOptional, drift.OpMakeRequired, drift.OpFlipDefault, drift.OpNest, drift.OpRenameField, drift.OpErrorFormat, drift.OpDeprecate} {
		if counts[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, counts[op]))
		}
	}
	return strings.Join(parts, ", ")
}
