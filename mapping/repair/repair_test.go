package repair

import (
	"context"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
)

// drifted serves version 2 of the test collection (drifted with seed) in
// strict mode, and returns the v1 collection and the pipeline, with the
// repair adapter in front when repair is set.
func drifted(t *testing.T, seed uint64, repair bool) (*toolenv.Collection, *invoke.Registry, toolenv.Handler, *Adapter) {
	t.Helper()
	old, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	d, err := drift.Drift(drift.NewLineage(old), drift.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	cur := d.Lineage.Current
	b, err := virtual.Build(virtual.Options{Tools: d.Lineage.Base.Tools})
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(cur, b); err != nil {
		t.Fatal(err)
	}
	enf := drift.NewEnforcer(drift.EnforcerOptions{Mode: drift.ModeStrict}, d.Lineage)
	before := []toolenv.Middleware{enf.Before()}
	var a *Adapter
	if repair {
		// The mapping from the old documentation to the current tools,
		// computed from the two documentations alone.
		oldDocs := truth.Rename(old.Tools, "world@old")
		ms, err := truth.MapVersions(context.Background(), oldDocs, cur.Tools, structural.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a = New(reg, &mapping.Set{Version: mapping.SetVersion, Mappings: ms}, Options{Old: oldDocs})
		before = append([]toolenv.Middleware{a.Middleware()}, before...)
	}
	p := invoke.New(reg, invoke.Options{BeforeValidate: before, AfterValidate: []toolenv.Middleware{enf.After()}})
	old2, _ := toolenv.ReadCollection("../testdata/world")
	return old2, reg, p, a
}

// oldCalls are calls written against the v1 documentation: the documented
// examples, and for tools without one, their required arguments.
func oldCalls(c *toolenv.Collection) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, t := range c.Tools {
		if len(t.Examples) > 0 {
			out[t.Name] = t.Examples[0].Args
			continue
		}
		args := map[string]any{}
		for _, n := range t.Input.Required {
			p := t.Input.Prop(n)
			switch {
			case len(p.Enum) > 0:
				args[n] = p.Enum[0]
			case p.Type == "integer" || p.Type == "number":
				args[n] = 2
			case p.Type == "boolean":
				args[n] = true
			case p.Type == "object":
				args[n] = map[string]any{"city_name": "Oslo"}
			default:
				args[n] = "$t$"
			}
		}
		out[t.Name] = args
	}
	return out
}

// completion runs every old call against v2 and counts the successes.
func completion(t *testing.T, old *toolenv.Collection, reg *invoke.Registry, p toolenv.Handler) (ok int, repaired int, failures []string) {
	t.Helper()
	for name, args := range oldCalls(old) {
		call, res := reg.NewCall("world", name, args)
		if res == nil {
			res = p.Invoke(context.Background(), call)
		}
		if res.OK() {
			ok++
			if res.Meta[MetaRepaired] == "true" {
				repaired++
			}
		} else {
			failures = append(failures, name+": "+string(res.Status)+" "+res.Error)
		}
	}
	return ok, repaired, failures
}

func TestRepairRestoresOldCalls(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		old, reg, strict, _ := drifted(t, seed, false)
		without, _, _ := completion(t, old, reg, strict)
		_, reg, repairing, a := drifted(t, seed, true)
		with, repaired, failures := completion(t, old, reg, repairing)
		t.Logf("seed %d: old calls completed without repair %d/%d, with repair %d/%d (%d repaired, adapter knows %d old tools)",
			seed, without, len(old.Tools), with, len(old.Tools), repaired, a.Len())
		if with != len(old.Tools) {
			t.Errorf("seed %d: with repair %d/%d; failures: %q", seed, with, len(old.Tools), failures)
		}
		if without >= with || repaired == 0 {
			t.Errorf("seed %d: repair changed nothing (%d without, %d with)", seed, without, with)
		}
	}
}

func TestRepairKeepsGoodCallsAndSaysWhatItDid(t *testing.T) {
	old, reg, p, _ := drifted(t, 1, true)
	_ = old
	// A call written for the current version passes untouched.
	cur := reg.Collection("world")
	for _, tl := range cur.Tools {
		if tl.Deprecated != nil || tl.Hidden() || len(tl.Examples) == 0 {
			continue
		}
		call, res := reg.NewCall("world", tl.Name, tl.Examples[0].Args)
		if res != nil {
			t.Fatal(res)
		}
		res = p.Invoke(context.Background(), call)
		if res.Meta[MetaRepaired] != "" {
			t.Errorf("%s: a current call was repaired: %v", tl.Name, res.Warnings)
		}
	}
	// An old call is repaired and the result says how.
	var seen bool
	for name, args := range oldCalls(old) {
		call, res := reg.NewCall("world", name, args)
		if res != nil {
			continue
		}
		res = p.Invoke(context.Background(), call)
		if res.Meta[MetaRepaired] == "true" {
			seen = true
			if res.Meta[MetaFrom] == "" || res.Meta[MetaTo] == "" || !strings.Contains(strings.Join(res.Warnings, " "), "repaired a call written against older documentation") {
				t.Fatalf("%s: %+v", name, res)
			}
		}
	}
	if !seen {
		t.Fatal("no call was repaired")
	}
}
