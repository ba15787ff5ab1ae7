package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
)

// TestFolders: shards merge into one folder whose reports hold every
// episode, a folder's reports are written again from its episodes, and
// folders without episodes are invalid arguments naming the folder.
func TestFolders(t *testing.T) {
	dir := t.TempDir()
	eps := episodes()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for i, d := range []string{a, b} {
		os.MkdirAll(d, 0o755)
		var part []*eval.Episode
		for j, ep := range eps {
			if j%2 == i {
				part = append(part, ep)
			}
		}
		if err := eval.WriteJournal(filepath.Join(d, eval.JournalName(eval.Shard{})), part); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "all")
	_, s, n, err := Merge(out, []string{a, b})
	if err != nil || n != len(eps) || s == nil {
		t.Fatalf("merge: %v, %d of %d episodes", err, n, len(eps))
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Error(err)
	}
	if o := Overview(nil, s); !strings.HasPrefix(o, "## Overview") {
		t.Errorf("overview %q", o)
	}
	if e := Ending(out, nil, s); !strings.HasPrefix(e, Overview(nil, s)+"\n\nreports: "+filepath.Join(out, "summary.json")+", ") || !strings.HasSuffix(e, "report.html\n") {
		t.Errorf("ending %q", e)
	}
	os.Remove(filepath.Join(out, "summary.json"))
	if _, _, err := Rewrite(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Errorf("rewrite: %v", err)
	}
	evs, err := ReadEvaluations([]string{a, out})
	if err != nil || len(evs) != 2 || evs[1].Name != "all" || evs[1].Summary == nil {
		t.Errorf("evaluations: %v %+v", err, evs)
	}
	page := filepath.Join(dir, "compare.html")
	if err := CompareHTMLFile(page, evs); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "<html") || !strings.Contains(string(b), "all") {
		t.Errorf("compare page: %.200s", b)
	}
	if err := CompareHTMLFile(filepath.Join(dir, "missing", "compare.html"), evs); err == nil {
		t.Error("a page in a missing folder was written")
	}
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	if _, _, err := Rewrite(empty); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "empty holds no episodes") {
		t.Errorf("rewrite of an empty folder: %v", err)
	}
	if _, err := ReadEvaluations([]string{a, empty}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments {
		t.Errorf("compare with an empty folder: %v", err)
	}
}
