package agent_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/openai"
	"github.com/toolenv/toolenv/server"
	_ "modernc.org/sqlite"
)

// birdFixture is a SLOT or SEL collection over BIRD's superhero database,
// served by the real sqltools backend through the standard pipeline, with
// two tasks written for these tests whose gold answers come from SQL.
type birdFixture struct {
	coll  *toolenv.Collection
	env   agent.Env
	reg   *invoke.Registry
	h     toolenv.Handler
	tasks []*toolenv.Task
	db    string
}

var heroColumns = []sqltools.Column{
	{Name: "superhero_superhero_name", Type: "string", Description: "the superhero's name"},
	{Name: "superhero_height_cm", Type: "integer", Description: "height in cm"},
	{Name: "eye_colour_colour", Type: "string", Description: "eye colour"},
	{Name: "publisher_publisher_name", Type: "string", Description: "publisher"},
}

func newBirdFixture(t *testing.T, flavor string) *birdFixture {
	t.Helper()
	dbPath := shareddata.Require(t, "bird", "dev_databases", "superhero", "superhero.sqlite")
	cfg, _ := json.Marshal(sqltools.Config{Flavor: flavor, Databases: map[string]string{"superhero": dbPath}})
	tools := sqltools.SlotTools(heroColumns)
	if flavor == sqltools.FlavorSel {
		tools = sqltools.SelTools(heroColumns)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	tools = append(tools, sqltools.InitToolDef([]string{"superhero"}))
	c := toolenv.NewCollection("bird-"+flavor, "nl2sql-"+flavor, tools)
	c.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Sessions: true}
	b, err := sqltools.Open(context.Background(), c, sqltools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	reg := invoke.NewRegistry()
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	h := invoke.New(reg, invoke.Options{})
	env := agent.NewLocal(h, []*toolenv.Collection{c}, agent.LocalOptions{TaskTools: sqltools.TaskTools})
	init := []any{map[string]any{"name": agent.InitTool, "label": "starting_table", "arguments": map[string]any{
		"database": "superhero",
		"tables": []any{
			map[string]any{"name": "superhero", "alias": "T1"},
			map[string]any{"name": "colour", "alias": "T2", "prefix": "eye_colour", "on": []any{[]any{"T1.eye_colour_id", "T2.id"}}},
			map[string]any{"name": "publisher", "alias": "T3", "join": "left", "on": []any{[]any{"T1.publisher_id", "T3.id"}}},
		}}}}
	cols := []any{}
	for _, col := range heroColumns {
		cols = append(cols, map[string]any{"name": col.Name, "type": col.Type, "description": col.Description})
	}
	meta := func() map[string]any { return map[string]any{"init": init, "columns": cols} }
	filter := "filter_data"
	filterArgs := func(key string, v any) map[string]any {
		return map[string]any{"data_source": "$starting_table$", "key_name": key, "condition": "equal_to", "value": v}
	}
	if flavor == sqltools.FlavorSel {
		filter = "select_data_equal_to"
	}
	f := &birdFixture{coll: c, env: env, db: dbPath, reg: reg, h: h}
	f.tasks = []*toolenv.Task{
		{ID: "hero-1", Collection: c.Name, Group: "superhero", Query: "What is the eye colour of 3-D Man?", Tools: names, Meta: meta(),
			Gold: []toolenv.GoldCall{
				{Name: filter, Args: withCondition(flavor, filterArgs("superhero_superhero_name", "3-D Man")), Label: "HERO"},
				retrieve(flavor, "$HERO$", "eye_colour_colour", "EYES"),
			}},
		{ID: "hero-2", Collection: c.Name, Group: "superhero", Query: "Which superheroes published by Dark Horse Comics have blue eyes?", Tools: names, Meta: meta(),
			Gold: []toolenv.GoldCall{
				{Name: filter, Args: withCondition(flavor, filterArgs("publisher_publisher_name", "Dark Horse Comics")), Label: "DH"},
				{Name: filter, Args: withCondition(flavor, map[string]any{"data_source": "$DH$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue"}), Label: "BLUE"},
				retrieve(flavor, "$BLUE$", "superhero_superhero_name", "NAMES"),
			}},
	}
	return f
}

func withCondition(flavor string, args map[string]any) map[string]any {
	if flavor == sqltools.FlavorSel {
		delete(args, "condition")
	}
	return args
}

func retrieve(flavor, src, col, label string) toolenv.GoldCall {
	if flavor == sqltools.FlavorSel {
		return toolenv.GoldCall{Name: sqltools.GetterName(col), Args: map[string]any{"data_source": src}, Label: label}
	}
	return toolenv.GoldCall{Name: "retrieve_data", Args: map[string]any{"data_source": src, "key_names": []any{col}}, Label: label}
}

// sqlValues runs a one-column query on the fixture's database.
func (f *birdFixture) sqlValues(t *testing.T, q string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(f.db)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// bodyValues reads the values of a rows or list result.
func bodyValues(t *testing.T, body json.RawMessage) []string {
	t.Helper()
	var b struct {
		Type   string  `json:"type"`
		Rows   [][]any `json:"rows"`
		Values []any   `json:"values"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	var out []string
	for _, r := range b.Rows {
		out = append(out, toString(r[0]))
	}
	for _, v := range b.Values {
		out = append(out, toString(v))
	}
	return out
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func episode(t *testing.T, f *birdFixture, task *toolenv.Task, url string) *agent.Episode {
	t.Helper()
	sess, err := f.env.Start(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return &agent.Episode{Task: task, Session: sess, Model: llm.New(url, llm.Options{MaxRetries: 1, Backoff: time.Millisecond}),
		ModelName: "test", Seed: 7, Collection: f.coll, Examples: f.tasks}
}

const (
	eyesSQL = `SELECT T2.colour FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id WHERE T1.superhero_name = '3-D Man'`
	blueSQL = `SELECT T1.superhero_name FROM superhero AS T1 INNER JOIN colour AS T2 ON T1.eye_colour_id = T2.id LEFT JOIN publisher AS T3 ON T1.publisher_id = T3.id WHERE T3.publisher_name = 'Dark Horse Comics' AND T2.colour = 'Blue' ORDER BY T1.superhero_name`
)

func TestOracleNL2SQL(t *testing.T) {
	for _, flavor := range []string{sqltools.FlavorSlot, sqltools.FlavorSel} {
		t.Run(flavor, func(t *testing.T) {
			f := newBirdFixture(t, flavor)
			for i, q := range []string{eyesSQL, blueSQL} {
				task := f.tasks[i]
				out := agent.Oracle{}.Run(context.Background(), episode(t, f, task, "http://127.0.0.1:1/v1"))
				if !out.Trajectory.Finished || out.Trajectory.Error != "" {
					t.Fatalf("%s: oracle did not finish: %+v", task.ID, out.Trajectory)
				}
				if out.Trajectory.Counts.LLMCalls != 0 || len(out.Results) != len(task.Gold) {
					t.Errorf("%s: %d model calls, %d results", task.ID, out.Trajectory.Counts.LLMCalls, len(out.Results))
				}
				got := bodyValues(t, out.Results[len(out.Results)-1].Body)
				want := f.sqlValues(t, q)
				sortStrings(got)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: oracle answer %v, SQL gives %v", task.ID, got, want)
				}
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestDirectNL2SQL drives the direct agent with outputs shaped like those
// Live API-Bench quotes (Appendix G) against the live SEL tools.
func TestDirectNL2SQL(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSel)
	task := f.tasks[1]
	qwen := "<tool_call>\n{\"name\": \"select_data_equal_to\", \"arguments\": {\"data_source\": \"$starting_table$\", \"key_name\": \"publisher_publisher_name\", \"value\": \"Dark Horse Comics\"}, \"label\": \"FILTERED_DF\"}\n</tool_call>\n<tool_call>\n{\"name\": \"select_data_equal_to\", \"arguments\": {\"data_source\": \"$FILTERED_DF$\", \"key_name\": \"eye_colour_colour\", \"value\": \"Blue\"}, \"label\": \"BLUE_EYES\"}\n</tool_call>\n<tool_call>\n{\"name\": \"get_superhero_superhero_name\", \"arguments\": {\"data_source\": \"$BLUE_EYES$\"}, \"label\": \"NAMES\"}\n</tool_call>"
	tests := []struct {
		name      string
		reply     string
		parsed    bool
		malformed int
		executed  int
		finished  bool
	}{
		{"qwen tagged calls with own labels", qwen, true, 0, 3, true},
		{"deepseek list of names", "Here is the tool call:\n\n```json\n[\"get_superhero_superhero_name\"]\n```", true, 1, 0, false},
		{"mixtral runs on", "[{\"name\": \"get_superhero_superhero_name\", \"arguments\": {\"data_source\": \"$starting_table$\"}}]\n\nUSER: What is the publisher of Hellboy?\nASSISTANT:\n[{\"name\": \"get_", false, 0, 0, false},
		{"gpt-4o answers instead", "To find superheroes with blue eyes published by Dark Horse Comics, we can follow these steps:\n1. Filter by publisher.\n2. Filter by eye colour.", false, 0, 0, false},
		{"wrong column stops the sequence", `[{"name": "select_data_equal_to", "arguments": {"data_source": "$starting_table$", "key_name": "publisher", "value": "Dark Horse Comics"}, "label": "A"}, {"name": "get_superhero_superhero_name", "arguments": {"data_source": "$A$"}, "label": "B"}]`, true, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: tt.reply}))
			defer srv.Close()
			out := agent.Direct{}.Run(context.Background(), episode(t, f, task, srv.URL()))
			if out.Parsed != tt.parsed || out.Malformed != tt.malformed || len(out.Results) != tt.executed || out.Trajectory.Finished != tt.finished {
				t.Fatalf("parsed %v malformed %d executed %d finished %v; want %v %d %d %v (%s)", out.Parsed, out.Malformed, len(out.Results), out.Trajectory.Finished, tt.parsed, tt.malformed, tt.executed, tt.finished, out.ParseError)
			}
			if !tt.parsed && out.ParseError == "" {
				t.Error("no parse error recorded")
			}
			if tt.finished {
				got := bodyValues(t, out.Results[len(out.Results)-1].Body)
				sortStrings(got)
				if want := f.sqlValues(t, blueSQL); !reflect.DeepEqual(got, want) {
					t.Errorf("answer %v, SQL gives %v", got, want)
				}
			}
			req := srv.Requests()[0]
			sys := req.Messages[0].Content
			for _, want := range []string{`"$starting_table$"`, `"name":"get_superhero_superhero_name"`, "Question: What is the eye colour of 3-D Man?", `"label":"HERO"`} {
				if !strings.Contains(sys, want) {
					t.Errorf("NESTful prompt lacks %q", want)
				}
			}
			if strings.Contains(sys, "Dark Horse Comics have blue eyes") {
				t.Error("the task itself is shown as an in-context example")
			}
			if req.Messages[1].Content != task.Query || req.Seed == nil || *req.Seed != 7 || req.Model != "test" {
				t.Errorf("request: user %q seed %v model %q", req.Messages[1].Content, req.Seed, req.Model)
			}
		})
	}
}

