package doctest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
)

// maxIllustrative is how many sh blocks of README.md and docs/*.md may be
// shown without being run. Keep them rare: raise it only for a block that
// truly cannot run here, and say why beside it.
const maxIllustrative = 12

// TestDocs runs every sh block of README.md and docs/*.md as written
// (see the package documentation for the convention). Run one page with
// go test ./internal/doctest -run 'TestDocs/docs/eval.md'; set
// TOOLENV_DOCTEST_KEEP=1 to keep a failing page's folder.
func TestDocs(t *testing.T) {
	data := shareddata.Require(t)
	root := moduleRoot(t)
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, filepath.ToSlash(rel))
	}
	netw := network(t)
	bin := binDir(t)
	var (
		mu                sync.Mutex
		run, illustrative int
	)
	t.Run("pages", func(t *testing.T) {
		for _, name := range files {
			t.Run(name, func(t *testing.T) {
				if netw.Private {
					t.Parallel()
				}
				opts := Options{
					Root:    root,
					Shared:  filepath.Dir(data),
					Bin:     bin,
					Model:   filepath.Join(bin, "toolenv-docmodel"),
					Network: netw,
					Keep:    os.Getenv("TOOLENV_DOCTEST_KEEP") != "",
					Logf:    t.Logf,
				}
				ctx := context.Background()
				if dl, ok := t.Deadline(); ok {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, dl)
					defer cancel()
				}
				rep, err := RunFile(ctx, opts, filepath.Join(root, filepath.FromSlash(name)), name)
				if rep != nil {
					mu.Lock()
					run += rep.Run
					illustrative += rep.Illustrative
					mu.Unlock()
				}
				if err != nil {
					if opts.Keep && rep != nil {
						t.Logf("the page's folder is kept: %s", rep.Dir)
					}
					t.Fatal(err)
				}
				t.Logf("%s: %d blocks run, %d illustrative", name, rep.Run, rep.Illustrative)
			})
		}
	})
	t.Logf("%d sh blocks run, %d illustrative", run, illustrative)
	if illustrative > maxIllustrative {
		t.Errorf("%d sh blocks are illustrative, more than the %d allowed: make them run, or raise maxIllustrative deliberately", illustrative, maxIllustrative)
	}
}
