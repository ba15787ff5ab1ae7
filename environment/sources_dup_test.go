package environment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
)

// writeDemoFolder writes the demo collection into dir under name.
func writeDemoFolder(t *testing.T, dir, name string) string {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	c = toolenv.NewCollection(name, c.Kind, c.Tools)
	c.Backend = toolenv.BackendSpec{Type: "virtual"}
	if err := toolenv.WriteCollection(dir, c); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSameFolderTwiceLoadsOnce checks that a collection folder named more
// than once, by any spelling of its path, is one collection, and that two
// folders that take one name fail with a message naming both and a hint
// that fits the sources involved.
func TestSameFolderTwiceLoadsOnce(t *testing.T) {
	tmp := t.TempDir()
	a := writeDemoFolder(t, filepath.Join(tmp, "a", "slot"), "slot")
	b := writeDemoFolder(t, filepath.Join(tmp, "b", "slot"), "slot")
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(filepath.Join(tmp, "a"), link); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, a)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cfg     Config
		loaded  []string
		wantErr []string // substrings of the error, nil: no error
	}{
		{name: "same path twice", cfg: Config{Collections: []string{a, a}}, loaded: []string{"slot"}},
		{name: "trailing slash and dot", cfg: Config{Collections: []string{a, a + "/", filepath.Join(a, ".")}}, loaded: []string{"slot"}},
		{name: "relative and absolute", cfg: Config{Collections: []string{rel, a}}, loaded: []string{"slot"}},
		{name: "through a symbolic link", cfg: Config{Collections: []string{a, filepath.Join(link, "slot")}}, loaded: []string{"slot"}},
		{name: "two folders, one name", cfg: Config{Collections: []string{a, b}},
			wantErr: []string{`two collections are named "slot"`, "the collection folder " + a, "the collection folder " + b, `change "name" in ` + filepath.Join(b, "collection.json")}},
		{name: "a folder named as the demo", cfg: Config{Demo: true, Collections: []string{writeDemoFolder(t, filepath.Join(tmp, "c"), "demo")}},
			wantErr: []string{`two collections are named "demo"`, "the embedded demo collection", `change "name" in ` + filepath.Join(tmp, "c", "collection.json")}},
		{name: "an OpenAPI document named as a folder", cfg: Config{OpenAPI: []string{"slot=" + petstoreSpec}, Collections: []string{a}},
			wantErr: []string{`two collections are named "slot"`, "the OpenAPI document slot=" + petstoreSpec, `change "name" in`}},
		{name: "two OpenAPI documents, one name", cfg: Config{OpenAPI: []string{"x=" + petstoreSpec, "x=" + librarySpec}},
			wantErr: []string{`two collections are named "x"`, "NAME=FILE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			env, err := Open(ctx, &cfg)
			if tc.wantErr != nil {
				if err == nil {
					env.Close()
					t.Fatal("no error")
				}
				if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments {
					t.Errorf("status %s", toolenv.StatusOf(err))
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "Replace") {
					t.Errorf("error %q gives the Go API's hint to a user", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			var names []string
			for _, c := range env.Collections() {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.loaded, ",") {
				t.Errorf("loaded %v, want %v", names, tc.loaded)
			}
		})
	}
}
