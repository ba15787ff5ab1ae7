package nl2api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/nl2api"
)

// TestBuildNamesTheDataFolderMeant: a --data that is not a BIRD folder
// fails before anything is written, with a not_found error naming the
// folder meant: the one BIRD folder below it, the several to choose from,
// the folder of a dev.json given itself, the nearest sibling of a
// mistyped name.
func TestBuildNamesTheDataFolderMeant(t *testing.T) {
	dir := t.TempDir()
	bird := func(rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, "dev.json"), []byte("[]"), 0o644)
	}
	bird("one/data/bird")
	os.MkdirAll(filepath.Join(dir, "one", "data", "stabletoolbench"), 0o755)
	bird("two/bird")
	bird("two/spider-de")
	os.MkdirAll(filepath.Join(dir, "none", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "file.txt"), nil, 0o644)
	for _, tc := range []struct {
		data string
		want []string
	}{
		{"one", []string{"one has no dev.json", "did you mean --data " + filepath.Join(dir, "one/data/bird") + "?"}},
		{"one/data", []string{"did you mean --data " + filepath.Join(dir, "one/data/bird") + "?"}},
		{"two", []string{"it holds several", "--data " + filepath.Join(dir, "two/bird"), "--data " + filepath.Join(dir, "two/spider-de")}},
		{"two/bird/dev.json", []string{"is the questions file", "did you mean --data " + filepath.Join(dir, "two/bird") + "?"}},
		{"two/brid", []string{"no such folder", "did you mean --data " + filepath.Join(dir, "two/bird") + "?"}},
		{"two/zzzzzzzz", []string{"no such folder", "the BIRD folders beside it: " + filepath.Join(dir, "two/bird") + ", " + filepath.Join(dir, "two/spider-de")}},
		{"none", []string{"none has no dev.json", "a BIRD folder holds dev.json"}},
		{"file.txt", []string{"is a file, not a BIRD folder"}},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.data, "/", "-"))
		_, err := nl2api.Build(context.Background(), nl2api.Options{ImageCache: imageCache, Data: filepath.Join(dir, tc.data), Out: out})
		if toolenv.StatusOf(err) != toolenv.StatusNotFound {
			t.Errorf("--data %s: %v, want a not_found error", tc.data, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("--data %s: %q does not say %q", tc.data, err, w)
			}
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("--data %s: the build wrote %s before failing", tc.data, out)
		}
	}
}

// A configuration run as toolenv build bird runs it: given the folder
// above the BIRD folders, it says which to pass.
func ExampleConfig_Run() {
	data, _ := os.MkdirTemp("", "data-")
	defer os.RemoveAll(data)
	for _, db := range []string{"bird", "spider-de"} {
		os.MkdirAll(filepath.Join(data, db), 0o755)
		os.WriteFile(filepath.Join(data, db, "dev.json"), []byte("[]"), 0o644)
	}
	cfg := nl2api.DefaultConfig()
	cfg.Data, cfg.Out = data, filepath.Join(data, "out")
	_, err := cfg.Run(context.Background(), nil, nil, nil)
	fmt.Println(strings.ReplaceAll(err.Error(), data, "DATA"))
	// Output:
	// --data DATA has no dev.json, so it is not a BIRD folder (it holds several: pass one of --data DATA/bird, --data DATA/spider-de)
}
