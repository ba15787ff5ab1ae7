package drift

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/toolbench"
)

// Source names the collection to drift: exactly one of a collection
// folder (possibly drifted already), ToolBench docs, an OpenAPI document
// or the embedded demo.
type Source struct {
	// In is a collection folder.
	In string
	// ToolBench are StableToolBench query files or folders.
	ToolBench []string
	// OpenAPI is an OpenAPI 3 document ("NAME=FILE" names it).
	OpenAPI string
	// Demo is the embedded demo collection.
	Demo bool
}

// Load reads the source: its lineage, its own tasks (none for an OpenAPI
// document) and the folder its base collection came from ("" when it was
// not read from a folder), which Write copies into base/. Naming no
// source or several is an invalid-arguments error.
func (s Source) Load(ctx context.Context) (*Lineage, []*toolenv.Task, string, error) {
	n := 0
	for _, set := range []bool{s.In != "", len(s.ToolBench) > 0, s.OpenAPI != "", s.Demo} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, nil, "", toolenv.Errorw(toolenv.StatusInvalidArguments, "", "give exactly one source: --in DIR, --toolbench PATH, --openapi FILE or --demo")
	}
	switch {
	case s.In != "":
		c, err := toolenv.ReadCollection(s.In)
		if err != nil {
			return nil, nil, "", err
		}
		l, err := Open(c)
		if err != nil {
			return nil, nil, "", err
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(s.In, toolenv.TasksFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, "", err
		}
		baseDir := s.In
		if IsDrifted(c) {
			baseDir = l.Base.Dir
		}
		return l, tasks, baseDir, nil
	case len(s.ToolBench) > 0:
		src, err := toolbench.Load(s.ToolBench...)
		if err != nil {
			return nil, nil, "", err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		c.Version = "v1"
		return NewLineage(c), src.Tasks(c), "", nil
	case s.OpenAPI != "":
		c, err := openapi.LoadNamed(ctx, s.OpenAPI)
		if err != nil {
			return nil, nil, "", err
		}
		return NewLineage(c), nil, "", nil
	}
	c, err := demo.Collection()
	if err != nil {
		return nil, nil, "", err
	}
	tasks, err := demo.Tasks()
	if err != nil {
		return nil, nil, "", err
	}
	return NewLineage(c), tasks, "", nil
}

// ParseRates reads per-operator rates written "op=p,op=p" (the --rate
// flag): an empty string is no rates.
func ParseRates(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--rate %q: want op=probability pairs, e.g. rename=0.5,type=0.2", s)
		}
		p, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--rate %s: %q is not a number", k, v)
		}
		out[k] = p
	}
	return out, nil
}

// Summary says in three lines what the drift changed (operators and how
// often), how many tasks it translated and where it was written (out).
func (d *Drifted) Summary(out string) string {
	return d.summaryHead() + wroteLine(out)
}

// summaryHead is the summary without its last line.
func (d *Drifted) summaryHead() string {
	c := d.Lineage.Current
	counts := map[string]int{}
	for _, tc := range d.Step.Tools {
		for _, ch := range tc.Changes {
			counts[ch.Op]++
		}
	}
	var parts []string
	for _, op := range []string{OpRenameTool, OpEndpoint, OpRenameParam, OpRetype, OpEnumCase, OpMakeOptional,
		OpMakeRequired, OpFlipDefault, OpNest, OpRenameField, OpErrorFormat, OpDeprecate} {
		if counts[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", op, counts[op]))
		}
	}
	apis := 0
	for _, t := range d.From.Tools {
		if !t.Hidden() && t.Meta[MetaStub] != "true" {
			apis++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s (seed %d): %d of %d tools changed; %s\n", c.Name, d.Step.From, d.Step.To, d.Step.Seed, len(d.Step.Tools), apis, strings.Join(parts, ", "))
	fmt.Fprintf(&b, "tasks translated: %d\n", len(d.Tasks))
	return b.String()
}

// wroteLine is the summary's last line: where the new version is.
func wroteLine(out string) string {
	return fmt.Sprintf("wrote %s (manifest.json, CHANGELOG.md, breaking.md, tools.json); serve it with: toolenv serve --collection %s\n", out, out)
}
