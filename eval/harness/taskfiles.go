package harness

import (
	"fmt"
	"os"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// splitTaskFiles takes the tasks files (JSON lines of toolenv.Task, named
// *.jsonl) out of the task sources: tasks for collections the environment
// serves from elsewhere, such as an MCP server's (--mcp-server).
func splitTaskFiles(paths []string) (files, rest []string) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && strings.HasSuffix(strings.ToLower(p), ".jsonl") {
			files = append(files, p)
			continue
		}
		rest = append(rest, p)
	}
	return files, rest
}

// readTaskFiles reads tasks files for the environment's collections: a
// task names its collection, or, when the environment serves exactly one
// collection the task sources did not bring (one MCP server), goes to it.
func readTaskFiles(files []string, colls map[string]*toolenv.Collection, brought map[string]bool) (tasks []*toolenv.Task, problems []string, err error) {
	var others []string
	for name := range colls {
		if !brought[name] {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	for _, f := range files {
		ts, probs, err := toolenv.ReadTasks(f)
		if err != nil {
			return nil, nil, invalid("--tasks %s: %v", f, err)
		}
		for _, p := range probs {
			problems = append(problems, p.Error())
		}
		for _, t := range ts {
			if t.Collection == "" {
				if len(others) != 1 {
					return nil, nil, invalid("--tasks %s: task %s names no collection, and the environment serves %d collections besides the task folders' (%s): write \"collection\" in each task", f, t.ID, len(others), strings.Join(others, ", "))
				}
				t.Collection = others[0]
			}
			if colls[t.Collection] == nil {
				var names []string
				for n := range colls {
					names = append(names, n)
				}
				sort.Strings(names)
				return nil, nil, invalid("--tasks %s: task %s is for collection %q, which the environment does not serve (it serves %s)", f, t.ID, t.Collection, strings.Join(names, ", "))
			}
		}
		tasks = append(tasks, ts...)
	}
	if len(files) > 0 && len(tasks) == 0 {
		return nil, nil, fmt.Errorf("--tasks %s: no tasks", strings.Join(files, ", "))
	}
	return tasks, problems, nil
}