func TestReActNL2SQL(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	task := f.tasks[0]
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Content: "Thought: I need the row of 3-D Man.\nAction: filter_data\nAction Input: {\"data_source\": \"$starting_table$\", \"key_name\": \"superhero_superhero_name\", \"condition\": \"equal_to\", \"value\": \"3-D Man\", \"label\": \"HERO\"}\nObservation: (imagined)"},
		llmtest.Reply{Content: "I will now look at the eyes."},
		llmtest.Reply{Content: "Thought: Now read the eye colour.\nAction: retrieve_data\nAction Input: {\"data_source\": \"$HERO$\", \"key_names\": [\"eye_colour_colour\"]}"},
		llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: Brown"},
	))
	defer srv.Close()
	out := agent.ReAct{}.Run(context.Background(), episode(t, f, task, srv.URL()))
	tr := out.Trajectory
	if !tr.Finished || tr.Answer != "Brown" || out.Loops != 4 || out.OutOfBudget || len(out.Predicted) != 2 {
		t.Fatalf("finished %v answer %q loops %d oob %v predicted %d", tr.Finished, tr.Answer, out.Loops, out.OutOfBudget, len(out.Predicted))
	}
	if got, want := bodyValues(t, out.Results[1].Body), f.sqlValues(t, eyesSQL); !reflect.DeepEqual(got, want) {
		t.Errorf("retrieved %v, SQL gives %v", got, want)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	if last[2].Content != "Thought: I need the row of 3-D Man.\nAction: filter_data\nAction Input: {\"data_source\": \"$starting_table$\", \"key_name\": \"superhero_superhero_name\", \"condition\": \"equal_to\", \"value\": \"3-D Man\", \"label\": \"HERO\"}" {
		t.Errorf("the imagined observation was sent back: %q", last[2].Content)
	}
	if !strings.HasPrefix(last[3].Content, "Observation: {") || !strings.Contains(last[5].Content, "could not be read") {
		t.Errorf("observations: %q / %q", last[3].Content, last[5].Content)
	}
	if !strings.Contains(last[0].Content, "filter_data: ") || !strings.Contains(reqs[0].Messages[0].Content, "one of [filter_data") {
		t.Errorf("system prompt lists no tools:\n%s", last[0].Content)
	}
	if len(reqs[0].Stop) == 0 {
		t.Error("no stop sequence sent")
	}
}

