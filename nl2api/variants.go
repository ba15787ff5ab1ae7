package nl2api

import (
	"context"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// writeVariants writes the obfuscated and shrunk variants asked for.
func writeVariants(ctx context.Context, built []*Built, shared map[string]*rodb.DB, opt *Options) ([]VariantReport, error) {
	return nil, nil
}
