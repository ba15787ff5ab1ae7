package main

import (
	"fmt"
	"sync"

	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
)

// evalSkewFlags are eval's version-skew flags: --env runs the tasks of a
// (drifted) collection folder, --docs shows the model the documentation
// of another version of it (DynamicToolBench's setting: old docs, new
// environment). --docs-tool is an environment flag (drift_mw.go).
type evalSkewFlags struct {
	env  []string
	docs []string
}

func registerEvalSkewFlags(fs *pflag.FlagSet, f *evalSkewFlags) {
	fs.StringArrayVar(&f.env, "env", nil, "collection folder to run against, e.g. a drifted version (repeatable; same as --tasks)")
	fs.StringArrayVar(&f.docs, "docs", nil, "collection folder whose documentation the model is shown, e.g. the version before the drift: toolenv eval --docs C --env C2 (repeatable; matched to the environment's collections by name)")
}

// skewTaskTools wraps an eval's task-tools function: tools of collections
// given with --docs are shown as that version documents them, and the
// documentation tool is offered when the environment has it
// (--docs-tool).
func skewTaskTools(f *evalSkewFlags, base func(*toolenv.Collection, *toolenv.Task) ([]*toolenv.Tool, error)) (func(*toolenv.Collection, *toolenv.Task) ([]*toolenv.Tool, error), error) {
	docs := map[string]*toolenv.Collection{}
	for _, dir := range f.docs {
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, fmt.Errorf("--docs: %w", err)
		}
		docs[c.Name] = c
	}
	var mu sync.Mutex
	lineages := map[string]*drift.Lineage{}
	lineage := func(c *toolenv.Collection) (*drift.Lineage, error) {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := lineages[c.Name]; ok {
			return l, nil
		}
		// The environment's copy may carry the documentation tool:
		// verify the lineage against the folder as written.
		src := c
		if c.Dir != "" {
			var err error
			if src, err = toolenv.ReadCollection(c.Dir); err != nil {
				return nil, err
			}
		}
		l, err := drift.Open(src)
		if err != nil {
			return nil, err
		}
		lineages[c.Name] = l
		return l, nil
	}
	return func(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error) {
		tools, err := base(c, t)
		if err != nil {
			return nil, err
		}
		if d := docs[c.Name]; d != nil {
			l, err := lineage(c)
			if err != nil {
				return nil, err
			}
			if l.Manifest.VersionIndex(d.Version) < 0 {
				return nil, usagef("--docs %s is version %q of %s, which is not in the environment's chain (%v)", d.Dir, d.Version, c.Name, l.Versions())
			}
			tools = drift.ShownTools(l, d, tools)
		}
		if dt := c.Tool(drift.DocsToolName); dt != nil {
			tools = append(tools, dt)
		}
		return tools, nil
	}, nil
}