func TestReActOutOfBudgetAndStuck(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "Thought: try again\nAction: filter_data\nAction Input: {\"data_source\": \"$nope$\", \"key_name\": \"eye_colour_colour\", \"condition\": \"equal_to\", \"value\": \"Blue\"}"}))
	defer srv.Close()
	out := agent.ReAct{Budget: 3}.Run(context.Background(), episode(t, f, f.tasks[0], srv.URL()))
	if !out.OutOfBudget || out.Loops != 3 || out.Trajectory.Finished || len(out.Results) != 3 {
		t.Fatalf("oob %v loops %d finished %v results %d", out.OutOfBudget, out.Loops, out.Trajectory.Finished, len(out.Results))
	}
	if out.Results[0].Status != toolenv.StatusNotFound || !strings.Contains(out.Trajectory.Steps[0].Observation, "Error (not_found)") {
		t.Errorf("unknown label: %+v / %q", out.Results[0], out.Trajectory.Steps[0].Observation)
	}
}

// TestAgentsSurviveABrokenModel: a model that answers 500, garbage or
// nothing ends the episode with an error recorded, never a panic.
func TestAgentsSurviveABrokenModel(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	replies := map[string]llmtest.Reply{
		"500":     {Status: 500},
		"garbage": {Raw: "<html>gateway</html>"},
		"429":     {Status: 429},
	}
	agents := []agent.Agent{agent.Direct{}, agent.ReAct{}, agent.CoT{}, agent.DFSDT{}}
	for name, rep := range replies {
		for _, a := range agents {
			t.Run(name+"/"+a.Name(), func(t *testing.T) {
				srv := llmtest.New(llmtest.Script(rep))
				defer srv.Close()
				out := a.Run(context.Background(), episode(t, f, f.tasks[0], srv.URL()))
				if out.Trajectory.Error == "" || out.Trajectory.Finished || out.Canceled {
					t.Errorf("error %q finished %v canceled %v", out.Trajectory.Error, out.Trajectory.Finished, out.Canceled)
				}
			})
		}
	}
}

