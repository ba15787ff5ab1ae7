package openapi

import (
	"context"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestRoundTrip exports imported specs with Document and imports the
// export again: the tools must come back the same as a model and the
// server see them (name, title, description, group, input and output
// schemas, binding, deprecation). Examples and tag descriptions are not
// part of Document's output, so they are not compared.
func TestRoundTrip(t *testing.T) {
	for _, f := range []string{"petstore.yaml", "library.json", "split/main.yaml"} {
		t.Run(f, func(t *testing.T) {
			first := load(t, filepath.Join("testdata", f))
			base := first.Tools[0].Binding.BaseURL
			raw, err := toolenv.MarshalJSONNoHTML(Document(first, base))
			if err != nil {
				t.Fatal(err)
			}
			second, err := Read(context.Background(), raw, LoadOptions{Name: first.Name})
			if err != nil {
				t.Fatalf("the exported document does not import: %v\n%s", err, raw)
			}
			if len(second.Tools) != len(first.Tools) {
				t.Fatalf("%d tools came back, want %d", len(second.Tools), len(first.Tools))
			}
			if second.Policy != first.Policy {
				t.Errorf("policy %+v, want %+v", second.Policy, first.Policy)
			}
			for _, want := range first.Tools {
				got := second.Tool(want.Name)
				if got == nil {
					t.Errorf("%s did not come back", want.Name)
					continue
				}
				type surface struct {
					Title, Description, Group string
					Input, Output             *toolenv.Schema
					Method, Path, BaseURL     string
					In                        map[string]string
					Deprecated                *toolenv.Deprecation
				}
				view := func(t *toolenv.Tool) surface {
					return surface{t.Title, t.Description, t.Group, t.Input, t.Output,
						t.Binding.Method, t.Binding.Path, t.Binding.BaseURL, t.Binding.In, t.Deprecated}
				}
				if g, w := toolJSON(t, view(got)), toolJSON(t, view(want)); g != w {
					t.Errorf("%s changed in the round trip:\n got %s\nwant %s", want.Name, g, w)
				}
			}
		})
	}
}
