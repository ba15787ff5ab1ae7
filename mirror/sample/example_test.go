package sample_test

import (
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror/sample"
)

func ExampleSample() {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string", Examples: []any{"Paris"}})
	in.SetProp("units", &toolenv.Schema{Type: "string", Enum: []any{"metric", "imperial"}})
	in.Required = []string{"city"}
	tool := &toolenv.Tool{ID: "weather/forecast", Name: "forecast", Input: in}
	for _, c := range sample.Sample(tool, sample.Options{N: 3, Invalid: 2, Seed: 1}) {
		fmt.Println(c.Kind, c.Canonical)
	}
	// Output:
	// documented {"city":"Paris"}
	// documented {"city":"Paris","units":"metric"}
	// documented {"city":"Paris","units":"imperial"}
	// invalid:missing_required {}
	// invalid:wrong_type {"city":["a","list"]}
}
