package toolbenchgen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Summary says what WriteTree wrote.
type Summary struct {
	Tools      int   `json:"tools"`
	APIs       int   `json:"apis"`
	Categories int   `json:"categories"`
	Bytes      int64 `json:"bytes"`
}

// WriteTree writes the set under dir in ToolBench's layout,
// dir/<Category>/<tool>.json, creating the folders it needs. It refuses a
// dir that already holds files, so that a set is never mixed with
// another. progress, if not nil, is called with the APIs written so far.
func WriteTree(ctx context.Context, dir string, opts Options, progress func(apis int)) (*Summary, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("toolbenchgen: %s is not empty; write a generated set into a new folder", dir)
	}
	sum := &Summary{}
	cats := map[string]bool{}
	for tf := range Tools(opts) {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		data, err := tf.Marshal()
		if err != nil {
			return sum, err
		}
		cdir := filepath.Join(dir, tf.Category)
		if !cats[tf.Category] {
			if err := os.MkdirAll(cdir, 0o755); err != nil {
				return sum, fmt.Errorf("toolbenchgen: %w", err)
			}
			cats[tf.Category] = true
		}
		if err := os.WriteFile(filepath.Join(cdir, tf.Name+".json"), data, 0o644); err != nil {
			return sum, fmt.Errorf("toolbenchgen: %w", err)
		}
		sum.Tools++
		sum.APIs += len(tf.Doc.APIList)
		sum.Bytes += int64(len(data))
		if progress != nil {
			progress(sum.APIs)
		}
	}
	sum.Categories = len(cats)
	return sum, nil
}
