package index

import (
	"strings"
	"testing"
	"time"
)

func TestTextWriters(t *testing.T) {
	var b strings.Builder
	r := &Report{Meta: Meta{Tools: 3, Collections: []string{"a", "b"}, VectorNote: "the embedder was down"}, Path: "map.db", Elapsed: 1500 * time.Millisecond}
	r.WriteMarkdown(&b, "mappings written to m.json")
	if out := b.String(); !strings.Contains(out, "- tools: 3 in 2 collection(s): a, b\n") || !strings.Contains(out, "- vectors: none — the embedder was down\n") ||
		!strings.Contains(out, "- mappings written to m.json\n- built in 1.5s\n") {
		t.Errorf("report:\n%s", out)
	}
	b.Reset()
	res := &Results{Mode: Lexical, Hits: []Hit{{Rank: 1, ID: "a/x", Score: 2.5, Alternatives: []Alternative{{ID: "b/x", Score: 0.91}, {ID: "b/y"}}}}}
	res.WriteTable(&b, 3)
	if out := b.String(); !strings.Contains(out, "1     2.5    a/x   b/x (0.91), b/y\n") || !strings.HasSuffix(out, "(lexical search over 3 tools)\n") {
		t.Errorf("table:\n%q", out)
	}
}
