package drift_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/drift"
)

// A drift asked twice is made once: the second writes the stored output
// into its own folder and says which entry it reused.
func ExampleRunCached() {
	dir, err := os.MkdirTemp("", "drift-cache-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cache := drift.CacheAt(filepath.Join(dir, "cache"), nil)
	for _, out := range []string{"v2", "v2-again"} {
		job := drift.Job{Source: drift.Source{Demo: true}, Out: filepath.Join(dir, out), Options: drift.Options{Seed: 7}}
		ran, err := drift.RunCached(context.Background(), job, cache)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: made %v, reused %v\n", out, ran.Drifted != nil, ran.Reused != nil)
	}
	// Output:
	// v2: made true, reused false
	// v2-again: made false, reused true
}
