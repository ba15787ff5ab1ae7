package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

var parseInputs = map[string]string{
	"clean":    `{"error": "", "response": "{\"date\": \"2023-04-01\", \"name\": \"The Lumineers\", \"venue_name\": \"Aware Super Theatre\", \"location\": \"Sydney\"}"}`,
	"fenced":   "Here you go:\n```json\n{\"error\": \"\", \"response\": {\"date\": \"2023-04-01\", \"name\": \"The Lumineers\", \"line_up\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}}\n```",
	"mirror":   "{\n  \"error\": \"\",\n  \"response\": \"{\"date\":\"2023-04-01\",\"name\":\"The Lumineers\",\"venue_name\":\"Aware Super Theatre\",\"location\":\"Sydney\"}\"\n}",
	"truncate": `{"error": "", "response": {"date": "2023-04-01", "name": "The Lumineers", "line_up": [{"name": "a"}, {"name": "b`,
}

func BenchmarkParseOutput(b *testing.B) {
	for _, name := range []string{"clean", "fenced", "mirror", "truncate"} {
		text := parseInputs[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := parseOutput(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPrompt builds a MirrorAPI prompt with five few-shot examples
// chosen from 200 recorded calls (the store read excluded).
func BenchmarkPrompt(b *testing.B) {
	tool := cheerio()
	var cands []example
	for i := 0; i < 200; i++ {
		args := map[string]any{"selector": fmt.Sprintf("div.c%d", i), "ur": fmt.Sprintf("https://site%d.example/p", i%17)}
		c, _ := toolenv.Canonical(args)
		cands = append(cands, example{args: args, canon: string(c), body: json.RawMessage(fmt.Sprintf(`"{'title': 'Page %d', 'divs': %d}"`, i, i))})
	}
	sim, _ := New(chatFunc(nil), Options{})
	args := map[string]any{"selector": "div.c42", "ur": "https://site8.example/p"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pool := append([]example(nil), cands...)
		exs := chooseExamples(pool, args, 5, 2048, func(exs []example) int { return len([]rune(pyfmt.Repr(exampleList(tool, exs)))) })
		_ = sim.messages(tool, args, exs)
	}
}

// chatFunc adapts a function to ChatModel (benchmarks never call it).
type chatFunc func(context.Context) error

func (f chatFunc) Chat(ctx context.Context, _ *llm.Request) (*llm.Response, error) { return nil, nil }

// BenchmarkSimulatorInvoke is one simulated call end to end against a
// loopback OpenAI-compatible server answering at once: toolenv's own cost
// per simulated call (prompt, HTTP, parsing, validation), the model's
// time excluded.
func BenchmarkSimulatorInvoke(b *testing.B) {
	concert, artist := cliqueTools()
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": {"date": "2023-04-01", "image": "https://img.example/1.jpg", "line_up": [{"link": "https://sk.example/a", "name": "The Lumineers"}], "location": "Sydney", "name": "The Lumineers", "venue_name": "Aware Super Theatre", "venue_url": "https://sk.example/v", "website": "https://lumineers.example"}}`}))
	defer srv.Close()
	sim, _ := New(llm.New(srv.URL(), llm.Options{}), Options{Neighbours: SameGroup([]*toolenv.Tool{concert, artist})})
	call := &toolenv.Call{Tool: concert, Args: map[string]any{"id_conc": "40698227"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := sim.Invoke(context.Background(), call); !r.OK() {
			b.Fatal(r.Error)
		}
	}
}
