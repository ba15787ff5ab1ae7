package doctest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
)

// Build builds toolenv and the loopback model (docmodel) from the
// checkout at root into dir, as `go build` does for a reader, with
// -trimpath, as the pages' own go commands build (see trimpath): the
// README's go build of toolenv then finds every package in the build
// cache. The two builds run at once (each is mostly its link, which go
// build runs on one core).
func Build(ctx context.Context, root, dir string) error {
	builds := []struct{ pkg, out string }{
		{"./cmd/toolenv", "toolenv"},
		{"./devtools/doctest/docmodel", "toolenv-docmodel"},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(dir, b.out), b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
