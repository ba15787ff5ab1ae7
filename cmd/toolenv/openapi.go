package main

import (
	"context"
	"os"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openapi"
)

// loadOpenAPI reads an OpenAPI 3.0/3.1 document (JSON or YAML) into a
// collection (see openapi.Load). "NAME=FILE" names the collection;
// otherwise it is named after the file, or the document's title when the
// file name is generic (openapi.yaml).
func loadOpenAPI(ctx context.Context, path string) (*toolenv.Collection, error) {
	var opts openapi.LoadOptions
	if name, file, ok := strings.Cut(path, "="); ok && name != "" && !exists(path) {
		opts.Name, path = name, file
	}
	c, err := openapi.Load(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
