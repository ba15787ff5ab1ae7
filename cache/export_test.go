package cache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/cache"
	"github.com/toolenv/toolenv/store"
)

// Export writes JSON lines to a file or the given writer, and refuses a
// format it does not know or a StableToolBench export without a folder
// or documentation, saying what to pass.
func TestExport(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, n := range []int{0, 1, 7} {
		if n > 0 {
			if _, err := cache.Import(ctx, st, writeCache(t, n), cache.ImportOptions{Overwrite: true}); err != nil {
				t.Fatal(err)
			}
		}
		stats, _ := st.Stats(ctx)
		entries := int(stats.Entries)
		var buf bytes.Buffer
		rep, err := cache.Export(ctx, st, cache.ExportOptions{Stdout: &buf})
		if err != nil || rep.Entries != entries || strings.Count(buf.String(), "\n") != entries {
			t.Fatalf("%d entries to stdout: %+v %v, %d lines", entries, rep, err, strings.Count(buf.String(), "\n"))
		}
		file := filepath.Join(t.TempDir(), "c.jsonl")
		rep, err = cache.Export(ctx, st, cache.ExportOptions{Format: cache.FormatJSONL, Out: file, Tool: "toolbench/list_for_items"})
		data, _ := os.ReadFile(file)
		if err != nil || rep.Entries != entries || !bytes.Equal(data, buf.Bytes()) {
			t.Fatalf("to a file: %+v %v; the file differs from stdout", rep, err)
		}
		rep, err = cache.Export(ctx, st, cache.ExportOptions{Stdout: &buf, Tool: "no/such_tool"})
		if err != nil || rep.Entries != 0 {
			t.Fatalf("another tool: %+v %v", rep, err)
		}
	}
	bad := []struct {
		opts cache.ExportOptions
		want string
	}{
		{cache.ExportOptions{Format: "csv", Stdout: os.Stdout}, `--format "csv": want jsonl or stabletoolbench`},
		{cache.ExportOptions{Format: cache.FormatStableToolBench, Docs: []string{"x"}}, "writes a folder"},
		{cache.ExportOptions{Format: cache.FormatStableToolBench, Out: t.TempDir()}, "needs --toolbench DOCS"},
		{cache.ExportOptions{}, "give a file"},
	}
	for _, b := range bad {
		_, err := cache.Export(ctx, st, b.opts)
		if err == nil || toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v; want invalid_arguments saying %q", b.opts, err, b.want)
		}
	}
}
