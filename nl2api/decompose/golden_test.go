package decompose_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/decompose"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current decomposition")

// golden is the decomposition of one dev.json question.
type golden struct {
	ID     int      `json:"question_id"`
	SQL    string   `json:"sql"`
	Reject string   `json:"reject,omitempty"`
	Init   any      `json:"init,omitempty"`
	Slot   any      `json:"slot,omitempty"`
	Sel    []string `json:"sel,omitempty"`
	Answer []string `json:"answer,omitempty"`
}

// TestGolden decomposes every dev.json question and compares with
// testdata/dev.golden.json (refresh with -update after a deliberate
// change, and review the diff).
func TestGolden(t *testing.T) {
	cats := catalogs(t)
	qs, err := bird.ReadQuestions(bird.Layout{Dir: shareddata.Require(t, "bird")}.Questions())
	if err != nil {
		t.Fatal(err)
	}
	var out []golden
	for _, q := range qs {
		g := golden{ID: q.ID, SQL: q.SQL}
		p, err := sqlplan.Build(q.SQL, cats[q.DB])
		if err == nil {
			var sp *decompose.Plan
			if sp, err = decompose.Slot(p, q.DB, nil); err == nil {
				g.Init, g.Slot, g.Answer = sp.Init, sp.Calls, sp.Answer
				if sel, err := decompose.Sel(sp); err == nil {
					for _, c := range sel.Calls {
						g.Sel = append(g.Sel, c.Name)
					}
				}
			}
		}
		if err != nil {
			g.Reject = err.Error()
		}
		out = append(out, g)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "dev.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		var w []golden
		json.Unmarshal(want, &w)
		for i := range out {
			if i >= len(w) {
				break
			}
			a, _ := json.Marshal(w[i])
			b, _ := json.Marshal(out[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("question %d decomposes differently:\n got %s\nwant %s\n(run with -update if the change is intended)", out[i].ID, b, a)
			}
		}
		t.Fatal("golden file differs (run with -update if the change is intended)")
	}
}
