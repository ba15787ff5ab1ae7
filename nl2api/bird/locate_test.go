package bird_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolenv/toolenv/nl2api/bird"
)

func TestCandidates(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string, file bool) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if file {
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("[]"), 0o644)
			return
		}
		os.MkdirAll(p, 0o755)
	}
	mk("data/bird/dev.json", true)
	mk("data/bird/inner/dev.json", true)                                                 // below a BIRD folder: not listed
	mk("data/spider-de/dev.json", true)                                                  //
	mk("data/stabletoolbench/x", false)                                                  // no dev.json
	mk("data/odd/dev.json/keep", false)                                                  // a folder named dev.json is no question file
	mk("data/deep/a/b/dev.json", true)                                                   // three levels below data
	mk("data/notes.txt", true)                                                           // a file
	os.Symlink(filepath.Join(dir, "data", "bird"), filepath.Join(dir, "data", "linked")) // followed
	for _, tc := range []struct {
		dir   string
		depth int
		want  []string
	}{
		{"data", 1, []string{"data/bird", "data/linked", "data/spider-de"}},
		{"data", 3, []string{"data/bird", "data/deep/a/b", "data/linked", "data/spider-de"}},
		{"", 2, []string{"data/bird", "data/linked", "data/spider-de"}},
		{"data/bird", 2, []string{"data/bird/inner"}},
		{"data/stabletoolbench", 2, nil},
		{"missing", 2, nil},
		{"data", 0, nil},
	} {
		got := bird.Candidates(filepath.Join(dir, tc.dir), tc.depth)
		var rel []string
		for _, g := range got {
			r, _ := filepath.Rel(dir, g)
			rel = append(rel, filepath.ToSlash(r))
		}
		if !slices.Equal(rel, tc.want) {
			t.Errorf("Candidates(%s, %d) = %v, want %v", tc.dir, tc.depth, rel, tc.want)
		}
	}
}

// A folder above BIRD folders lists them: the one meant, or the ones to
// choose from.
func ExampleCandidates() {
	dir, _ := os.MkdirTemp("", "data-")
	defer os.RemoveAll(dir)
	for _, db := range []string{"bird", "spider-de"} {
		os.MkdirAll(filepath.Join(dir, db), 0o755)
		os.WriteFile(filepath.Join(dir, db, bird.QuestionsFile), []byte("[]"), 0o644)
	}
	for _, c := range bird.Candidates(dir, 2) {
		fmt.Println(filepath.Base(c))
	}
	// Output:
	// bird
	// spider-de
}
