package nl2api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/endpoint"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/openapi"
)

// Built is one flavor's output.
type Built struct {
	Flavor     string
	Collection *toolenv.Collection
	Tasks      []*toolenv.Task
	Dir        string
	// Writes reports the write tasks (Options.Writes), which Tasks holds
	// after the questions'.
	Writes *WriteReport
}

// Build builds the collections, verifies every task and writes them with
// the report into opt.Out. A database that cannot be opened fails its
// questions (reported) and the build goes on with the others.
//
// With Options.BuildCache set, a build whose inputs and options match a
// stored one writes the stored output instead, its report marked
// (Report.Reused), and a new build is stored (BuildCache).
func Build(ctx context.Context, opt Options) (*Report, error) {
	opt.defaults()
	start := time.Now()
	if err := checkData(opt.Data); err != nil {
		return nil, err
	}
	if opt.BuildCache == nil {
		return build(ctx, &opt, start)
	}
	return opt.BuildCache.cachedBuild(ctx, &opt, start, func() (*Report, error) { return build(ctx, &opt, start) })
}

// build builds as Build says, without the cache.
func build(ctx context.Context, opt *Options, start time.Time) (*Report, error) {
	rep := &Report{Data: opt.Data, Out: opt.Out, Seed: opt.Seed}
	timed := func(stage string, t0 time.Time) {
		rep.Timings = append(rep.Timings, Timing{Stage: stage, Seconds: time.Since(t0).Seconds()})
	}
	l := bird.Layout{Dir: opt.Data}
	all, err := bird.ReadQuestions(l.Questions())
	if err != nil {
		return nil, err
	}
	qs, dbNames, err := selectQuestions(all, opt.DBs)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	// Databases.
	t0 := time.Now()
	dbs := map[string]*database{}
	var dbList []*database
	for i, name := range dbNames {
		opt.progress("open databases", i, len(dbNames))
		d := openDatabase(ctx, l, name, opt)
		if d.err != nil {
			opt.Logger.Warn("database unavailable: its questions are rejected", "db", name, "err", d.err)
		}
		dbs[name] = d
		dbList = append(dbList, d)
	}
	opt.progress("open databases", len(dbNames), len(dbNames))
	defer func() {
		for _, d := range dbList {
			if d.db != nil {
				d.db.Close()
			}
		}
	}()
	timed("open databases", t0)
	// Plan, gold answers, candidates.
	t0 = time.Now()
	cands := make([]*candidate, len(qs))
	for i, q := range qs {
		opt.progress("plan questions", i, len(qs))
		c := &candidate{q: q, db: dbs[q.DB], rejects: map[string]*rejection{}}
		prepare(ctx, c, opt)
		cands[i] = c
	}
	opt.progress("plan questions", len(qs), len(qs))
	timed("plan questions and gold answers", t0)
	if err := opt.limits.Err(); err != nil {
		return nil, err
	}
	shared := map[string]*rodb.DB{}
	var okNames []string
	for _, d := range dbList {
		if d.db != nil {
			shared[d.name] = d.db
			okNames = append(okNames, d.name)
		}
	}
	var ws *writeState
	if opt.Writes {
		t0 := time.Now()
		ws = newWriteState(ctx, dbList, cands, opt)
		defer ws.close()
		timed("write tasks", t0)
	}
	var built []*Built
	for _, flavor := range opt.Flavors {
		t0 := time.Now()
		b, err := buildFlavor(ctx, flavor, cands, dbList, okNames, shared, ws, opt)
		if err != nil {
			return nil, err
		}
		built = append(built, b)
		timed("build and verify "+flavor, t0)
	}
	// Variants.
	t0 = time.Now()
	variants, err := writeVariants(ctx, built, shared, opt)
	if err != nil {
		return nil, err
	}
	if err := opt.limits.Err(); err != nil {
		return nil, err
	}
	if len(variants) > 0 {
		timed("variants", t0)
	}
	// Parser coverage over every query BIRD gives (dev + SQL corpus).
	t0 = time.Now()
	rep.Parser = parserCoverage(l, all, dbs)
	timed("parser coverage", t0)
	rep.fill(qs, dbList, cands, built, variants, opt)
	rep.Limits = opt.limits.report()
	rep.Seconds = time.Since(start).Seconds()
	if err := rep.write(opt.Out, opt); err != nil {
		return nil, err
	}
	return rep, nil
}

