package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/toolbench"
)

// SourceConfig names the APIs to mirror and how they are reached.
type SourceConfig struct {
	// Collections are collection folders, "NAME=DIR" renaming one (two
	// builds of the same kind are both named "bird-rest").
	Collections []string
	// ToolBench are StableToolBench query files, folders of them, or
	// tools trees, mirrored as one collection.
	ToolBench []string
	// OpenAPI are OpenAPI documents, "NAME=FILE" naming the collection.
	OpenAPI []string
	// Upstream reaches documented (virtual) APIs: a StableToolBench /
	// RapidAPI proxy, each API's own URL, or BaseURL for all of them.
	UpstreamURL  string
	ToolbenchKey string
	Direct       bool
	BaseURL      string
	Timeout      time.Duration
	// MaxResultBytes records larger answers as too large; 0 means 4 MiB.
	MaxResultBytes int
	Logger         *slog.Logger
	// DocsOnly loads the documentation alone: no backend, no Invoker
	// (for commands that call nothing, such as the cache set).
	DocsOnly bool
}

// Sources are the loaded APIs and the call path to them.
type Sources struct {
	Collections []*toolenv.Collection
	// Tools are the APIs to mirror: every listed, not deprecated tool.
	Tools []*toolenv.Tool
	// Tasks are the collections' tasks (their gold calls feed the
	// sampler).
	Tasks []*toolenv.Task
	// Invoker is the invoke pipeline over a registry of the collections,
	// each behind the backend that reaches its real API.
	Invoker toolenv.Handler
	// Described says what was loaded, one line per collection, for the
	// dataset card.
	Described []string
	closers   []io.Closer
}

// Close releases the backends.
func (s *Sources) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i].Close())
	}
	return errors.Join(errs...)
}

func usage(format string, args ...any) error {
	return toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
}

// OpenSources loads the collections cfg names and builds the call path
// to their real APIs: a live collection (a built NL2SQL REST flavor) is
// served by its own backend; a documented API is reached upstream only —
// never the simulator or the offline synthesizer, whose answers are not
// real. A collection whose tools keep per-session state (SLOT, SEL) is
// refused: its calls mean nothing outside an episode.
func OpenSources(ctx context.Context, cfg SourceConfig) (*Sources, error) {
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = 4 << 20
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sources{}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	for _, spec := range cfg.Collections {
		dir, name := spec, ""
		if n, d, cut := strings.Cut(spec, "="); cut && n != "" {
			if _, err := os.Stat(spec); err != nil {
				name, dir = n, d
			}
		}
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			return nil, err
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if name != "" && name != c.Name {
			rename(c, tasks, name)
		}
		s.Collections = append(s.Collections, c)
		s.Tasks = append(s.Tasks, tasks...)
		s.Described = append(s.Described, fmt.Sprintf("%s: %d tools from %s (%s)", c.Name, len(c.Tools), dir, c.Kind))
	}
	if len(cfg.ToolBench) > 0 {
		src, err := toolbench.Load(cfg.ToolBench...)
		if err != nil {
			return nil, err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		s.Collections = append(s.Collections, c)
		s.Described = append(s.Described, fmt.Sprintf("%s: %d APIs from %s", c.Name, len(c.Tools), strings.Join(cfg.ToolBench, ", ")))
	}
	for _, path := range cfg.OpenAPI {
		c, err := environment.LoadOpenAPI(ctx, path)
		if err != nil {
			return nil, err
		}
		s.Collections = append(s.Collections, c)
		s.Described = append(s.Described, fmt.Sprintf("%s: %d operations from %s", c.Name, len(c.Tools), path))
	}
	if len(s.Collections) == 0 {
		return nil, usage("name the APIs to mirror: --collection DIR (e.g. out/bird/rest), --toolbench or --openapi")
	}
	seen := map[string]bool{}
	for _, c := range s.Collections {
		if seen[c.Name] {
			return nil, usage("two collections are named %q: rename one with --collection NAME=DIR", c.Name)
		}
		seen[c.Name] = true
	}
	reg := invoke.NewRegistry()
	for _, c := range s.Collections {
		if cfg.DocsOnly {
			for _, t := range c.Tools {
				if !t.Hidden() && t.Deprecated == nil {
					s.Tools = append(s.Tools, t)
				}
			}
			continue
		}
		h, err := realBackend(ctx, c, cfg, log)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", c.Name, err)
		}
		if cl, isCloser := h.(io.Closer); isCloser {
			s.closers = append(s.closers, cl)
		}
		if err := reg.Add(c, h); err != nil {
			return nil, err
		}
		skipped := 0
		for _, t := range c.Tools {
			if t.State() == toolenv.StateWrite {
				// Sampled requests to a tool that changes state would
				// change the server's (delete files, rows): never sent.
				skipped++
				continue
			}
			if !t.Hidden() && t.Deprecated == nil {
				s.Tools = append(s.Tools, t)
			}
		}
		if skipped > 0 {
			log.Warn("tools that change state are not mirrored (override with the MCP state rule if one is read-only)", "collection", c.Name, "tools", skipped)
		}
	}
	if !cfg.DocsOnly {
		s.Invoker = invoke.New(reg, invoke.Options{Logger: log, MaxResultBytes: cfg.MaxResultBytes})
	}
	ok = true
	return s, nil
}

// rename gives a collection, its tools and its tasks another name.
func rename(c *toolenv.Collection, tasks []*toolenv.Task, name string) {
	c.Name = name
	for _, t := range c.Tools {
		t.Collection = name
		t.ID = toolenv.ToolID(name, t.Name)
	}
	c.Reindex()
	for _, t := range tasks {
		t.Collection = name
	}
}

// realBackend is the backend that reaches c's real API.
func realBackend(ctx context.Context, c *toolenv.Collection, cfg SourceConfig, log *slog.Logger) (toolenv.Handler, error) {
	if c.Policy.Sessions {
		return nil, usage("its tools keep per-session state (SLOT/SEL); mirror a stateless flavor such as REST")
	}
	switch c.Backend.Type {
	case sqlrest.BackendType:
		return sqlrest.Open(ctx, c, sqlrest.Options{Logger: log})
	case "", "virtual":
		if cfg.BaseURL != "" {
			for _, t := range c.Tools {
				if t.Binding == nil {
					t.Binding = &toolenv.Binding{Method: "GET", Path: "/" + t.Name}
				}
				t.Binding.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
			}
		}
		b, err := upstream.New(upstream.Config{ProxyURL: cfg.UpstreamURL, ToolbenchKey: cfg.ToolbenchKey, Direct: cfg.Direct || cfg.BaseURL != "",
			Timeout: cfg.Timeout, MaxBody: int64(cfg.MaxResultBytes), Logger: log})
		if err != nil {
			return nil, usage("%v", err)
		}
		if !b.Configured() {
			return nil, usage("its APIs are documented only: give --upstream-url (a RapidAPI proxy), --upstream-direct (each API's own URL) or --base-url")
		}
		return b, nil
	case mcpsource.BackendType:
		up, err := mcpsource.DialUpstream(ctx, c, cfg.Timeout, mcpsource.Options{Logger: log, MaxMessageBytes: cfg.MaxResultBytes})
		if err != nil {
			return nil, usage("%v", err)
		}
		return up, nil
	}
	return nil, usage("backend %q cannot be mirrored (mirror reaches live REST collections, documented APIs upstream and MCP servers)", c.Backend.Type)
}
