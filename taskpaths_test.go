package toolenv

import (
	"path/filepath"
	"testing"
)

func TestResolveTaskPaths(t *testing.T) {
	dir := t.TempDir()
	tasks := []*Task{
		{ID: "a", Initial: &InitialState{Files: "seed/a", Database: "db/x.sqlite", SQL: "DELETE FROM t"}},
		{ID: "b", Initial: &InitialState{Files: "/abs/seed"}},
		{ID: "c"}, nil,
	}
	ResolveTaskPaths(tasks, dir)
	if tasks[0].Initial.Files != filepath.Join(dir, "seed/a") || tasks[0].Initial.Database != filepath.Join(dir, "db/x.sqlite") || tasks[0].Initial.SQL != "DELETE FROM t" {
		t.Fatalf("a: %+v", tasks[0].Initial)
	}
	if tasks[1].Initial.Files != "/abs/seed" || tasks[1].Initial.Database != "" || tasks[2].Initial != nil {
		t.Fatalf("b, c: %+v %+v", tasks[1].Initial, tasks[2].Initial)
	}
}
