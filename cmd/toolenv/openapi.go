package main

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
)

// loadOpenAPI reads an OpenAPI document into a collection.
func loadOpenAPI(ctx context.Context, path string) (*toolenv.Collection, error) {
	return nil, fmt.Errorf("--openapi %s: OpenAPI import is not built yet", path)
}
