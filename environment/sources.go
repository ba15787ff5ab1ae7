package environment

import (
	"context"
	"errors"
	"io/fs"
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

// loadSources reads the collections the configuration names, in a fixed
// order: the ToolBench collection, OpenAPI documents, collection folders,
// MCP servers and saved MCP tool lists, then the demo (when asked for or when nothing else is given). It keeps
// the tasks that come with them.
func (env *Environment) loadSources(ctx context.Context) ([]loadedSource, error) {
	c, log := &env.Config, env.log
	var colls []loadedSource
	start := time.Now()
	if len(c.ToolBench) > 0 {
		col, src, err := toolbench.LoadCollection(toolbench.CollectionOptions{}, c.ToolBench...)
		if err != nil {
			return nil, err
		}
		// Its schemas are checked once, by Registry.Add.
		colls = append(colls, loadedSource{col, "ToolBench docs " + strings.Join(c.ToolBench, ", ")})
		env.Tasks[col.Name] = src.Tasks(col)
		log.Info("loaded ToolBench docs", "files", src.Files, "apis", len(col.Tools), "queries", len(env.Tasks[col.Name]), "elapsed", time.Since(start).Round(time.Millisecond))
	}
	for _, path := range c.OpenAPI {
		col, err := LoadOpenAPI(ctx, path)
		if err != nil {
			return nil, err
		}
		colls = append(colls, loadedSource{col: col})
		log.Info("loaded OpenAPI document", "file", path, "collection", col.Name, "tools", len(col.Tools))
	}
	for _, dir := range c.Collections {
		col, err := toolenv.ReadCollection(dir)
		if err != nil {
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
	if c.Demo || len(colls) == 0 {
		col, err := demo.Collection()
		if err != nil {
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
