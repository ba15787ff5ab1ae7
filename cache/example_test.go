package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/store"
)

// An export of one store imported into another: what toolenv cache
// import FILE.jsonl does (a StableToolBench cache folder is imported the
// same way, by its path).
func ExampleImportConfig_Run() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-cache-")
	defer os.RemoveAll(dir)
	from, _ := store.Open(ctx, ":memory:", store.Options{})
	defer from.Close()
	from.Put(ctx, &store.Entry{Tool: "demo/get_book", Args: `{"isbn":"9780441172719"}`, Status: toolenv.StatusOK, Body: []byte(`{"title":"Dune"}`), Origin: "upstream"})
	export := filepath.Join(dir, "cache.jsonl")
	f, _ := os.Create(export)
	cache.ExportJSONL(ctx, from, f, "")
	f.Close()

	to, _ := store.Open(ctx, ":memory:", store.Options{})
	defer to.Close()
	cfg := cache.ImportConfig{}
	rep, err := cfg.Run(ctx, to, export, nil)
	fmt.Println(rep.Entries, rep.Imported, err)
	e, ok, _ := to.Get(ctx, "demo/get_book", `{"isbn":"9780441172719"}`)
	fmt.Println(ok, string(e.Body))
	// Output:
	// 1 1 <nil>
	// true {"title":"Dune"}
}