func TestAgentCanceled(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "Final Answer: x", Delay: 5 * time.Second}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ep := episode(t, f, f.tasks[0], srv.URL())
	if out := (agent.ReAct{}).Run(ctx, ep); !out.Canceled {
		t.Errorf("canceled = false, error %q", out.Trajectory.Error)
	}
}

// TestRemoteEnv runs the oracle and a ReAct episode against a real toolenv
// server on loopback (the REST front-end, sessions in the
// X-Toolenv-Session header) and gets what the in-process environment
// gets.
func TestRemoteEnv(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	srv := httptest.NewServer(server.New(server.Options{Pipeline: f.h, Registry: f.reg}))
	defer srv.Close()
	local := f.env
	f.env = agent.NewRemote(srv.URL, agent.RemoteOptions{TaskTools: sqltools.TaskTools})
	for i, task := range f.tasks {
		out := agent.Oracle{}.Run(context.Background(), episode(t, f, task, "http://127.0.0.1:1/v1"))
		if !out.Trajectory.Finished {
			t.Fatalf("%s over HTTP: %+v", task.ID, out.Trajectory)
		}
		f2 := *f
		f2.env = local
		want := agent.Oracle{}.Run(context.Background(), episode(t, &f2, task, "http://127.0.0.1:1/v1"))
		if got, w := bodyValues(t, out.Results[len(out.Results)-1].Body), bodyValues(t, want.Results[len(want.Results)-1].Body); !reflect.DeepEqual(got, w) {
			t.Errorf("task %d: remote %v, local %v", i, got, w)
		}
	}
	// Errors come back structured.
	sess, err := f.env.Start(context.Background(), f.tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	res := sess.Call(context.Background(), agent.Call{Name: "filter_data", Args: map[string]any{"data_source": "$nope$", "key_name": "eye_colour_colour", "condition": "equal_to", "value": "Blue"}})
	if res.Status != toolenv.StatusNotFound || res.Error == "" {
		t.Errorf("unknown label over HTTP: %+v", res)
	}
	if _, err := agent.NewRemote("http://127.0.0.1:1", agent.RemoteOptions{}).Start(context.Background(), f.tasks[0]); err == nil || !strings.Contains(err.Error(), "--env-url") {
		t.Errorf("server down: %v", err)
	}
}

// TestRemoteEnvShowsLocalDefinitions: given the collection's definition,
// a remote environment offers the task exactly the tools (narrowed enums
// included) the in-process one offers.
func TestRemoteEnvShowsLocalDefinitions(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSel)
	srv := httptest.NewServer(server.New(server.Options{Pipeline: f.h, Registry: f.reg}))
	defer srv.Close()
	remote := agent.NewRemote(srv.URL, agent.RemoteOptions{TaskTools: sqltools.TaskTools, Collections: []*toolenv.Collection{f.coll}})
	rs, err := remote.Start(context.Background(), f.tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.env.Start(context.Background(), f.tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(rs.Tools())
	b, _ := json.Marshal(ls.Tools())
	if string(a) != string(b) {
		t.Errorf("remote tools differ from local ones")
	}
}

// TestCoTTriesAgain: CoT@2 gives up once and answers in its second
// chain; the trajectory is the second chain, the first is kept apart.
func TestCoTTriesAgain(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	finish := func(args string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "f", Type: "function", Function: llm.FunctionCall{Name: "Finish", Arguments: args}}}}
	}
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Content: "Let me look.", ToolCalls: []llm.ToolCall{{ID: "c", Type: "function", Function: llm.FunctionCall{Name: "retrieve_data", Arguments: `{"data_source": "$starting_table$", "key_names": ["eye_colour_colour"], "limit": 1}`}}}},
		finish(`{"return_type": "give_up_and_restart"}`),
		finish(`{"return_type": "give_answer", "final_answer": "Brown"}`),
	))
	defer srv.Close()
	out := agent.CoT{Tries: 2}.Run(context.Background(), episode(t, f, f.tasks[0], srv.URL()))
	tr := out.Trajectory
	if !tr.Finished || tr.Answer != "Brown" || tr.GaveUp || len(out.EarlierTries) != 1 || len(out.EarlierTries[0]) != 2 || len(tr.Steps) != 1 {
		t.Fatalf("finished %v answer %q gave up %v earlier %d steps %d", tr.Finished, tr.Answer, tr.GaveUp, len(out.EarlierTries), len(tr.Steps))
	}
	if out.Loops != 3 || out.OutOfBudget {
		t.Errorf("loops %d oob %v", out.Loops, out.OutOfBudget)
	}
}