// buildFlavor verifies one flavor's candidates and writes its collection.
func buildFlavor(ctx context.Context, flavor string, cands []*candidate, dbList []*database, dbNames []string, shared map[string]*rodb.DB, ws *writeState, opt *Options) (*Built, error) {
	dir := filepath.Join(opt.Out, flavor)
	spec, err := backendConfig(flavor, dir, dbList)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", flavor, err)
	}
	var live []*candidate
	for _, c := range cands {
		if c.rejects[flavor] == nil && c.gold != nil {
			live = append(live, c)
		}
	}
	// Candidate tools and tasks.
	var coll *toolenv.Collection
	var tasks []*toolenv.Task
	var endpoints []*endpoint.Endpoint
	switch flavor {
	case Slot, Sel:
		var plans []*decompose.Plan
		for _, c := range live {
			plans = append(plans, c.plan4(flavor))
		}
		tools := sessionTools(flavor, plans, dbNames)
		coll = newCollection(flavor, tools, spec, dbNames)
		for _, c := range live {
			tasks = append(tasks, sessionTask(flavor, c, c.plan4(flavor), coll.Tools))
		}
	case Rest:
		var instances []*endpoint.Instance
		for _, c := range live {
			instances = append(instances, c.rest)
		}
		endpoints = endpoint.Merge(instances)
		var tools []*toolenv.Tool
		for _, e := range endpoints {
			tools = append(tools, restTool(e))
		}
		coll = newCollection(flavor, tools, spec, dbNames)
		for _, c := range live {
			tasks = append(tasks, restTask(c, nil))
		}
	}
	coll.Dir = dir
	failures := map[int]*rejection{}
	for i, t := range tasks {
		rt, err := marshalMeta(t)
		if err != nil {
			failures[i] = &rejection{Stage: "build", Reason: "task not writable as JSON", Detail: err.Error()}
			continue
		}
		tasks[i] = rt
	}
	var check []*toolenv.Task
	var index []int
	for i, t := range tasks {
		if failures[i] == nil {
			check, index = append(check, t), append(index, i)
		}
	}
	verified, err := verifyAll(ctx, backendOpener(coll, shared, opt), coll, check, "verify "+flavor, opt)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", flavor, err)
	}
	for j, r := range verified {
		failures[index[j]] = r
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opt.limits.Err(); err != nil {
		return nil, err
	}
	var kept []*toolenv.Task
	var keptCands []*candidate
	for i, t := range tasks {
		if r := failures[i]; r != nil {
			if cv := live[i].plan4(flavor).Caveat; cv != nil && r.Stage == "verify" && r.Reason == "answer differs" {
				// The data is outside what the decomposition reproduces.
				r.Reason, r.Detail = cv.Reason, cv.Detail+" ("+r.Detail+")"
			}
			live[i].rejects[flavor] = r
			continue
		}
		kept = append(kept, t)
		keptCands = append(keptCands, live[i])
	}
	// The final collection holds only what kept tasks use.
	switch flavor {
	case Slot, Sel:
		var plans []*decompose.Plan
		for _, c := range keptCands {
			plans = append(plans, c.plan4(flavor))
		}
		tools := sessionTools(flavor, plans, dbNames)
		if ws != nil {
			tools = ws.sessionTools(flavor, plans, dbNames)
		}
		coll = newCollection(flavor, tools, spec, dbNames)
		for i, c := range keptCands {
			kept[i].Tools = readOnly(coll, sessionTask(flavor, c, c.plan4(flavor), coll.Tools).Tools)
		}
	case Rest:
		used := map[string]bool{}
		for _, t := range kept {
			used[t.Gold[0].Name] = true
		}
		var tools []*toolenv.Tool
		byDB := map[string][]string{}
		for _, e := range endpoints {
			if used[e.Name] {
				tools = append(tools, restTool(e))
				byDB[e.DB] = append(byDB[e.DB], e.Name)
			}
		}
		var finds map[string]*toolenv.Tool
		if ws != nil {
			var list []*toolenv.Tool
			finds, list = findTools(ws.specs)
			tools = append(tools, list...)
			tools = append(tools, ws.restTools(dbNames)...)
		}
		coll = newCollection(flavor, tools, spec, dbNames)
		ws.setFinds(finds)
		for _, t := range kept {
			names := append([]string(nil), byDB[t.Group]...)
			sort.Strings(names)
			t.Tools = names
		}
	}
	coll.Dir = dir
	var writes *WriteReport
	if ws != nil {
		var wk []*toolenv.Task
		var err error
		if wk, writes, err = ws.build(ctx, flavor, coll, shared, opt); err != nil {
			return nil, fmt.Errorf("build %s: %w", flavor, err)
		}
		kept = append(kept, wk...)
		keptCands = append(keptCands, make([]*candidate, len(wk))...)
	}
	// Names are unique by construction; should two tools still share one,
	// the tasks offering the later one are rejected, not the build.
	if clash := clashes(coll); len(clash) > 0 {
		var tools []*toolenv.Tool
		seen := map[string]bool{}
		for _, t := range coll.Tools {
			if !seen[t.Name] {
				seen[t.Name] = true
				tools = append(tools, t)
			}
		}
		coll = newCollection(flavor, tools, spec, dbNames)
		coll.Dir = dir
		var keep []*toolenv.Task
		for i, t := range kept {
			if name := usesAny(t, clash); name != "" {
				if keptCands[i] != nil {
					keptCands[i].rejects[flavor] = &rejection{Stage: "build", Reason: "tool name clash", Detail: fmt.Sprintf("two tools are named %s", name)}
				} else {
					writes.drop(t.Group, t.ID, &rejection{Stage: "build", Reason: "tool name clash", Detail: fmt.Sprintf("two tools are named %s", name)})
				}
				continue
			}
			keep = append(keep, t)
		}
		kept = keep
	}
	if err := writeCollection(dir, coll, kept, opt); err != nil {
		return nil, fmt.Errorf("build %s: %w", flavor, err)
	}
	return &Built{Flavor: flavor, Collection: coll, Tasks: kept, Dir: dir, Writes: writes}, nil
}

