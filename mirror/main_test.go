package mirror_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// TestMain runs the child process of TestResumeAfterKill when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("MIRROR_TEST_CHILD") == "collect" {
		os.Exit(childCollect())
	}
	os.Exit(m.Run())
}

// childCollect collects the dataset in $MIRROR_TEST_STORE from the API at
// $MIRROR_TEST_API until it is killed.
func childCollect() int {
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, os.Getenv("MIRROR_TEST_STORE"), store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c := weatherTools(os.Getenv("MIRROR_TEST_API"), "slow", "forecast")
	e := engine(&testing.T{}, st, c, 1<<20)
	if _, err := e.Collect(ctx, mirror.CollectOptions{Workers: 4, Batch: 8}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
