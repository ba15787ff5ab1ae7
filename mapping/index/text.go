package index

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteMarkdown writes the build report as toolenv map index prints it;
// more are further lines of the list (what was built beside the index),
// written before the build time.
func (r *Report) WriteMarkdown(w io.Writer, more ...string) {
	fmt.Fprintf(w, "# Tool index\n\n")
	fmt.Fprintf(w, "- file: %s\n- tools: %d in %d collection(s): %s\n", r.Path, r.Tools, len(r.Collections), strings.Join(r.Collections, ", "))
	if r.Embedder != "" {
		fmt.Fprintf(w, "- vectors: %s, %d dimensions (exact cosine search, chromem-go), embedded in %s\n", r.Embedder, r.Dims, r.EmbedElapsed.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "- vectors: none — %s\n", r.VectorNote)
	}
	fmt.Fprintf(w, "- lexical: SQLite FTS5 BM25 over name, title, description, parameters, outputs, API and canonical words\n")
	for _, m := range more {
		fmt.Fprintf(w, "- %s\n", m)
	}
	fmt.Fprintf(w, "- built in %s\n", r.Elapsed.Round(time.Millisecond))
}

// WriteTable writes the hits as a table (rank, score, tool and its
// alternatives) and a line naming the search mode over an index of
// tools tools.
func (r *Results) WriteTable(w io.Writer, tools int) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "RANK\tSCORE\tTOOL\tALTERNATIVES\n")
	for _, h := range r.Hits {
		var alts []string
		for _, a := range h.Alternatives {
			if a.Score > 0 {
				alts = append(alts, fmt.Sprintf("%s (%.2f)", a.ID, a.Score))
			} else {
				alts = append(alts, a.ID)
			}
		}
		fmt.Fprintf(tw, "%d\t%.4g\t%s\t%s\n", h.Rank, h.Score, h.ID, strings.Join(alts, ", "))
	}
	tw.Flush()
	fmt.Fprintf(w, "(%s search over %d tools)\n", r.Mode, tools)
}
