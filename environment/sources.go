package environment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/toolbench"
)

// loadedSource is a collection loadSources read, and where from when
// the registry's checks (Registry.Add validates every collection) need
// to say so: "" when the loader's own errors already name the file.
type loadedSource struct {
	col  *toolenv.Collection
	from string
}

// origin says where a loaded collection came from, for the message of a
// name clash, and how that source would take another name.
type origin struct {
	what   string // "the collection folder out/a/slot"
	rename string // how to give it another name ("": it cannot take one)
}

// sourceSet is what loadSources has read so far: each collection's
// origin by name, and the collection folders by file identity (the same
// folder named twice, by two spellings of its path, is loaded once).
type sourceSet struct {
	byName map[string]origin
	dirs   []loadedDir
}

type loadedDir struct {
	path string
	info fs.FileInfo
}

// seenDir returns the path under which dir was loaded already, or "".
func (s *sourceSet) seenDir(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	for _, d := range s.dirs {
		if os.SameFile(d.info, fi) {
			return d.path
		}
	}
	s.dirs = append(s.dirs, loadedDir{dir, fi})
	return ""
}

// claim records that the collection named name comes from o, or says
// which source already took that name and how to rename one of them.
func (s *sourceSet) claim(name string, o origin) error {
	if s.byName == nil {
		s.byName = map[string]origin{}
	}
	prev, dup := s.byName[name]
	if !dup {
		s.byName[name] = o
		return nil
	}
	rename := o.rename
	if rename == "" { // this source's name is fixed: the other one moves
		rename = prev.rename
	}
	return toolenv.Errorw(toolenv.StatusInvalidArguments,
		fmt.Sprintf("collection names are unique in an environment: %s, or serve the two from separate environments", rename),
		"two collections are named %q: %s and %s", name, prev.what, o.what)
}

// loadSources reads the collections the configuration names, in a fixed
// order: the ToolBench collection, OpenAPI documents, collection folders,
// MCP servers and saved MCP tool lists, then the demo (when asked for or when nothing else is given). It keeps
// the tasks that come with them.
func (env *Environment) loadSources(ctx context.Context) ([]loadedSource, error) {
	c, log := &env.Config, env.log
	var colls []loadedSource
	var seen sourceSet
	start := time.Now()
	if len(c.ToolBench) > 0 {
		col, src, err := toolbench.LoadCollection(toolbench.CollectionOptions{}, c.ToolBench...)
		if err != nil {
			return nil, err
		}
		// Its schemas are checked once, by Registry.Add.
		if err := seen.claim(col.Name, origin{"the ToolBench docs " + strings.Join(c.ToolBench, ", "), ""}); err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col, "ToolBench docs " + strings.Join(c.ToolBench, ", ")})
		env.Tasks[col.Name] = src.Tasks(col)
		log.Info("loaded ToolBench docs", "files", src.Files, "apis", len(col.Tools), "queries", len(env.Tasks[col.Name]), "elapsed", time.Since(start).Round(time.Millisecond))
	}
	for _, path := range c.OpenAPI {
		col, err := LoadOpenAPI(ctx, path)
		if err != nil {
			return nil, err
		}
		if err := seen.claim(col.Name, origin{"the OpenAPI document " + path, "name this document's collection with NAME=FILE"}); err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col: col})
		log.Info("loaded OpenAPI document", "file", path, "collection", col.Name, "tools", len(col.Tools))
	}
	for _, dir := range c.Collections {
		if first := seen.seenDir(dir); first != "" {
			// The same folder twice (a --config file's collections and
			// eval's --tasks, say): one collection, loaded once.
			log.Info("collection folder named twice; loaded once", "dir", dir, "first", first)
			continue
		}
		col, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, err
		}
		if err := seen.claim(col.Name, origin{"the collection folder " + dir, fmt.Sprintf("change \"name\" in %s", filepath.Join(dir, toolenv.CollectionFile))}); err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col: col})
		tasks, problems, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
		switch {
		case err == nil:
			env.Tasks[col.Name] = tasks
			for _, p := range problems {
				log.Warn("task skipped", "err", p)
			}
		case !errors.Is(err, fs.ErrNotExist):
			log.Warn("the collection's tasks cannot be read; serving its tools without them", "dir", dir, "err", err)
		}
		log.Info("loaded collection", "dir", dir, "collection", col.Name, "kind", col.Kind, "tools", len(col.Tools))
	}
	mcpColls, err := env.loadMCPSources(ctx)
	if err != nil {
		return nil, err
	}
	colls = append(colls, mcpColls...)
	if c.DemoShop {
		col, tasks, err := demo.Shop(ctx, "")
		if err != nil {
			return nil, err
		}
		if err := seen.claim(col.Name, origin{"the embedded shop demo", ""}); err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col: col})
		env.Tasks[col.Name] = tasks
		log.Info("serving the embedded shop demo", "tools", len(col.Tools))
	}
	if c.Demo || len(colls) == 0 {
		col, err := demo.Collection()
		if err != nil {
			return nil, err
		}
		if err := seen.claim(col.Name, origin{"the embedded demo collection", ""}); err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col: col})
		if tasks, err := demo.Tasks(); err == nil {
			env.Tasks[col.Name] = tasks
		}
		log.Info("serving the embedded demo collection", "tools", len(col.Tools))
	}
	return colls, nil
}

// LoadOpenAPI reads an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML) into a
// collection (see openapi.Load). "NAME=FILE" names the collection;
// otherwise it is named after the file, or the document's title when the
// file name is generic (openapi.yaml).
func LoadOpenAPI(ctx context.Context, path string) (*toolenv.Collection, error) {
	return openapi.LoadNamed(ctx, path)
}
