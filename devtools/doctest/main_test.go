package doctest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The binaries the runs need, built once per test process on first use.
var bins struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	setParallel()
	code := m.Run()
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

// binDir builds toolenv and the loopback model from the checkout, once,
// and returns the folder that holds them.
func binDir(t testing.TB) string {
	t.Helper()
	root := moduleRoot(t)
	bins.once.Do(func() {
		if dir := os.Getenv("TOOLENV_DOCTEST_BIN"); dir != "" {
			// binaries built beforehand (doctest.Build), to iterate on a page
			bins.dir, bins.err = dir, nil
			return
		}
		dir, err := os.MkdirTemp("", "doctest-bin-*")
		if err != nil {
			bins.err = err
			return
		}
		bins.dir = dir
		bins.err = Build(context.Background(), root, dir)
	})
	if bins.err != nil {
		t.Fatal(bins.err)
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
