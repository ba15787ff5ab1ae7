package doctest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Build builds toolenv and the loopback model (docmodel) from the
// checkout at root into dir, as `go build` does for a reader, with
// -trimpath, as the pages' own go commands build (see trimpath): the
// README's go build of toolenv then finds every package in the build
// cache.
func Build(ctx context.Context, root, dir string) error {
	for _, b := range []struct{ pkg, out string }{
		{"./cmd/toolenv", "toolenv"},
		{"./devtools/doctest/docmodel", "toolenv-docmodel"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	return nil
}
