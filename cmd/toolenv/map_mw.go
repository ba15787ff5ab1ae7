package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/failover"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/repair"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
)

// mapFlags are the environment flags of the middleware that uses
// mappings: failover and drift repair (docs/mapping.md).
type mapFlags struct {
	failover      string
	failoverScore float64
	repair        bool
	repairFrom    []string
}

func registerMapFlags(fs *pflag.FlagSet, f *mapFlags) {
	fs.StringVar(&f.failover, "failover", "", "re-route calls whose backend fails (down, rate-limited, timed out, gone) to mapped alternatives: a mappings file (toolenv map match/index --mappings-out) or a tool index (.db)")
	fs.Float64Var(&f.failoverScore, "failover-min-score", 0.6, "lowest mapping score failover uses (reviewed mappings need none)")
	fs.BoolVar(&f.repair, "repair", false, "repair calls written against the documentation of a drifted collection's base version, through the structural mapping between the two versions' documentation")
	fs.StringArrayVar(&f.repairFrom, "repair-from", nil, "repair calls written against this older collection folder's documentation (repeatable; matched to a loaded collection by name)")
}

// mappingMiddleware returns the failover and repair middleware the flags
// ask for, to run first (before faults, drift enforcement and
// validation): failover outermost, so that an alternative's call passes
// through everything a call does, then repair, so that drift enforcement
// sees the repaired call.
func mappingMiddleware(ctx context.Context, f *mapFlags, env *environment) ([]toolenv.Middleware, error) {
	var out []toolenv.Middleware
	if f.failover != "" {
		set, err := readMappings(ctx, f.failover)
		if err != nil {
			return nil, usagef("--failover %s: %v", f.failover, err)
		}
		fo := failover.New(env.registry, failover.Options{Mappings: set, MinScore: f.failoverScore, Logger: env.log})
		out = append(out, fo.Middleware())
		env.log.Info("failover to mapped alternatives", "mappings", len(set.Mappings), "min_score", f.failoverScore)
	}
	if f.repair || len(f.repairFrom) > 0 {
		a, err := repairAdapter(ctx, f, env)
		if err != nil {
			return nil, err
		}
		out = append(out, a.Middleware())
	}
	return out, nil
}

// readMappings reads a mappings file or the mappings of a tool index.
func readMappings(ctx context.Context, path string) (*mapping.Set, error) {
	if strings.HasSuffix(path, ".db") {
		ix, err := index.Open(ctx, path, index.OpenOptions{})
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		return ix.Mappings(), nil
	}
	return mapping.ReadSet(path)
}

// repairAdapter maps old documentation onto the loaded collections: the
// base version of each drifted collection (--repair) and the folders of
// --repair-from.
func repairAdapter(ctx context.Context, f *mapFlags, env *environment) (*repair.Adapter, error) {
	set := &mapping.Set{Version: mapping.SetVersion}
	var old []*toolenv.Tool
	add := func(c *toolenv.Collection, docs []*toolenv.Tool, version string) error {
		name := c.Name + "@" + version
		docs = truth.Rename(docs, name)
		ms, err := truth.MapVersions(ctx, docs, c.Tools, structural.Options{})
		if err != nil {
			return err
		}
		set.Add(ms...)
		old = append(old, docs...)
		env.log.Info("repairing calls written against older documentation", "collection", c.Name, "docs", name, "mapped", len(ms))
		return nil
	}
	if f.repair {
		n := 0
		for _, c := range env.registry.Collections() {
			if !drift.IsDrifted(c) {
				continue
			}
			l, err := drift.Open(c)
			if err != nil {
				return nil, err
			}
			if err := add(c, l.Base.Tools, l.Manifest.BaseVersion); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			return nil, usagef("--repair: no drifted collection is loaded (give one with --collection DIR, written by toolenv drift), or name the old documentation with --repair-from DIR")
		}
	}
	for _, dir := range f.repairFrom {
		docs, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, usagef("--repair-from: %v", err)
		}
		c := env.registry.Collection(docs.Name)
		if c == nil {
			return nil, usagef("--repair-from %s: collection %q is not loaded (loaded: %v)", dir, docs.Name, mapping.CollectionsOf(indexableTools(env)))
		}
		v := docs.Version
		if v == "" {
			v = "old"
		}
		if err := add(c, docs.Tools, v); err != nil {
			return nil, fmt.Errorf("--repair-from %s: %w", dir, err)
		}
	}
	return repair.New(env.registry, set, repair.Options{Old: old, Logger: env.log}), nil
}
