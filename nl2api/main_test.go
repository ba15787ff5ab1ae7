package nl2api_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/nl2api"
)

// imageCache is the run's own image cache (docs/nl2sql.md): the builds
// and the servers of the tests index each database once per run, not
// once per build and collection, and nothing is read from or left in
// the user's cache folder.
var imageCache *rodb.DiskCache

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolenv-images-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(rodb.CacheEnv, dir) // nl2apitest.Serve's servers
	// Builds run as the command runs them (Config.Run) keep nothing in
	// the user's cache folder.
	builds, err := os.MkdirTemp("", "toolenv-builds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(nl2api.BuildCacheEnv, builds)
	imageCache = &rodb.DiskCache{Dir: dir}
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(builds)
	if birdBuilt.out != "" {
		os.RemoveAll(birdBuilt.out)
	}
	os.Exit(code)
}
