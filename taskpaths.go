package toolenv

import (
	"fmt"
	"path/filepath"
)

// ResolveTaskPaths resolves the tasks' initial states against dir, the
// folder of the task file that names them (InitialState.Resolve: paths
// made absolute, an SQL script given as a .sql file read). ReadTasks
// does it for the tasks it reads; call it for tasks parsed otherwise. A
// task whose state cannot be resolved is reported, and left as it was.
func ResolveTaskPaths(tasks []*Task, dir string) []error {
	var problems []error
	for _, t := range tasks {
		if t == nil {
			continue
		}
		if err := t.Initial.Resolve(dir); err != nil {
			problems = append(problems, fmt.Errorf("task %s: %w", t.ID, err))
		}
	}
	return problems
}

// absDir is dir made absolute (as it is, if it cannot be).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
