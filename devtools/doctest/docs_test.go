package doctest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/shareddata"
)

var update = flag.Bool("update", false, "write the fresh values of the documented figures into the docs")

// installsToolenv are the pages whose blocks install toolenv themselves,
// as a reader does: they run without the test's toolenv on PATH (and
// without any other). The other pages may assume it is installed.
var installsToolenv = map[string]bool{"README.md": true}

// maxIllustrative is how many sh blocks of README.md and docs/*.md may be
// shown without being run. Keep them rare: raise it only for a block that
// truly cannot run here, and say why beside it.
const maxIllustrative = 8

// TestDocs runs every sh block of README.md and docs/*.md as written
// (see the package documentation for the convention). Run one page with
// go test ./devtools/doctest -run 'TestDocs/pages/docs/eval.md'; set
// TOOLENV_DOCTEST_KEEP=1 to keep a failing page's folder.
func TestDocs(t *testing.T) {
	began := time.Now()
	root := moduleRoot(t)
	// The binaries build while the package's sequential tests run (before
	// besidePages lets this test go on), the pages are parsed and the
	// checkout copied; each page waits only for those it needs.
	data := shareddata.Require(t)
	startBins(root)
	besidePages(t)
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
	// the figures: defined by the page that runs their command, shown anywhere
	defs := map[string]FigureDef{}
	costs := map[string]int{} // page → pageCost
	byPage := map[string][]FigureDef{}
	var uses []FigureUse
	for _, name := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if blocks, err := Parse(name, src); err == nil {
			costs[name] = pageCost(blocks)
		}
		d, u, err := ParseFigures(name, src)
		if err != nil {
			t.Error(err)
		}
		for _, f := range d {
			if prev, ok := defs[f.ID]; ok {
				t.Errorf("%s:%d: figure %s is defined twice (first at %s:%d)", f.File, f.Line, f.ID, prev.File, prev.Line)
			}
			defs[f.ID] = f
			byPage[name] = append(byPage[name], f)
		}
		uses = append(uses, u...)
	}
	shown := map[string]bool{}
	for _, u := range uses {
		if _, ok := defs[u.ID]; !ok {
			t.Errorf("%s:%d: figure %s is shown but defined nowhere: define it in a figures block of the page that runs its command", u.File, u.Line, u.ID)
		}
		shown[u.ID] = true
	}
	for id, d := range defs {
		if !shown[id] {
			t.Errorf("%s:%d: figure %s is defined but shown nowhere", d.File, d.Line, id)
		}
	}
	netw := network(t)
	// One copy of the checkout for every page, each page's folder made of
	// hard links to it (NewCheckout), made while the binaries build.
	t0 := time.Now()
	checkout, err := NewCheckout(root, filepath.Join(t.TempDir(), "checkout"))
	if err != nil {
		t.Fatal(err)
	}
	copied := time.Since(t0)
	bin := bins.dir
	// One folder of indexed database images (rodb.DiskCache) for every
	// page of this run, as a reader who runs the pages one after another
	// on one machine has one in their cache folder: each BIRD database is
	// indexed once per run, not once per page. It starts empty, so every
	// run indexes what it uses at least once.
	images := "TOOLENV_IMAGE_CACHE=" + filepath.Join(t.TempDir(), "images")
	// One build cache (nl2api.BuildCache) likewise: the pages that run
	// the same toolenv build bird (the same toolenv, data and flags) make
	// it once per run and reuse it after, each reuse marked in its
	// report; identical builds started at once wait for the first. It
	// starts empty, so every run makes each distinct build once.
	builds := "TOOLENV_BUILD_CACHE=" + filepath.Join(t.TempDir(), "builds")
	var (
		mu                sync.Mutex
		run, illustrative int
		reports           []*Report
		values            = map[string]FigureValue{}
		unchecked         = map[string]string{} // figure → why
	)
	sched := newScheduler(pageSlots())
	pagesFrom := time.Now()
	t.Run("pages", func(t *testing.T) {
		for _, name := range files {
			t.Run(name, func(t *testing.T) {
				if netw.Private {
					if !explicitParallel {
						sched.join(name, costs[name])
					}
					t.Parallel()
					if !explicitParallel {
						defer sched.wait(name)()
					}
				}
				// the model for every page, toolenv for those that do not install it
				binary(t, "toolenv-docmodel")
				pageBin := bin
				if installsToolenv[name] {
					pageBin = "" // no toolenv on PATH
				} else {
					binary(t, "toolenv")
				}
				opts := Options{
					Root:     root,
					Checkout: checkout,
					Shared:   filepath.Dir(data),
					Bin:      pageBin,
					Model:    filepath.Join(bin, "toolenv-docmodel"),
					Network:  netw,
					Links:    []string{"testdata/npm/node_modules"},
					Env:      []string{images, builds},
					Keep:     os.Getenv("TOOLENV_DOCTEST_KEEP") != "",
					Logf:     t.Logf,
					After: func(dir string) error {
						var errs []string
						for _, d := range byPage[name] {
							v, err := d.Eval(dir)
							if err != nil {
								errs = append(errs, err.Error())
								continue
							}
							mu.Lock()
							values[d.ID] = v
							mu.Unlock()
						}
						if len(errs) > 0 {
							return fmt.Errorf("%s", strings.Join(errs, "\n"))
						}
						return nil
					},
				}
				ctx := context.Background()
				if dl, ok := t.Deadline(); ok {
					// stop the blocks with a message before go test's own
					// timeout stops everything with a panic
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, dl.Add(-30*time.Second))
					defer cancel()
				}
				rep, err := RunFile(ctx, opts, filepath.Join(root, filepath.FromSlash(name)), name)
				if rep != nil {
					mu.Lock()
					run += rep.Run
					illustrative += rep.Illustrative
					reports = append(reports, rep)
					mu.Unlock()
				}
				if err != nil {
					mu.Lock()
					for _, d := range byPage[name] {
						if _, ok := values[d.ID]; !ok {
							unchecked[d.ID] = name + " failed"
						}
					}
					mu.Unlock()
					if opts.Keep && rep != nil {
						t.Logf("the page's folder is kept: %s", rep.Dir)
					}
					t.Fatal(err)
				}
				t.Logf("%s: %d blocks run, %d illustrative", name, rep.Run, rep.Illustrative)
			})
		}
		sched.start() // every page selected by -run has joined
	})
	t.Logf("%d sh blocks run, %d illustrative", run, illustrative)
	// What the blocks cost, heaviest first (the CPU of each block's
	// foreground commands): where to look first to make the docs cheaper.
	t.Logf("the blocks' cost, heaviest first:\n%s", CostTable(reports, 15))
	setup := fmt.Sprintf("set-up: the checkout copied in %.1f s; %.1f s from the test's start to the pages' (the binaries build meanwhile; each page waits for those it needs)", copied.Seconds(), pagesFrom.Sub(began).Seconds())
	t.Logf("%s; the documents' runs:\n%s", setup, Timeline(reports, pagesFrom))
	if path := os.Getenv("TOOLENV_DOCTEST_COSTS"); path != "" {
		table := CostTable(reports, 0) + "\n" + setup + "\n\n" + Timeline(reports, pagesFrom)
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	checkFigures(t, root, files, uses, values, unchecked)
	if illustrative > maxIllustrative {
		t.Errorf("%d sh blocks are illustrative, more than the %d allowed: make them run, or raise maxIllustrative deliberately", illustrative, maxIllustrative)
	}
}

// checkFigures compares every shown figure with its fresh value, or with
// -update writes the fresh values into the docs.
func checkFigures(t *testing.T, root string, files []string, uses []FigureUse, values map[string]FigureValue, unchecked map[string]string) {
	t.Helper()
	checked := 0
	for _, u := range uses {
		v, ok := values[u.ID]
		if !ok {
			if why, ok := unchecked[u.ID]; ok {
				t.Logf("%s:%d: figure %s not checked: %s", u.File, u.Line, u.ID, why)
			}
			continue
		}
		checked++
		if *update {
			continue
		}
		if err := u.Check(v); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d documented figures checked against a fresh run", checked)
	if !*update {
		return
	}
	for _, name := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, n := UpdateFigures(src, values)
		if n == 0 {
			continue
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d figures updated", name, n)
	}
}
