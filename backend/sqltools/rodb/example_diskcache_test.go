package rodb_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// A database opened twice with one image cache is indexed once: the
// second open, in this process or any other, reads the image.
func ExampleDiskCache() {
	dir, _ := os.MkdirTemp("", "rodb-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shop.sqlite")
	w, _ := sql.Open("sqlite", path)
	w.Exec(`CREATE TABLE product (name TEXT, price REAL); INSERT INTO product VALUES ('kettle', 25.5)`)
	w.Close()

	cache := rodb.CacheAt(filepath.Join(dir, "images"), nil) // rodb.CacheAt(rodb.DefaultCacheDir(), logger) in a program
	for range 2 {
		db, err := rodb.Open(context.Background(), "shop", path, rodb.Options{Cache: cache})
		if err != nil {
			fmt.Println(err)
			return
		}
		price, _ := db.QueryValue(context.Background(), `SELECT price FROM product WHERE name = ?`, []any{"kettle"})
		db.Close()
		images, _ := filepath.Glob(filepath.Join(dir, "images", "*.img"))
		fmt.Println(price, len(images), "image")
	}
	// Output:
	// 25.5 1 image
	// 25.5 1 image
}
