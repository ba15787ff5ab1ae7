package toolenv_test

import (
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
)

// A folder of collections (the root of a build) is not one: reading it
// says which collections it holds.
func ExampleCollectionsIn() {
	root, _ := os.MkdirTemp("", "build")
	defer os.RemoveAll(root)
	for _, name := range []string{"rest", "slot"} {
		c := toolenv.NewCollection(name, "example", []*toolenv.Tool{{Name: "f", Input: toolenv.ObjectSchema()}})
		toolenv.WriteCollection(filepath.Join(root, name), c)
	}
	for _, dir := range toolenv.CollectionsIn(root) {
		fmt.Println(filepath.Base(dir))
	}
	_, err := toolenv.ReadCollection(root)
	fmt.Println(toolenv.StatusOf(err))
	// Output:
	// rest
	// slot
	// not_found
}
