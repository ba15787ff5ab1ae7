package cache

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// ImportConfig is an import as "toolenv cache import" takes it, besides
// its store. Its tags are the command's flags (internal/configfile binds
// them).
type ImportConfig struct {
	// ToolBench are the docs the cache belongs to: entries are matched to
	// their APIs and coerced as the server coerces calls.
	ToolBench  []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs the cache belongs to (as for serve); recommended"`
	Collection string   `json:"collection" flag:"collection" default:"toolbench" help:"collection name the entries belong to"`
	Overwrite  bool     `json:"overwrite" flag:"overwrite" help:"replace entries already in the store"`
}

// Options loads the docs and returns the import's options, with a
// progress bar on progress (nil: none).
func (c *ImportConfig) Options(progress io.Writer) (ImportOptions, error) {
	opts := ImportOptions{Collection: c.Collection, Overwrite: c.Overwrite, Progress: progress}
	if len(c.ToolBench) > 0 {
		col, _, err := toolbench.LoadCollection(toolbench.CollectionOptions{Name: c.Collection}, c.ToolBench...)
		if err != nil {
			return opts, err
		}
		opts.Docs = col
	}
	return opts, nil
}

// Run imports from into st: a StableToolBench cache folder (Import,
// with the docs loaded and a progress bar on progress, nil for none), or
// a FILE.jsonl toolenv cache export wrote (ImportJSONL: every entry as
// recorded, any tool, MCP recordings included).
func (c *ImportConfig) Run(ctx context.Context, st store.Store, from string, progress io.Writer) (*ImportReport, error) {
	if strings.HasSuffix(strings.ToLower(from), ".jsonl") {
		return ImportJSONL(ctx, st, from, c.Overwrite)
	}
	opts, err := c.Options(progress)
	if err != nil {
		return nil, err
	}
	return Import(ctx, st, from, opts)
}

// ExportConfig is an export as "toolenv cache export" takes it, besides
// its store and destination. Its tags are the command's flags.
type ExportConfig struct {
	Format     string   `json:"format" flag:"format" default:"jsonl" enum:"jsonl,stabletoolbench" help:"jsonl or stabletoolbench"`
	ToolBench  []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs (needed for --format stabletoolbench)"`
	Tool       string   `json:"tool" flag:"tool" help:"export only this tool ID"`
	Collection string   `json:"collection" flag:"collection" default:"toolbench" help:"with --format stabletoolbench: the collection name the entries were imported under"`
}

// Options returns the export's options: to the file or folder out, or
// to stdout when out is "".
func (c *ExportConfig) Options(out string, stdout io.Writer) ExportOptions {
	return ExportOptions{Format: c.Format, Out: out, Stdout: stdout, Docs: c.ToolBench, Collection: c.Collection, Tool: c.Tool}
}

// Summary says in one line what an export of this configuration into out
// wrote.
func (c *ExportConfig) Summary(r *ExportReport, out string) string {
	if c.Format == FormatStableToolBench {
		return fmt.Sprintf("exported %d entries into %d files under %s (%d entries of other tools skipped)", r.Entries, r.Files, out, r.Skipped)
	}
	return fmt.Sprintf("exported %d entries", r.Entries)
}
