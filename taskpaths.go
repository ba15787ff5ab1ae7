package toolenv

import "path/filepath"

// ResolveTaskPaths makes the paths of the tasks' initial states
// (InitialState.Files and Database) absolute, taken relative to dir: the
// folder of the task file that names them. Absolute paths and empty ones
// are kept.
func ResolveTaskPaths(tasks []*Task, dir string) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	for _, t := range tasks {
		if t == nil || t.Initial == nil {
			continue
		}
		for _, p := range []*string{&t.Initial.Files, &t.Initial.Database} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
}
