package cache

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// ImportReport is what Import found.
type ImportReport struct {
	Files      int            `json:"files"`
	Entries    int            `json:"entries"`
	Imported   int            `json:"imported"`
	Kept       int            `json:"kept_existing"`
	Unresolved map[string]int `json:"unresolved_apis,omitempty"`
	// Skipped counts the entries that could not be read (each is in
	// Problems with its key and the reason).
	Skipped int `json:"skipped_entries"`
	// NonFiniteAsNull counts the answers that held NaN, Infinity or
	// -Infinity (Python's json.dump writes them; JSON cannot hold them):
	// they were imported with those values as null.
	NonFiniteAsNull int                      `json:"nonfinite_as_null"`
	Problems        []toolbench.CacheProblem `json:"problems,omitempty"`
}

// ImportOptions configure Import.
type ImportOptions struct {
	// Docs, when set, are the ToolBench docs the cache belongs to: each
	// entry is resolved to its tool and its arguments go through the same
	// lenient validation the pipeline applies, so that its key is the key
	// a live call computes. Without them, tool IDs come from the path.
	Docs *toolenv.Collection
	// Collection names the collection the entries belong to (default
	// "toolbench").
	Collection string
	// Overwrite replaces entries already in the store.
	Overwrite bool
	// Progress shows progress; nil shows none.
	Progress io.Writer
	// Batch is how many entries go into the store in one transaction
	// (default 50,000). Each transaction is atomic: an import stopped
	// midway (killed, the machine down) leaves the batches committed
	// before it, and running it again keeps those and adds the rest.
	// Larger batches write fewer pages twice; each costs memory while it
	// waits for the writer (one may wait, one is written, one is read).
	Batch int
}

// importBatch is how many entries Import writes in one transaction by
// default: at 5,000 the writer rewrote many of a batch's pages in the
// next one (SQLite writes 28 % fewer pages at 50,000).
const importBatch = 50000

