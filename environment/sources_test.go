package environment

import (
	"context"
	"strings"
	"testing"
)

const (
	petstoreSpec = "../openapi/testdata/petstore.yaml"
	librarySpec  = "../openapi/testdata/library.json"
)

func TestLoadOpenAPINamed(t *testing.T) {
	ctx := context.Background()
	c, err := LoadOpenAPI(ctx, petstoreSpec)
	if err != nil || c.Name != "petstore" || len(c.Tools) != 8 {
		t.Fatalf("%v %v", c, err)
	}
	c, err = LoadOpenAPI(ctx, "books="+librarySpec)
	if err != nil || c.Name != "books" {
		t.Fatalf("NAME=FILE: %v %v", c, err)
	}
	if _, err := LoadOpenAPI(ctx, "missing.yaml"); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("err = %v", err)
	}
}
