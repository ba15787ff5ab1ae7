package cache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

func TestImportReportText(t *testing.T) {
	r := &ImportReport{Files: 2, Entries: 14, Imported: 10, Kept: 1, Skipped: 12, NonFiniteAsNull: 1, Unresolved: map[string]int{"x": 1, "y": 3}}
	for i := 0; i < 12; i++ {
		r.Problems = append(r.Problems, toolbench.CacheProblem{File: "f.json", Key: strings.Repeat("k", 70), Err: fmt.Sprint("bad ", i)})
	}
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	for _, w := range []string{"read 2 files, 14 entries: 10 imported, 1 already cached", "12 problems", "NaN or Infinity", "2 APIs are not in the --toolbench docs",
		"         3  y\n         1  x\n", "  f.json " + strings.Repeat("k", 57) + "…: bad 0", "… 2 more (use --json for all)"} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "bad 10") {
		t.Errorf("more than ten problems:\n%s", out)
	}
	b.Reset()
	WriteStats(&b, &store.Stats{Path: "s.db", Entries: 3, Tools: 2, ByOrigin: map[string]int{"": 1, "upstream": 2}, TopTools: []store.ToolCount{{Tool: "t", Entries: 2}}})
	if out := b.String(); !strings.Contains(out, "entries:  3 over 2 tools") || !strings.Contains(out, "         1  (none)") || !strings.Contains(out, "most cached tools:\n         2  t\n") {
		t.Errorf("stats:\n%s", out)
	}
}
