package toolenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCollectionNamesTheCollectionsInsideAFolder generates folders
// holding collections, files and empty folders in random arrangements and
// checks that reading one that is not a collection says which
// collections it holds (all of them, and nothing else), or what a
// collection folder is when it holds none.
func TestReadCollectionNamesTheCollectionsInsideAFolder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tool := &Tool{Name: "f", Input: ObjectSchema()}
	for i := range 40 {
		root := filepath.Join(t.TempDir(), fmt.Sprintf("root%d", i))
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		var want []string
		for j := range rng.IntN(5) {
			name := fmt.Sprintf("flavor-%d", j)
			sub := filepath.Join(root, name)
			switch rng.IntN(4) {
			case 0, 1: // a collection
				if err := WriteCollection(sub, NewCollection(name, "test", []*Tool{{Name: tool.Name, Input: tool.Input}})); err != nil {
					t.Fatal(err)
				}
				want = append(want, sub)
			case 2: // an empty folder
				os.MkdirAll(sub, 0o755)
			case 3: // a file of that name, and a folder whose collection.json is a folder
				os.WriteFile(sub, []byte("x"), 0o644)
				os.MkdirAll(filepath.Join(root, name+"-odd", CollectionFile), 0o755)
			}
		}
		if got := CollectionsIn(root); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("CollectionsIn = %v, want %v", got, want)
		}
		_, err := ReadCollection(root)
		if err == nil {
			t.Fatal("read a folder with no collection.json")
		}
		if StatusOf(err) != StatusNotFound {
			t.Errorf("status %s: %v", StatusOf(err), err)
		}
		msg := err.Error()
		if len(want) > 0 {
			if !strings.Contains(msg, "name one of them: "+strings.Join(want, ", ")) || !strings.Contains(msg, fmt.Sprintf("a folder of %d collections", len(want))) {
				t.Errorf("error %q does not name %v", msg, want)
			}
		} else if !strings.Contains(msg, "a collection folder holds collection.json") {
			t.Errorf("error %q does not say what a collection folder is", msg)
		}
	}
	if _, err := ReadCollection(filepath.Join(t.TempDir(), "missing")); StatusOf(err) != StatusNotFound || !strings.Contains(err.Error(), "give the folder of a collection") {
		t.Errorf("missing folder: %v", err)
	}
}
