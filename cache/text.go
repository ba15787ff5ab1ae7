package cache

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/store"
)

// WriteText writes the report as toolenv cache import prints it: the
// counts, the APIs not in the docs and the first ten problems.
func (r *ImportReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "read %d files, %d entries: %d imported, %d already cached (kept; --overwrite replaces them), %d entries skipped, %d problems\n",
		r.Files, r.Entries, r.Imported, r.Kept, r.Skipped, len(r.Problems))
	if r.NonFiniteAsNull > 0 {
		fmt.Fprintf(w, "%d answers held NaN or Infinity (Python's json.dump writes them, JSON cannot hold them): imported with those values as null\n", r.NonFiniteAsNull)
	}
	if len(r.Unresolved) > 0 {
		fmt.Fprintf(w, "%d APIs are not in the --toolbench docs; their entries were keyed by path:\n", len(r.Unresolved))
		writeTop(w, r.Unresolved, 10)
	}
	for i, p := range r.Problems {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more (use --json for all)\n", len(r.Problems)-10)
			break
		}
		fmt.Fprintf(w, "  %s %s: %s\n", p.File, trimKey(p.Key), p.Err)
	}
}

func trimKey(k string) string {
	if len(k) > 60 {
		return k[:57] + "…"
	}
	return k
}

// WriteStats writes a store's cache statistics as toolenv cache stats
// prints them.
func WriteStats(w io.Writer, s *store.Stats) {
	fmt.Fprintf(w, "store:    %s (%.1f MiB)\nentries:  %d over %d tools\nrecords:  %d LLM exchanges\n", s.Path, float64(s.Bytes)/(1<<20), s.Entries, s.Tools, s.Records)
	fmt.Fprintln(w, "by origin:")
	writeTop(w, s.ByOrigin, 0)
	fmt.Fprintln(w, "by status:")
	writeTop(w, s.ByStatus, 0)
	if len(s.TopTools) > 0 {
		fmt.Fprintln(w, "most cached tools:")
		for _, tc := range s.TopTools {
			fmt.Fprintf(w, "  %8d  %s\n", tc.Entries, tc.Tool)
		}
	}
}

// writeTop writes counts largest first (then by name), at most max of
// them (0: all).
func writeTop(w io.Writer, m map[string]int, max int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for i, k := range keys {
		if max > 0 && i == max {
			fmt.Fprintf(w, "  … %d more\n", len(keys)-max)
			break
		}
		label := strings.TrimSpace(k)
		if label == "" {
			label = "(none)"
		}
		fmt.Fprintf(w, "  %8d  %s\n", m[k], label)
	}
}
