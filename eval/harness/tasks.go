package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/toolbench"
)

// TaskTools returns the tools a task offers: an NL2SQL task's narrowed to
// its starting table, any other task's as agent.TaskTools says.
func TaskTools(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error) {
	if c.Backend.Type == sqltools.BackendType && t.Meta["columns"] != nil {
		return sqltools.TaskTools(c, t)
	}
	return agent.TaskTools(c, t), nil
}

// loadedTasks are the tasks of an evaluation with their collections.
type loadedTasks struct {
	colls    map[string]*toolenv.Collection
	tasks    []*toolenv.Task
	problems []string
}

// SortTasks orders tasks by collection, then by id (numerically when the
// ids end with numbers), so that runs, shards and seeds are stable.
func SortTasks(ts []*toolenv.Task) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Collection != ts[j].Collection {
			return ts[i].Collection < ts[j].Collection
		}
		return naturalLess(ts[i].ID, ts[j].ID)
	})
}

func naturalLess(a, b string) bool {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb || na < 0 || nb < 0 {
		return a < b
	}
	return na < nb
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return s, -1
	}
	n := 0
	for _, c := range s[i:] {
		n = n*10 + int(c-'0')
	}
	return s[:i], n
}

// splitTaskSources sorts task sources into collection folders and
// StableToolBench query files.
func splitTaskSources(paths []string) (collections, queries []string, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, invalid("--tasks %s: %v", p, err)
		}
		if st.IsDir() {
			if _, err := os.Stat(filepath.Join(p, toolenv.CollectionFile)); err == nil {
				collections = append(collections, p)
				continue
			}
			if inside := collectionsBelow(p, 3); len(inside) > 0 {
				shown := inside
				if len(shown) > 12 {
					shown = shown[:12]
				}
				more := ""
				if len(inside) > len(shown) {
					more = fmt.Sprintf(" (and %d more)", len(inside)-len(shown))
				}
				return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "name one of them: --tasks "+strings.Join(shown, " or --tasks ")+more,
					"--tasks %s: it holds no %s: it is a folder of %d collections", p, toolenv.CollectionFile, len(inside))
			}
		}
		queries = append(queries, p)
	}
	return collections, queries, nil
}

// loadTasksOnly reads tasks and collections without building backends
// (for EnvURL, where a server runs the tools).
func loadTasksOnly(collDirs, queries []string) (*loadedTasks, error) {
	lt := &loadedTasks{colls: map[string]*toolenv.Collection{}}
	for _, d := range collDirs {
		c, err := toolenv.ReadCollection(d)
		if err != nil {
			return nil, err
		}
		lt.colls[c.Name] = c
		tasks, problems, err := toolenv.ReadTasks(filepath.Join(d, toolenv.TasksFile))
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			if t.Collection == "" {
				t.Collection = c.Name
			}
		}
		lt.tasks = append(lt.tasks, tasks...)
		for _, p := range problems {
			lt.problems = append(lt.problems, p.Error())
		}
	}
	if len(queries) > 0 {
		src, err := toolbench.Load(queries...)
		if err != nil {
			return nil, err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		lt.colls[c.Name] = c
		lt.tasks = append(lt.tasks, src.Tasks(c)...)
	}
	return lt, nil
}

// filterTasks keeps the tasks the configuration's filters select.
func filterTasks(ts []*toolenv.Task, cfg *Config) []*toolenv.Task {
	ids := map[string]bool{}
	for _, id := range cfg.TaskIDs {
		ids[strings.TrimSpace(id)] = true
	}
	groups := map[string]bool{}
	for _, g := range cfg.Groups {
		groups[strings.TrimSpace(g)] = true
	}
	var out []*toolenv.Task
	for _, t := range ts {
		if len(ids) > 0 && !ids[t.ID] {
			continue
		}
		if len(groups) > 0 && !groups[t.Group] {
			continue
		}
		out = append(out, t)
		if cfg.Limit > 0 && len(out) == cfg.Limit {
			break
		}
	}
	return out
}

// skewTaskTools wraps a task-tools function: tools of collections given
// in Skew.Docs are shown as that version documents them, and the
// documentation tool is offered when the environment has it (docs_tool).
func skewTaskTools(s *SkewConfig, base func(*toolenv.Collection, *toolenv.Task) ([]*toolenv.Tool, error)) (func(*toolenv.Collection, *toolenv.Task) ([]*toolenv.Tool, error), error) {
	docs := map[string]*toolenv.Collection{}
	for _, dir := range s.Docs {
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
				return nil, invalid("--docs %s is version %q of %s, which is not in the environment's chain (%v)", d.Dir, d.Version, c.Name, l.Versions())
			}
			tools = drift.ShownTools(l, d, tools)
		}
		if dt := c.Tool(drift.DocsToolName); dt != nil {
			tools = append(tools, dt)
		}
		return tools, nil
	}, nil
}

// collectionsBelow lists the collection folders (holding a
// collection.json) at most depth levels below dir, in order, not looking
// inside a collection or a hidden folder, nor past 2,000 folders.
func collectionsBelow(dir string, depth int) []string {
	var out []string
	seen := 0
	var walk func(d string, level int)
	walk = func(d string, level int) {
		if level > depth || seen > 2000 {
			return
		}
		for _, sub := range toolenv.CollectionsIn(d) {
			out = append(out, sub)
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			seen++
			sub := filepath.Join(d, e.Name())
			if _, err := os.Stat(filepath.Join(sub, toolenv.CollectionFile)); err == nil {
				continue // a collection: listed, not searched
			}
			walk(sub, level+1)
		}
	}
	walk(dir, 1)
	return out
}
