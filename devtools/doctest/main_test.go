package doctest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The binaries the runs need (Binaries), built once per test process,
// all at once, from the first call of startBins; each file's channel is
// closed when it is built (or failed: errs).
var bins struct {
	once  sync.Once
	dir   string
	err   error // the folder could not be made
	built map[string]*built
}

// built is one binary's build: ready is closed when it ends, err says
// how it failed.
type built struct {
	ready chan struct{}
	err   error
}

func TestMain(m *testing.M) {
	flag.Parse()
	setParallel()
	code := m.Run()
	for _, b := range bins.built {
		<-b.ready // a build a failed test started and never waited for
	}
	if bins.dir != "" && os.Getenv("TOOLENV_DOCTEST_BIN") == "" {
		os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// moduleRoot is the checkout this package sits in.
func moduleRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// startBins starts building Binaries from the checkout at root, once per
// test process, and returns at once: binary waits for one of them,
// binDir for all.
func startBins(root string) {
	bins.once.Do(func() {
		bins.built = map[string]*built{}
		for _, b := range Binaries {
			bins.built[b.File] = &built{ready: make(chan struct{})}
		}
		if dir := os.Getenv("TOOLENV_DOCTEST_BIN"); dir != "" {
			// binaries built beforehand (doctest.Build), to iterate on a page
			bins.dir = dir
			for _, b := range bins.built {
				close(b.ready)
			}
			return
		}
		dir, err := os.MkdirTemp("", "doctest-bin-*")
		if err != nil {
			bins.err = err
			for _, b := range bins.built {
				close(b.ready)
			}
			return
		}
		bins.dir = dir
		for _, b := range Binaries {
			out := bins.built[b.File]
			go func() {
				out.err = BuildBinary(context.Background(), root, dir, b)
				close(out.ready)
			}()
		}
	})
}

// binary waits for the binary written as file (see Binaries) and returns
// the folder that holds the binaries.
func binary(t testing.TB, file string) string {
	t.Helper()
	startBins(moduleRoot(t))
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	b, ok := bins.built[file]
	if !ok {
		t.Fatalf("no binary %q is built (see Binaries)", file)
	}
	<-b.ready
	if b.err != nil {
		t.Fatal(b.err)
	}
	return bins.dir
}

// binDir waits for every binary the runs need and returns the folder
// that holds them.
func binDir(t testing.TB) string {
	t.Helper()
	for _, b := range Binaries {
		binary(t, b.File)
	}
	return bins.dir
}

// network is the network the runs use: private where possible, or as
// TOOLENV_DOCTEST_NETWORK (host, private) says.
func network(t testing.TB) *Network {
	t.Helper()
	n, err := DetectNetwork(os.Getenv("TOOLENV_DOCTEST_NETWORK"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
