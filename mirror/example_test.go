package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

// An Engine mirrors the tools it is given through any toolenv.Handler:
// here a stand-in API that answers a call with a city and refuses one
// without.
func ExampleEngine() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "mirror-example")
	defer os.RemoveAll(dir)
	st, err := sqlstore.Open(ctx, filepath.Join(dir, "mirror.db"), store.Options{})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string", Examples: []any{"Paris", "Lyon", "Oslo"}})
	in.Required = []string{"city"}
	tool := &toolenv.Tool{ID: "weather/forecast", Collection: "weather", Name: "forecast", Input: in}
	api := toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		city, ok := call.Args["city"].(string)
		if !ok {
			return &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: "missing required parameter: city", Source: toolenv.SourceUpstream}
		}
		body, _ := json.Marshal(map[string]any{"city": city, "summary": "sunny"})
		return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceUpstream}
	})
	e := &mirror.Engine{Store: st, Dataset: "example", Tools: []*toolenv.Tool{tool}, Invoker: api}
	gen, _ := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 3, Invalid: 1, Seed: 1})
	col, _ := e.Collect(ctx, mirror.CollectOptions{})
	fil, _ := e.Filter(ctx, mirror.FilterOptions{})
	fmt.Println("requests:", gen.Total)
	fmt.Println("answered:", col.Called, "of which ok:", col.OK)
	fmt.Println("kept:", fil.Kept, "of which refusals:", fil.KeptFailures)
	// Output:
	// requests: 4
	// answered: 4 of which ok: 3
	// kept: 4 of which refusals: 1
}

// ParseCall reads a call written with the paper's Calls Writing prompt,
// in whatever form the model wrote it.
func ExampleParseCall() {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	tool := &toolenv.Tool{ID: "weather/forecast", Name: "forecast", Title: "Forecast", Input: in}
	args, err := mirror.ParseCall(tool, "Here it is:\n```json\n{‘‘category’’:‘‘Weather’’, ‘‘api_name’’:‘‘Forecast’’, ‘‘tool_input’’:‘{\"city\": \"Paris\"}’, ‘‘strip’’:‘‘filter’’}\n```")
	fmt.Println(args, err)
	// Output:
	// map[city:Paris] <nil>
}

// What each stage does, in the order a run runs them.
func ExampleStageSummary() {
	for _, st := range mirror.Stages[:3] {
		fmt.Printf("%s: %s\n", st, mirror.StageSummary(st))
	}
	// Output:
	// generate: Write requests for every API (the model's two stages, or the schema-driven sampler)
	// collect: Call the real API for every request that has no answer yet
	// filter: Keep the answers Appendix D's rules and the documentation check accept
}