// clashes returns the tool names used by more than one tool of c.
func clashes(c *toolenv.Collection) map[string]bool {
	count := map[string]int{}
	for _, t := range c.Tools {
		count[t.Name]++
	}
	out := map[string]bool{}
	for n, k := range count {
		if k > 1 {
			out[n] = true
		}
	}
	return out
}

// usesAny returns a name of names task t offers or calls, or "".
func usesAny(t *toolenv.Task, names map[string]bool) string {
	for _, n := range t.Tools {
		if names[n] {
			return n
		}
	}
	for _, g := range t.Gold {
		if names[g.Name] {
			return g.Name
		}
	}
	return ""
}

func (c *candidate) plan4(flavor string) *decompose.Plan {
	if flavor == Sel {
		return c.sel
	}
	return c.slot
}

// backendOpener opens the backend of a collection on shared databases,
// its calls limited to the time given.
func backendOpener(c *toolenv.Collection, shared map[string]*rodb.DB, opt *Options) opener {
	return func(ctx context.Context, limit time.Duration) (toolenv.Handler, func(), error) {
		h, closer, err := openBackend(ctx, c, shared, limit, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("collection %s: %w", c.Name, err)
		}
		return h, closer, nil
	}
}

// openBackend opens the backend of a collection on shared databases.
func openBackend(ctx context.Context, c *toolenv.Collection, shared map[string]*rodb.DB, limit time.Duration, opt *Options) (toolenv.Handler, func(), error) {
	switch c.Backend.Type {
	case sqltools.BackendType:
		b, err := sqltools.Open(ctx, c, sqltools.Options{Databases: shared, CallTimeout: limit, Logger: opt.Logger})
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Close() }, nil
	case sqlrest.BackendType:
		b, err := sqlrest.Open(ctx, c, sqlrest.Options{Databases: shared, CallTimeout: limit, Logger: opt.Logger})
		if err != nil {
			return nil, nil, err
		}
		return b, func() { b.Close() }, nil
	}
	return nil, nil, fmt.Errorf("no backend of type %q", c.Backend.Type)
}

// writeCollection writes a collection folder: collection.json,
// tools.json, tasks.jsonl, openapi.json and functions.json (the tools an
// agent may be offered: hidden ones left out).
func writeCollection(dir string, c *toolenv.Collection, tasks []*toolenv.Task, opt *Options) error {
	opt.outputs.add(filepath.Join(dir, toolenv.CollectionFile), filepath.Join(dir, toolenv.ToolsFile), filepath.Join(dir, toolenv.TasksFile),
		filepath.Join(dir, "openapi.json"), filepath.Join(dir, "functions.json"))
	if err := toolenv.WriteCollection(dir, c); err != nil {
		return err
	}
	if err := toolenv.WriteTasks(filepath.Join(dir, toolenv.TasksFile), tasks); err != nil {
		return err
	}
	if err := toolenv.WriteJSONFile(filepath.Join(dir, "openapi.json"), openapi.Document(c, "")); err != nil {
		return err
	}
	return toolenv.WriteJSONFile(filepath.Join(dir, "functions.json"), openai.FromTools(c.Listed()))
}