// TestModelTimeout: a model that never answers in time ends the episode
// with the error after the retries, and the run could go on. The error
// naming the client's 50ms budget proves the timeout path ran (the model
// answers only after 2s); no wall-clock bound is asserted, since tests
// never do (a loaded machine is slow, not wrong).
func TestModelTimeout(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "Final Answer: late", Delay: 2 * time.Second}))
	defer srv.Close()
	ep := episode(t, f, f.tasks[0], srv.URL())
	ep.Model = llm.New(srv.URL(), llm.Options{Timeout: 50 * time.Millisecond, MaxRetries: 1, Backoff: time.Millisecond})
	out := agent.ReAct{}.Run(context.Background(), ep)
	if out.Canceled || !strings.Contains(out.Trajectory.Error, "no answer within 50ms") {
		t.Errorf("error %q canceled %v, want the client's 50ms timeout", out.Trajectory.Error, out.Canceled)
	}
	if got := len(srv.Requests()); got != 2 {
		t.Errorf("%d attempts, want 2 (one retry)", got)
	}
}

// TestStrictTools: with StrictTools the CoT agent offers every tool (and
// Finish) as a strict OpenAI function that passes strict mode's rules,
// and a call the way a strict model writes it (every optional argument
// present as null) runs as the same call without them.
func TestStrictTools(t *testing.T) {
	f := newBirdFixture(t, sqltools.FlavorSlot)
	args := map[string]any{"data_source": "$starting_table$", "key_names": []any{"eye_colour_colour"}}
	for _, name := range f.coll.Tool("retrieve_data").Params() {
		if _, ok := args[name]; !ok {
			args[name] = nil
		}
	}
	raw, _ := json.Marshal(args)
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Type: "function", Function: llm.FunctionCall{Name: "retrieve_data", Arguments: string(raw)}}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "f", Type: "function", Function: llm.FunctionCall{Name: "Finish", Arguments: `{"return_type": "give_answer", "final_answer": "Brown"}`}}}},
	))
	defer srv.Close()
	out := agent.CoT{StrictTools: true}.Run(context.Background(), episode(t, f, f.tasks[0], srv.URL()))
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	for _, tool := range reqs[0].Tools {
		if errs := openai.CheckStrictTool(tool); len(errs) > 0 {
			t.Errorf("%s: %v", tool.Function.Name, errs)
		}
	}
	tr := out.Trajectory
	if !tr.Finished || len(tr.Steps) == 0 {
		t.Fatalf("finished %v, steps %+v", tr.Finished, tr.Steps)
	}
	if tr.Steps[0].Status != toolenv.StatusOK || !strings.Contains(tr.Steps[0].Observation, `"type": "rows"`) {
		t.Errorf("the call with nulls did not run as the call without them: %s", tr.Steps[0].Observation)
	}
}
