package cache

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// maxJSONLLine bounds one line of a JSON-lines export.
const maxJSONLLine = 64 << 20

// ImportJSONL reads entries written by ExportJSONL (toolenv cache export:
// any tool, MCP recordings with their episode keys among them) from
// path into st. Every line is checked before anything is written: a line
// that is not an entry (no tool ID, arguments that are not a JSON object,
// a body that is not JSON) is an error naming the line, and the store is
// left as it was. Each entry's arguments are written canonically; its
// exact key is kept. Without overwrite, an entry whose key is taken keeps
// the stored answer (counted in Kept).
func ImportJSONL(ctx context.Context, st store.Store, path string, overwrite bool) (*ImportReport, error) {
	rep := &ImportReport{Files: 1}
	if err := eachJSONL(path, func(int, *store.Entry) error { rep.Entries++; return nil }); err != nil {
		return nil, err
	}
	var batch []*store.Entry
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := st.PutMany(ctx, batch, overwrite)
		if err != nil {
			return fmt.Errorf("cache import %s: %w", path, err)
		}
		rep.Imported += n
		rep.Kept += len(batch) - n
		batch = batch[:0]
		return nil
	}
	err := eachJSONL(path, func(_ int, e *store.Entry) error {
		batch = append(batch, e)
		if len(batch) == 10000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return rep, err
}

// eachJSONL calls fn with every entry of the file, checked.
func eachJSONL(path string, fn func(line int, e *store.Entry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cache import: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for line := 1; ; line++ {
		raw, err := readLine(br)
		if err == io.EOF && len(raw) == 0 {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("cache import %s:%d: %w", path, line, err)
		}
		if len(raw) == 0 {
			continue
		}
		e, perr := parseEntry(raw)
		if perr != nil {
			return fmt.Errorf("cache import %s:%d: %v (each line must be an entry as toolenv cache export writes it)", path, line, perr)
		}
		if err := fn(line, e); err != nil {
			return err
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		part, isPrefix, err := br.ReadLine()
		out = append(out, part...)
		if len(out) > maxJSONLLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxJSONLLine)
		}
		if err != nil || !isPrefix {
			return out, err
		}
	}
}

// parseEntry checks one exported entry.
func parseEntry(raw []byte) (*store.Entry, error) {
	var e store.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("not an entry: %v", err)
	}
	if _, _, ok := toolenv.SplitToolID(e.Tool); !ok {
		return nil, fmt.Errorf("tool %q is not a tool ID (collection/name)", e.Tool)
	}
	args, err := toolenv.ParseJSONObject([]byte(e.Args))
	if err != nil || args == nil {
		return nil, fmt.Errorf("args %.60q are not a JSON object", e.Args)
	}
	canon, err := toolenv.Canonical(args)
	if err != nil {
		return nil, err
	}
	e.Args = string(canon)
	if len(e.Body) > 0 && !json.Valid(e.Body) {
		return nil, fmt.Errorf("response is not JSON")
	}
	if e.Status == "" {
		e.Status = toolenv.StatusOK
	}
	if e.Origin == "" {
		e.Origin = "import"
	}
	return &e, nil
}
