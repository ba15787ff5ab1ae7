package nl2api

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteText writes the report as toolenv build bird prints it: the
// summary table, the parser's counts, the databases that failed, the
// variants written, the cache entry a reused build came from and where
// the report files are (out is the build's output folder).
func (r *Report) WriteText(w io.Writer, out string) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	rows := r.Summary()
	t.Header(cells(rows[0])...)
	for _, row := range rows[1:] {
		if err := t.Append(cells(row)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	p := r.Parser
	fmt.Fprintf(w, "parser: %d/%d BIRD queries parsed, %d planned, %d SLOT-decomposable (dev + corpus)\n", p.Parsed, p.Queries, p.Planned, p.SlotDecomposed)
	for _, d := range r.Databases {
		if d.Error != "" {
			fmt.Fprintf(w, "database %s FAILED: %s\n", d.Name, d.Error)
		}
	}
	for _, v := range r.Variants {
		fmt.Fprintf(w, "variant %s: %d tools, %d tasks (%d verified) in %s\n", v.Name, v.Tools, v.Tasks, v.Verified, v.Dir)
	}
	if line := r.ReusedLine(); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "report: %s, %s (%.1f s)\n", filepath.Join(out, "report.md"), filepath.Join(out, "report.json"), r.Seconds)
	return nil
}

func cells(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
