package main

import (
	"os"
	"sync"
	"testing"
)

// sharedBuild is a folder that several tests read and none writes (a
// generated corpus and its collections, say): built once per test
// process, on first use, in a folder of its own (test processes may run
// at once) that TestMain removes at the end.
type sharedBuild struct {
	once sync.Once
	dir  string
	err  error
}

// sharedDirs are the folders of the sharedBuilds made, for TestMain.
var sharedDirs struct {
	mu   sync.Mutex
	dirs []string
}

// get returns the folder, running build into it on the first call; a
// build that failed fails every test asking for it.
func (b *sharedBuild) get(t *testing.T, build func(dir string) error) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolenv-cmd-test-")
		if err != nil {
			b.err = err
			return
		}
		sharedDirs.mu.Lock()
		sharedDirs.dirs = append(sharedDirs.dirs, dir)
		sharedDirs.mu.Unlock()
		b.dir, b.err = dir, build(dir)
	})
	if b.err != nil {
		t.Fatalf("a build the tests share: %v", b.err)
	}
	return b.dir
}

// removeSharedBuilds removes the folders of the sharedBuilds made.
func removeSharedBuilds() {
	sharedDirs.mu.Lock()
	defer sharedDirs.mu.Unlock()
	for _, d := range sharedDirs.dirs {
		os.RemoveAll(d)
	}
}
