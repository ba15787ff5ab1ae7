package environment

import (
	"context"
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/faults"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/failover"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/repair"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
)

// middleware returns the optional middleware of the pipeline, in the
// order of the package documentation: before runs ahead of argument
// validation, after between validation and the cache (invoke.Options).
// Failover and repair come first, so that an alternative's call passes
// through everything a call does and drift enforcement sees the repaired
// call; then faults (they hit every call), the feedback override, the
// documentation tool and drift enforcement.
func (env *Environment) middleware(ctx context.Context) (before, after []toolenv.Middleware, err error) {
	m, err := env.mappingMiddleware(ctx)
	if err != nil {
		return nil, nil, err
	}
	b, a, err := env.driftMiddleware()
	if err != nil {
		return nil, nil, err
	}
	return append(m, b...), a, nil
}

// driftMiddleware returns the fault injector, the feedback override, the
// documentation tool and the enforcement middleware of the drifted
// collections loaded (backend type "drift").
func (env *Environment) driftMiddleware() (before, after []toolenv.Middleware, err error) {
	c := &env.Config
	if c.Faults != "" {
		fc, err := faults.ReadConfig(c.Faults)
		if err != nil {
			return nil, nil, invalidErr(env.option("faults"), err)
		}
		inj, err := faults.New(fc, faults.Options{Logger: env.log})
		if err != nil {
			return nil, nil, invalidErr(env.option("faults"), err)
		}
		before = append(before, inj.Middleware())
		env.faults = fc
		env.log.Info("injecting faults", "rules", len(fc.Rules), "seed", fc.Seed)
	}
	if mw := drift.FeedbackLevel(c.Feedback); mw != nil {
		before = append(before, mw)
	}
	var lineages, all []*drift.Lineage
	for _, col := range env.Registry.Collections() {
		if !drift.IsDrifted(col) {
			all = append(all, drift.NewLineage(col))
			continue
		}
		l, err := env.lineage(col)
		if err != nil {
			return nil, nil, err
		}
		lineages, all = append(lineages, l), append(all, l)
		mode := c.Drift.Mode
		if mode == "" {
			mode = col.Policy.Mode
		}
		env.log.Info("enforcing drifted collection", "collection", col.Name, "version", col.Version, "base", l.Manifest.BaseVersion,
			"mode", mode, "validation", col.Policy.Validation)
	}
	if c.Drift.DocsTool {
		// After the lineages are opened: the tool is not in tools.json.
		for _, col := range env.Registry.Collections() {
			drift.AddDocsTool(col)
		}
		env.docs = drift.NewDocs(all...)
		before = append(before, env.docs.Middleware())
	}
	if len(lineages) > 0 || c.Watch > 0 { // a watched folder may become a drifted version
		env.enforcer = drift.NewEnforcer(drift.EnforcerOptions{Mode: c.Drift.Mode, Cache: env.Store, Logger: env.log}, lineages...)
		before = append(before, env.enforcer.Before())
		after = append(after, env.enforcer.After())
	}
	return before, after, nil
}

// invalidErr is an invalid configuration value with its cause.
func invalidErr(option string, err error) error {
	return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: option, Err: err}
}

// mappingMiddleware returns failover (outermost) and repair, as the
// configuration asks.
func (env *Environment) mappingMiddleware(ctx context.Context) ([]toolenv.Middleware, error) {
	c := &env.Config
	var out []toolenv.Middleware
	if c.Failover.Mappings != "" {
		set, err := ReadMappings(ctx, c.Failover.Mappings)
		if err != nil {
			return nil, invalid("%s %s: %v", env.option("failover.mappings"), c.Failover.Mappings, err)
		}
		fo := failover.New(env.Registry, failover.Options{Mappings: set, MinScore: c.Failover.MinScore, Logger: env.log})
		out = append(out, fo.Middleware())
		env.log.Info("failover to mapped alternatives", "mappings", len(set.Mappings), "min_score", c.Failover.MinScore)
	}
	if c.Repair.Base || len(c.Repair.From) > 0 {
		a, err := env.repairAdapter(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, a.Middleware())
	}
	return out, nil
}

// ReadMappings reads a mappings file, or the mappings of a tool index
// (a .db file).
func ReadMappings(ctx context.Context, path string) (*mapping.Set, error) {
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

// lineage returns the lineage of drifted collection col: the one its
// backend opened (and verified) once (newDriftBackend), or, for a
// collection served otherwise, opened now.
func (env *Environment) lineage(col *toolenv.Collection) (*drift.Lineage, error) {
	if b, ok := env.Registry.Backend(col.Name).(*driftBackend); ok {
		return b.lineage, nil
	}
	return drift.Open(col)
}

// Lineage returns the lineage of the drifted collection named name (its
// base, steps and manifest) as its backend opened and verified it when the
// environment opened, or nil when no drifted collection of that name is
// served. A caller needing the lineage need not replay the drift again.
func (env *Environment) Lineage(name string) *drift.Lineage {
	if b, ok := env.Registry.Backend(name).(*driftBackend); ok {
		return b.lineage
	}
	return nil
}

// repairAdapter maps old documentation onto the loaded collections: the
// base version of each drifted collection (Repair.Base) and the folders of
// Repair.From.
func (env *Environment) repairAdapter(ctx context.Context) (*repair.Adapter, error) {
	c := &env.Config
	set := &mapping.Set{Version: mapping.SetVersion}
	var old []*toolenv.Tool
	env.repairs = map[string]string{}
	add := func(col *toolenv.Collection, docs []*toolenv.Tool, version, option string) error {
		env.repairs[col.Name] = option
		name := col.Name + "@" + version
		docs = truth.Rename(docs, name)
		ms, err := truth.MapVersions(ctx, docs, col.Tools, structural.Options{})
		if err != nil {
			return err
		}
		set.Add(ms...)
		old = append(old, docs...)
		env.log.Info("repairing calls written against older documentation", "collection", col.Name, "docs", name, "mapped", len(ms))
		return nil
	}
	if c.Repair.Base {
		n := 0
		for _, col := range env.Registry.Collections() {
			if !drift.IsDrifted(col) {
				continue
			}
			l, err := env.lineage(col)
			if err != nil {
				return nil, err
			}
			if err := add(col, l.Base.Tools, l.Manifest.BaseVersion, env.option("repair.base")); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			return nil, invalid("%s: no drifted collection is loaded (give one with %s, written by toolenv drift), or name the old documentation with %s",
				env.option("repair.base"), env.option("collections"), env.option("repair.from"))
		}
	}
	for _, dir := range c.Repair.From {
		docs, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, invalidErr(env.option("repair.from"), err)
		}
		col := env.Registry.Collection(docs.Name)
		if col == nil {
			return nil, invalid("%s %s: collection %q is not loaded (loaded: %v)", env.option("repair.from"), dir, docs.Name, mapping.CollectionsOf(env.ListedTools()))
		}
		v := docs.Version
		if v == "" {
			v = "old"
		}
		if err := add(col, docs.Tools, v, env.option("repair.from")); err != nil {
			return nil, fmt.Errorf("%s %s: %w", env.option("repair.from"), dir, err)
		}
	}
	return repair.New(env.Registry, set, repair.Options{Old: old, Logger: env.log}), nil
}

// ListedTools returns the tools every collection lists (the documentation
// tool included when added), sorted by id: what an index of the
// environment holds.
func (env *Environment) ListedTools() []*toolenv.Tool {
	var out []*toolenv.Tool
	for _, c := range env.Registry.Collections() {
		out = append(out, c.Listed()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
