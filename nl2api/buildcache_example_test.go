package nl2api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// A second build with the same program, data and options writes the
// stored output instead of verifying every question again, and says so.
func ExampleBuildCache() {
	dir, err := os.MkdirTemp("", "toolenv-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "bird")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 1, Databases: 1}); err != nil {
		fmt.Println(err)
		return
	}
	cache := &nl2api.BuildCache{Dir: filepath.Join(dir, "builds")}
	for _, out := range []string{"first", "second"} {
		rep, err := nl2api.Build(context.Background(), nl2api.Options{
			Data: data, Out: filepath.Join(dir, out), Flavors: []string{nl2api.Slot}, BuildCache: cache})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: reused %v, %d slot tasks\n", out, rep.Reused != nil, rep.Flavor(nl2api.Slot).Kept)
	}
	// Output:
	// first: reused false, 45 slot tasks
	// second: reused true, 45 slot tasks
}
