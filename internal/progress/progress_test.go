package progress

import (
	"bytes"
	"strings"
	"testing"
)

func TestPlainLinesWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 3, "import")
	b.Add(1) // first line prints at once
	b.Add(1) // throttled
	b.Add(1) // the last always prints
	b.Finish()
	got := buf.String()
	if !strings.HasPrefix(got, "import: 1/3 (33%)\n") || !strings.HasSuffix(got, "import: 3/3 (100%)\n") || strings.Count(got, "\n") != 2 {
		t.Fatalf("output = %q", got)
	}
	var unk bytes.Buffer
	u := New(&unk, -1, "scan")
	u.Add(5)
	u.Finish()
	if unk.String() != "scan: 5\nscan: 5\n" {
		t.Fatalf("unknown total = %q", unk.String())
	}
}
