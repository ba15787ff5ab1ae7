package simulate_test

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// A simulator in front of an OpenAI-compatible endpoint (here a loopback
// test server answering the way MirrorAPI does, with unescaped quotes
// inside the response string, which the simulator repairs).
func ExampleSimulator_Invoke() {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": "{"city":"Paris","temp_c":21}"}`}))
	defer srv.Close()

	sim, err := simulate.New(llm.New(srv.URL(), llm.Options{}), simulate.Options{Model: "MirrorAPI"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := &toolenv.Tool{ID: "demo/weather", Name: "weather", Title: "Current weather", Group: "Weather", Input: toolenv.ObjectSchema()}
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"city": "Paris"}})
	fmt.Println(r.Status, r.Source, r.Meta[simulate.MetaRepairs])
	fmt.Println(string(r.Body))
	// Output:
	// ok simulator envelope_fields
	// "{\"city\":\"Paris\",\"temp_c\":21}"
}

// The offline synthesizer fills a ToolBench template_response.
func ExampleSynthesizer_Invoke() {
	tool := &toolenv.Tool{ID: "demo/quote", Name: "quote", Title: "Random quote", Input: toolenv.ObjectSchema(),
		OutputExample: []byte(`{"author": "str", "tags": ["list of str with length 2"], "likes": "int"}`)}
	s := simulate.NewSynthesizer(simulate.SynthOptions{})
	r := s.Invoke(context.Background(), &toolenv.Call{Tool: tool})
	fmt.Println(r.Source, r.Meta[simulate.MetaSynthRule], r.Meta[simulate.MetaCacheable])
	fmt.Println(string(r.Body))
	// Output:
	// synthesizer template false
	// {"author":"Author 238","tags":["tags 101c22","tags 5fea29"],"likes":324}
}
