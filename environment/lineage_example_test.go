package environment_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
)

// The lineage of a drifted collection, as the environment opened it: a
// caller that needs its base or its versions reads them here instead of
// replaying the drift again.
func ExampleEnvironment_Lineage() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-lineage-")
	defer os.RemoveAll(dir)
	c, _ := demo.Collection()
	d, _ := drift.Drift(drift.NewLineage(c), drift.Options{Seed: 1})
	v2 := filepath.Join(dir, "demo-v2")
	if err := drift.Write(v2, d, drift.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	env, err := environment.Open(ctx, &environment.Config{Store: ":memory:", Collections: []string{v2}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Close()
	l := env.Lineage("demo")
	fmt.Println(l.Base.Name, l.Manifest.BaseVersion, "→", l.Manifest.Version, len(l.Base.Tools) > 0)
	fmt.Println(env.Lineage("nothing-of-that-name") == nil)
	// Output:
	// demo v1 → v2 true
	// true
}
