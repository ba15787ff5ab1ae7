package environment_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/nl2api"
	_ "modernc.org/sqlite"
)

// The demo in five lines: the embedded collection, answered by the offline
// synthesizer, through the same pipeline toolenv serve runs.
func ExampleOpen() {
	ctx := context.Background()
	env, _ := environment.Open(ctx, nil) // the demo, in memory
	defer env.Close()
	call, _ := env.Registry.NewCall("demo", "get_book", map[string]any{"isbn": "9780441172719"})
	fmt.Println(env.Pipeline.Invoke(ctx, call).Status)
	// Output: ok
}

// A BIRD collection served as REST endpoints, drifted to a second version
// whose old calls are rejected (drift enforcement in strict mode), with an
// operational fault (a rate limit) on top. The BIRD-layout data is written
// here; toolenv build bird does the same from BIRD itself.
func Example_bird() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-bird-")
	defer os.RemoveAll(dir)
	writeBird(filepath.Join(dir, "bird"))
	rest, v2 := filepath.Join(dir, "out", "rest"), filepath.Join(dir, "out", "rest-v2")
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: filepath.Join(dir, "bird"), Out: filepath.Join(dir, "out"), Flavors: []string{nl2api.Rest}}); err != nil {
		fmt.Println(err)
		return
	}
	// Version 2 (what toolenv drift --in out/rest --out out/rest-v2 --seed 7 writes).
	c, _ := toolenv.ReadCollection(rest)
	l, _ := drift.Open(c)
	d, _ := drift.Drift(l, drift.Options{Seed: 7})
	if err := drift.Write(v2, d, drift.WriteOptions{BaseDir: rest}); err != nil {
		fmt.Println(err)
		return
	}

	env, err := environment.Open(ctx, &environment.Config{
		Collections: []string{v2},
		Drift:       environment.DriftConfig{Mode: "strict"},
		Faults:      `{"rules": [{"collection": "bird-rest", "rate_limit": {"per_second": 0.001, "burst": 2}}]}`,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Close()
	invoke := func(args map[string]any) *toolenv.Result {
		call, res := env.Registry.NewCall("bird-rest", "get_price_by_product_name", args)
		if res != nil {
			return res
		}
		return env.Pipeline.Invoke(ctx, call)
	}
	old := invoke(map[string]any{"product_name": "kettle"}) // written against v1
	fmt.Println("v1 call:", old.Status, old.Problems[0].Code)
	cur := invoke(map[string]any{"productName": "kettle"})
	fmt.Println("v2 call:", cur.Status, string(cur.Body))
	fmt.Println("third call:", invoke(map[string]any{"productName": "lamp"}).Status)
	// Output:
	// v1 call: invalid_arguments renamed
	// v2 call: ok {"columns":["price"],"row_count":1,"rows":[[25.5]]}
	// third call: rate_limited
}

// An agent driven in-process: the ReAct agent, with a scripted model in
// place of an LLM, solves a demo task through the environment's pipeline,
// as toolenv eval does.
func Example_agent() {
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer env.Close()
	task := env.Tasks["demo"][2] // "I have 100 euros. How many US dollars is that?"
	local := agent.NewLocal(env.Pipeline, env.Collections(), agent.LocalOptions{})
	session, err := local.Start(ctx, task)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close(ctx)
	out := agent.ReAct{}.Run(ctx, &agent.Episode{Task: task, Session: session, Model: scriptedModel{}, Collection: env.Registry.Collection("demo")})
	for _, step := range out.Trajectory.Steps {
		if step.Call != nil {
			fmt.Println("called", step.Call.Name, step.Call.Args, "→", step.Status, "from the", step.Source)
		}
	}
	fmt.Println("finished:", out.Trajectory.Finished)
	// Output:
	// called convert_currency map[amount:100 from:EUR to:USD] → ok from the synthesizer
	// finished: true
}

// scriptedModel answers as a ReAct model would: first a call, then, once
// it sees an observation, a final answer.
type scriptedModel struct{}

func (scriptedModel) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	text := "Thought: I need the conversion.\nAction: convert_currency\nAction Input: {\"amount\": 100, \"from\": \"EUR\", \"to\": \"USD\"}"
	if last := req.Messages[len(req.Messages)-1]; strings.HasPrefix(last.Content, "Observation:") {
		text = "Thought: I have it.\nFinal Answer: " + strings.TrimPrefix(last.Content, "Observation: ")
	}
	return &llm.Response{Choices: []llm.Choice{{Message: llm.Message{Role: "assistant", Content: text}}}}, nil
}

// writeBird writes a BIRD-layout folder with one database and three
// questions.
func writeBird(dir string) {
	db := filepath.Join(dir, "dev_databases", "shop")
	os.MkdirAll(db, 0o755)
	conn, _ := sql.Open("sqlite", filepath.Join(db, "shop.sqlite"))
	defer conn.Close()
	for _, s := range []string{
		"CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL)",
		"INSERT INTO product VALUES (1, 'kettle', 'kitchen', 25.5), (2, 'toaster', 'kitchen', 32), (3, 'lamp', 'living', 18), (4, 'sofa', 'living', 450)",
	} {
		if _, err := conn.Exec(s); err != nil {
			panic(err)
		}
	}
	qs := []map[string]any{
		{"question_id": 1, "db_id": "shop", "question": "What is the price of the kettle?", "evidence": "", "SQL": "SELECT price FROM product WHERE name = 'kettle'", "difficulty": "simple"},
		{"question_id": 2, "db_id": "shop", "question": "How many products are in the kitchen category?", "evidence": "", "SQL": "SELECT COUNT(*) FROM product WHERE category = 'kitchen'", "difficulty": "simple"},
		{"question_id": 3, "db_id": "shop", "question": "Which products cost less than 30?", "evidence": "", "SQL": "SELECT name FROM product WHERE price < 30", "difficulty": "simple"},
	}
	b, _ := json.Marshal(qs)
	os.WriteFile(filepath.Join(dir, "dev.json"), b, 0o644)
}
