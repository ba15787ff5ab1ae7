//go:build !unix

package nl2api

import "context"

// lockBuild does not lock where flock is missing: identical builds
// started at once each make the output (and store the same entry).
func lockBuild(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, ctx.Err()
}
