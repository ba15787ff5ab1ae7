package virtual_test

import (
	"context"
	"encoding/json"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/toolbench"
)

// With no upstream and no LLM configured, the offline synthesizer answers
// in the documented shape, and says so.
func ExampleBackend_Invoke() {
	doc := toolbench.APIDoc{CategoryName: "Data", ToolName: "TheClique", APIName: "Songkick concert",
		RequiredParameters: []toolbench.ParamDoc{{Name: "id_conc", Type: "STRING"}},
		TemplateResponse:   json.RawMessage(`{"id_conc": "str", "fans": "int", "line_up": ["list of str with length 2"]}`)}
	c := toolbench.NewCollection([]toolbench.APIDoc{doc}, toolbench.CollectionOptions{})

	b := virtual.New(virtual.Config{})
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: c.Tools[0], Args: map[string]any{"id_conc": "40698227"}})
	fmt.Println(r.Status, r.Source, r.Meta["synth_rule"])
	fmt.Println(string(r.Body))
	// Output:
	// ok synthesizer template
	// {"id_conc":"40698227","fans":9,"line_up":["line up f987b4","line up 439803"]}
}
