package doctest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
)

// Binary is a program the runs need: the package Build builds and the
// name of the file it writes.
type Binary struct {
	// Package is the package path from the module's root (./cmd/toolenv).
	Package string
	// File is the name of the file written into the binaries' folder.
	File string
}

// Binaries are what Build makes: toolenv and the loopback model
// (docmodel).
var Binaries = []Binary{
	{"./cmd/toolenv", "toolenv"},
	{"./devtools/doctest/docmodel", "toolenv-docmodel"},
}

// Build builds Binaries from the checkout at root into dir, at once (each
// build is mostly its link, which go build runs on one core).
func Build(ctx context.Context, root, dir string) error {
	errs := make([]error, len(Binaries))
	var wg sync.WaitGroup
	for i, b := range Binaries {
		wg.Go(func() { errs[i] = BuildBinary(ctx, root, dir, b) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BuildBinary builds one binary from the checkout at root into dir, as
// `go build` does for a reader, with -trimpath, as the pages' own go
// commands build (see trimpath): the README's go build of toolenv then
// finds every package in the build cache. It links without DWARF
// (-ldflags=-w): the runs never debug the binary, and the link, the one
// step the build cache does not keep, costs a third less CPU.
func BuildBinary(ctx context.Context, root, dir string, b Binary) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-w", "-o", filepath.Join(dir, b.File), b.Package)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", b.Package, err, out)
	}
	return nil
}