// Import reads the StableToolBench cache folder dir
// (<category>/<tool>_for_<category>/<api>.json) into st, keeping each
// entry's recorded key as its exact key.
func Import(ctx context.Context, st store.Store, dir string, opts ImportOptions) (*ImportReport, error) {
	coll, collection, overwrite := opts.Docs, cmp.Or(opts.Collection, "toolbench"), opts.Overwrite
	batchSize := opts.Batch
	if batchSize <= 0 {
		batchSize = importBatch
	}
	var ix *toolbench.Index
	if coll != nil {
		ix = toolbench.NewIndex(coll)
	}
	progressOut := opts.Progress
	if progressOut == nil {
		progressOut = io.Discard
	}
	// A store with a bulk mode (SQLite: checkpoints off the writer) is
	// in it for the import; ending it twice is harmless.
	endBulk := func() error { return nil }
	if bl, ok := st.(store.BulkLoader); ok {
		end, err := bl.BeginBulk(ctx)
		if err != nil {
			return nil, err
		}
		endBulk = end
		defer end()
	}
	rep := &ImportReport{Unresolved: map[string]int{}}
	var v validate.Validator
	bar := progress.New(progressOut, -1, "importing cache entries")
	defer bar.Finish()
	// Reading and parsing (this goroutine) and writing (the writer's)
	// overlap: batches go to the writer through a short queue.
	batches := make(chan []*store.Entry, 1)
	var (
		writeErr  error
		writeDone = make(chan struct{})
		failed    atomic.Bool
	)
	go func() {
		defer close(writeDone)
		for b := range batches {
			if writeErr != nil {
				continue // drain: the reader stops at its next entry
			}
			n, err := st.PutMany(ctx, b, overwrite)
			if err != nil {
				writeErr = err
				failed.Store(true)
				continue
			}
			rep.Imported += n
			rep.Kept += len(b) - n
			bar.Add(len(b))
		}
	}()
	errWriter := errors.New("the store refused a batch")
	var batch []*store.Entry
	flush := func() error {
		if failed.Load() {
			return errWriter
		}
		if len(batch) > 0 {
			batches <- batch
			batch = make([]*store.Entry, 0, batchSize)
		}
		return nil
	}
	finish := func() error {
		close(batches)
		<-writeDone
		return writeErr
	}
	// The entries of one file share their names, hence their tool: it is
	// resolved once per file.
	var (
		lastNames    [3]string
		lastTool     *toolenv.Tool
		lastResolved error
		lastID       string
	)
	files, problems, err := toolbench.ReadCache(dir, func(r *toolbench.CacheRecord) error {
		rep.Entries++
		if r.NonFinite {
			rep.NonFiniteAsNull++
		}
		if names := [3]string{r.Category, r.Tool, r.API}; names != lastNames || lastID == "" {
			lastNames, lastID = names, toolenv.ToolID(collection, r.FunctionName())
			if ix != nil {
				lastTool, lastResolved = ix.Resolve(r.Category, r.Tool, r.API)
			}
		}
		toolID := lastID
		args := r.Args
		if ix != nil {
			tool, err := lastTool, lastResolved
			if err != nil {
				rep.Unresolved[r.Category+"/"+r.Tool+"/"+r.API]++
			} else {
				toolID = tool.ID
				args = v.Args(tool.Input, args, coll.Policy.Validation != toolenv.ValidationStrict).Args
			}
		}
		canon, err := toolenv.Canonical(args)
		if err != nil {
			rep.Problems = append(rep.Problems, toolbench.CacheProblem{File: r.File, Key: r.Key, Err: err.Error()})
			return nil
		}
		status := toolenv.StatusOK
		if r.Error != "" {
			status = toolenv.StatusUpstreamError
		}
		batch = append(batch, &store.Entry{Tool: toolID, Args: string(canon), Exact: r.Key, Status: status, Body: r.Response, Error: r.Error, Origin: "import"})
		if len(batch) >= batchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if werr := finish(); werr != nil {
		return nil, werr
	}
	if err != nil {
		return nil, err
	}
	if err := endBulk(); err != nil {
		return nil, err
	}
	rep.Files = files
	rep.Problems = append(rep.Problems, problems...)
	for _, p := range rep.Problems {
		if p.Key != "" {
			rep.Skipped++
		}
	}
	if len(rep.Unresolved) == 0 {
		rep.Unresolved = nil
	}
	return rep, nil
}

// ExportJSONL writes the store's entries (those of tool only, when it is
// not "") to w as JSON lines, and returns how many it wrote.
func ExportJSONL(ctx context.Context, st store.Store, w io.Writer, tool string) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := st.Each(ctx, func(en *store.Entry) error {
		if tool != "" && en.Tool != tool {
			return nil
		}
		n++
		return enc.Encode(en)
	})
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// ExportReport is what Export or ExportStableToolBench wrote: the
// entries written, the files they went into and the entries of other
// tools skipped (the last two in StableToolBench's layout only).
type ExportReport struct {
	Entries, Files, Skipped int
}

// ExportStableToolBench writes the entries of the collection docs
// describes (those of tool only, when it is not "") into dir in
// StableToolBench's cache layout: each in the file its server reads for
// the names a client sends (toolbench.CachePath), under its exact key
// when it has one. Entries of other tools are skipped.
func ExportStableToolBench(ctx context.Context, st store.Store, dir string, docs *toolenv.Collection, tool string) (*ExportReport, error) {
	byID := map[string]*toolenv.Tool{}
	for _, t := range docs.Tools {
		byID[t.ID] = t
	}
	var recs []*toolbench.CacheRecord
	skipped := 0
	err := st.Each(ctx, func(en *store.Entry) error {
		t := byID[en.Tool]
		if t == nil || (tool != "" && en.Tool != tool) {
			skipped++
			return nil
		}
		var a map[string]any
		if err := toolenv.DecodeJSON([]byte(en.Args), &a); err != nil {
			return fmt.Errorf("export: entry %s %s: %w", en.Tool, en.Args, err)
		}
		recs = append(recs, &toolbench.CacheRecord{Category: t.Category, Tool: t.Meta["std_tool"], API: t.Meta["api_name"], Key: en.Exact, Args: a, Error: en.Error, Response: en.Body})
		return nil
	})
	if err != nil {
		return nil, err
	}
	files, err := toolbench.WriteCache(dir, recs)
	if err != nil {
		return nil, err
	}
	return &ExportReport{Entries: len(recs), Files: files, Skipped: skipped}, nil
}

// Export formats.
const (
	// FormatJSONL is one JSON line per entry (ExportJSONL).
	FormatJSONL = "jsonl"
	// FormatStableToolBench is StableToolBench's cache folder layout
	// (ExportStableToolBench).
	FormatStableToolBench = "stabletoolbench"
)

// ExportOptions say what Export writes and where.
type ExportOptions struct {
	// Format is FormatJSONL (empty means it) or FormatStableToolBench.
	Format string
	// Out is where to write: a file for FormatJSONL ("" or "-" means
	// Stdout), a folder for FormatStableToolBench (required).
	Out string
	// Stdout receives FormatJSONL when Out is "" or "-".
	Stdout io.Writer
	// Docs are the ToolBench documentation files or folders the entries
	// belong to (toolbench.Load); FormatStableToolBench needs them to name
	// each API's category, tool and file.
	Docs []string
	// Collection is the collection name the entries were imported under
	// (FormatStableToolBench; empty means "toolbench").
	Collection string
	// Tool, when not empty, exports only this tool ID's entries.
	Tool string
}

// Export writes st's entries as opts say: JSON lines to a file or
// Stdout, or StableToolBench's cache layout into a folder. The report's
// Entries is the number written (Files and Skipped only for
// FormatStableToolBench). A format it does not know, or
// FormatStableToolBench without Out or Docs, is an invalid_arguments
// error saying what to pass.
func Export(ctx context.Context, st store.Store, opts ExportOptions) (*ExportReport, error) {
	switch opts.Format {
	case "", FormatJSONL:
		w := opts.Stdout
		if opts.Out != "" && opts.Out != "-" {
			f, err := os.Create(opts.Out)
			if err != nil {
				return nil, fmt.Errorf("export: %w", err)
			}
			defer f.Close()
			w = f
		}
		if w == nil {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "export: give a file to write the JSON lines to")
		}
		n, err := ExportJSONL(ctx, st, w, opts.Tool)
		if err != nil {
			return nil, err
		}
		return &ExportReport{Entries: n}, nil
	case FormatStableToolBench:
		if opts.Out == "" {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--format stabletoolbench writes a folder: give it as OUT")
		}
		if len(opts.Docs) == 0 {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--format stabletoolbench needs --toolbench DOCS to name each API's category, tool and file")
		}
		col, _, err := toolbench.LoadCollection(toolbench.CollectionOptions{Name: opts.Collection}, opts.Docs...)
		if err != nil {
			return nil, err
		}
		return ExportStableToolBench(ctx, st, opts.Out, col, opts.Tool)
	}
	return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--format %q: want jsonl or stabletoolbench", opts.Format)
}
