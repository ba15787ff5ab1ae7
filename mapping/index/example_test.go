package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping/index"
)

// Index a collection, then search it: each hit comes with its rank and
// score. With the offline embedder the default search is lexical (BM25);
// with an embedding model it is hybrid (reciprocal rank fusion of BM25 and
// the vectors).
func Example() {
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "index-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "map.db")
	ctx := context.Background()
	if _, err := index.Build(ctx, path, c.Tools, index.BuildOptions{}); err != nil {
		panic(err)
	}
	ix, err := index.Open(ctx, path, index.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, "sort the rows of a table from the largest", 2, index.SearchOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Mode)
	for _, h := range res.Hits {
		fmt.Println(h.Rank, h.ID)
	}
	// Output:
	// lexical
	// 1 world/sort_data_descending
	// 2 world/sort_data
}
