package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/toolbench"
)

// cheerio is the API of the MirrorAPI benchmark prompt rendered in
// mirrorUserGolden, made by the ToolBench loader.
func cheerio() *toolenv.Tool {
	doc := toolbench.APIDoc{
		CategoryName: "Tools", ToolName: "HTML-2-JSON", APIName: "cheerio", APIDescription: "returns the HTML page as JSON or Markdown",
		RequiredParameters: []toolbench.ParamDoc{
			{Name: "selector", Type: "STRING", Description: "", Default: "div"},
			{Name: "ur", Type: "STRING", Description: "", Default: "https://www.google.com"},
		},
		OptionalParameters: []toolbench.ParamDoc{
			{Name: "markdown", Type: "STRING", Description: "", Default: "true"},
			{Name: "json", Type: "STRING", Description: "", Default: "true"},
		},
		Method: "GET", ToolDescription: "Convert a public HTML page into JSON (or Markdown)",
	}
	t := doc.Tool()
	t.Collection, t.ID = "toolbench", "toolbench/"+t.Name
	return t
}

// mirrorUserGolden is the user turn of a MirrorAPI benchmark prompt as
// LLaMA-Factory rendered it for the released model (the only text
// between <|im_start|>user and <|im_end|>).
const mirrorUserGolden = `API doc:
{'api_name': 'cheerio', 'api_description': 'returns the HTML page as JSON or Markdown', 'required_parameters': [{'name': 'selector', 'type': 'STRING', 'description': '', 'default': 'div'}, {'name': 'ur', 'type': 'STRING', 'description': '', 'default': 'https://www.google.com'}], 'optional_parameters': [{'name': 'markdown', 'type': 'STRING', 'description': '', 'default': 'true'}, {'name': 'json', 'type': 'STRING', 'description': '', 'default': 'true'}], 'tool_description': 'Convert a public HTML page into JSON (or Markdown)', 'tool_name': 'HTML-2-JSON', 'tool_category': 'Tools'}

Request:
{'category': 'Tools', 'tool_name': 'HTML-2-JSON', 'api_name': 'cheerio', 'tool_input': '{"selector":"div.article-content","ur":"https://www.example-news-site.com/article123"}', 'strip': 'filter'}`

func newClient(url string) *llm.Client {
	return llm.New(url, llm.Options{MaxRetries: -1, Timeout: 2 * time.Second})
}

func reply(content string) llmtest.Func { return llmtest.Script(llmtest.Reply{Content: content}) }

// TestSFTPromptOnTheWire checks the request a MirrorAPI endpoint gets: the
// SFT system prompt byte for byte, the user turn exactly as the MirrorAPI
// benchmark renders it, temperature 0 and seed 42 sent.
func TestSFTPromptOnTheWire(t *testing.T) {
	srv := llmtest.New(reply(`{"error": "", "response": "{\"title\": \"Article 123\"}"}`))
	defer srv.Close()
	sim, err := New(newClient(srv.URL()), Options{Model: "MirrorAPI"})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"ur": "https://www.example-news-site.com/article123", "selector": "div.article-content"}
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: cheerio(), Args: args})
	if !r.OK() || string(r.Body) != `"{\"title\": \"Article 123\"}"` || r.Source != toolenv.SourceSimulator {
		t.Fatalf("result %+v body %s", r, r.Body)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	m := reqs[0].Messages
	if len(m) != 2 || m[0].Role != "system" || m[0].Content != SFTSystemPrompt || m[1].Role != "user" {
		t.Fatalf("messages %+v", m)
	}
	if m[1].Content != mirrorUserGolden {
		t.Errorf("user turn\n%s\nwant\n%s", m[1].Content, mirrorUserGolden)
	}
	var raw map[string]any
	if err := json.Unmarshal(srv.RawRequests()[0], &raw); err != nil {
		t.Fatal(err)
	}
	if raw["temperature"] != float64(0) || raw["seed"] != float64(42) || raw["max_tokens"] != float64(2048) || raw["model"] != "MirrorAPI" {
		t.Errorf("wire request %v: want temperature 0, seed 42, max_tokens 2048", raw)
	}
	if r.Meta[MetaPrompt] != PromptSFT || r.Meta[MetaAttempts] != "1" || r.Meta[MetaCacheable] == "false" {
		t.Errorf("meta %v", r.Meta)
	}
}

// TestServerRequestStyle sends the tool input alone, as StableToolBench's
// main_mirrorapi.py does, with parameters under their documented names.
func TestServerRequestStyle(t *testing.T) {
	srv := llmtest.New(reply(`{"error": "", "response": "ok"}`))
	defer srv.Close()
	doc := toolbench.APIDoc{CategoryName: "Data", ToolName: "Quotes", APIName: "Get quote", RequiredParameters: []toolbench.ParamDoc{{Name: "id", Type: "NUMBER", Default: 1}}}
	tool := doc.Tool() // the parameter "id" becomes "is_id", as ToolBench names it
	tool.ID = "toolbench/" + tool.Name
	sim, _ := New(newClient(srv.URL()), Options{RequestStyle: RequestServer})
	sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"is_id": json.Number("7")}})
	user := srv.Requests()[0].Messages[1].Content
	if !strings.HasSuffix(user, "\n\nRequest:\n{'id': 7}") || !strings.Contains(user, "'required_parameters': [{'name': 'id', 'type': 'NUMBER', 'description': '', 'default': 1}]") {
		t.Errorf("user turn:\n%s", user)
	}
}

func TestCoTPrompt(t *testing.T) {
	srv := llmtest.New(reply("{\n\"mechanism_of_the_api\": \"The \"cheerio\" API fetches the page and selects nodes.\",\n\"error\": \"\",\n\"response\": \"{\"div\": [\"Breaking news\"]}\"\n}"))
	defer srv.Close()
	sim, _ := New(newClient(srv.URL()), Options{Prompt: "cot"})
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: cheerio(), Args: map[string]any{"selector": "div", "ur": "https://x.example"}})
	if srv.Requests()[0].Messages[0].Content != CoTSystemPrompt {
		t.Fatal("the CoT prompt was not sent")
	}
	if !r.OK() || string(r.Body) != `"{\"div\": [\"Breaking news\"]}"` {
		t.Fatalf("result %+v body %s", r, r.Body)
	}
	if r.Meta[MetaMechanism] != `The "cheerio" API fetches the page and selects nodes.` || r.Meta[MetaRepairs] != repairEnvelope {
		t.Errorf("meta %v", r.Meta)
	}
}

// TestSTBPrompt checks StableToolBench's GPT prompt: its system prompt,
// "API Documentation:...\nAPI Examples:...\nAPI Input:...\n" with Python
// reprs, the examples, JSON mode and 1024 tokens.
func TestSTBPrompt(t *testing.T) {
	srv := llmtest.New(reply(`{"error": "", "response": "Page has 3 divs"}`))
	defer srv.Close()
	st := openStore(t)
	tool := cheerio()
	putEntry(t, st, tool.ID, map[string]any{"selector": "div", "ur": "https://a.example"}, `"{'divs': 3}"`)
	sim, _ := New(newClient(srv.URL()), Options{Prompt: "gpt", Examples: st})
	sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"selector": "p", "ur": "https://b.example"}})
	req := srv.Requests()[0]
	if req.Messages[0].Content != GPTSystemPrompt || req.MaxTokens != 1024 {
		t.Fatalf("system prompt or max_tokens wrong: %d", req.MaxTokens)
	}
	want := "API Documentation:{'tool_description': 'Convert a public HTML page into JSON (or Markdown)', 'api_info': [{'name': 'cheerio', 'description': 'returns the HTML page as JSON or Markdown', " +
		"'required_parameters': [{'name': 'selector', 'type': 'STRING', 'description': '', 'default': 'div'}, {'name': 'ur', 'type': 'STRING', 'description': '', 'default': 'https://www.google.com'}], " +
		"'optional_parameters': [{'name': 'markdown', 'type': 'STRING', 'description': '', 'default': 'true'}, {'name': 'json', 'type': 'STRING', 'description': '', 'default': 'true'}]}]}\n" +
		"API Examples:[(\"{'selector': 'div', 'ur': 'https://a.example'}\", {'error': '', 'response': \"{'divs': 3}\"})]\n" +
		"API Input:{'selector': 'p', 'ur': 'https://b.example'}\n"
	if req.Messages[1].Content != want {
		t.Errorf("user turn\n%q\nwant\n%q", req.Messages[1].Content, want)
	}
	if rf, _ := json.Marshal(req.ResponseFormat); string(rf) != `{"type":"json_object"}` {
		t.Errorf("response_format %s", rf)
	}
}

// TestFewShotBySimilarity records calls of an API in a real store and
// checks that the prompt holds the most similar ones, most similar first,
// within the 2,048-character budget — not the first five recorded.
func TestFewShotBySimilarity(t *testing.T) {
	srv := llmtest.New(reply(`{"error": "", "response": "{'forecast': 'rain'}"}`))
	defer srv.Close()
	st := openStore(t)
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	in.SetProp("days", &toolenv.Schema{Type: "integer"})
	in.Required = []string{"city"}
	tool := &toolenv.Tool{ID: "demo/forecast", Collection: "demo", Name: "forecast", Title: "Forecast", Group: "Weather", Category: "Weather", Input: in}
	// Recorded first (oldest), but unlike the call.
	for i := 0; i < 6; i++ {
		putEntry(t, st, tool.ID, map[string]any{"city": fmt.Sprintf("Town %d", i), "days": json.Number("30")}, fmt.Sprintf(`"{'forecast': 'sun %d'}"`, i))
	}
	putEntry(t, st, tool.ID, map[string]any{"city": "Paris", "days": json.Number("3")}, `"{'forecast': 'paris 3'}"`)
	putEntry(t, st, tool.ID, map[string]any{"city": "Paris", "days": json.Number("5")}, `"{'forecast': 'paris 5'}"`)
	putEntry(t, st, tool.ID, map[string]any{"city": "Paris Texas", "days": json.Number("4")}, `"{'forecast': 'texas'}"`)
	// The most similar of all, but too long for the budget.
	putEntry(t, st, tool.ID, map[string]any{"city": "Paris", "days": json.Number("4")}, fmt.Sprintf(`"%s"`, strings.Repeat("x", 3000)))

	sim, _ := New(newClient(srv.URL()), Options{Examples: st, FewShot: 3})
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"city": "Paris", "days": json.Number("4")}})
	if r.Meta[MetaExamples] != "3" {
		t.Fatalf("examples = %s, want 3", r.Meta[MetaExamples])
	}
	m := srv.Requests()[0].Messages
	if len(m) != 1+2*3+1 {
		t.Fatalf("%d messages, want system + 3 example pairs + the call", len(m))
	}
	var got []string
	for i := 1; i < len(m)-1; i += 2 {
		if m[i].Role != "user" || m[i+1].Role != "assistant" {
			t.Fatalf("example turns out of order: %+v", m)
		}
		got = append(got, m[i+1].Content)
	}
	want := []string{
		`{"error": "", "response": "{'forecast': 'paris 5'}"}`, // same city; 5 is 20% from 4
		`{"error": "", "response": "{'forecast': 'paris 3'}"}`, // same city; 3 is 25% from 4
		`{"error": "", "response": "{'forecast': 'texas'}"}`,   // same days; the city shares a word
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("few-shot answers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(m[1].Content, `'tool_input': '{"city":"Paris","days":5}'`) {
		t.Errorf("first example's request: %s", m[1].Content)
	}
	if !strings.Contains(m[len(m)-1].Content, `'tool_input': '{"city":"Paris","days":4}'`) {
		t.Errorf("the call comes last: %s", m[len(m)-1].Content)
	}
}

// The tools of the "other API" test: two APIs of one tool (StableToolBench
// G1, TheClique), with their real templates.
func cliqueTools() (concert, artist *toolenv.Tool) {
	c := toolbench.APIDoc{CategoryName: "Data", ToolName: "TheClique", APIName: "Songkick concert", APIDescription: "Concert info",
		RequiredParameters: []toolbench.ParamDoc{{Name: "id_conc", Type: "string", Default: "40698227-lumineers-at-aware-super-theatre"}},
		TemplateResponse:   json.RawMessage(`{"date": "str", "image": "str", "line_up": [{"link": "str", "name": "str", "_list_length": 2}], "location": "str", "name": "str", "venue_name": "str", "venue_url": "str", "website": "str"}`)}
	a := toolbench.APIDoc{CategoryName: "Data", ToolName: "TheClique", APIName: "Songkick artist", APIDescription: "Artist info",
		RequiredParameters: []toolbench.ParamDoc{{Name: "artist_id", Type: "string", Default: "520117-arctic-monkeys"}},
		TemplateResponse:   json.RawMessage(`{"appears_most_with": [{"count": "int", "link": "str", "name": "str", "_list_length": 5}], "bio": "str", "distance_travelled": "str", "fans_num": "int", "image_url": "str", "most_played": [{"count": "int", "name": "str", "_list_length": 5}], "name": "str", "on_tour": "str", "posters": ["list of str with length 8"], "upcoming_events": [{"date_finish": "str", "venue": "str", "_list_length": 10}]}`)}
	concert, artist = c.Tool(), a.Tool()
	for _, t := range []*toolenv.Tool{concert, artist} {
		t.Collection, t.ID = "toolbench", "toolbench/"+t.Name
	}
	return concert, artist
}

// TestModelOutputs runs the simulator against an endpoint answering the
// ways real models answer, and checks repair, retry, validation and
// failure.
func TestModelOutputs(t *testing.T) {
	concert, artist := cliqueTools()
	neighbours := SameGroup([]*toolenv.Tool{concert, artist})
	good := `{"date": "2023-04-01", "image": "https://img.example/1.jpg", "line_up": [{"link": "https://sk.example/a", "name": "The Lumineers"}], "location": "Sydney", "name": "The Lumineers at Aware Super Theatre", "venue_name": "Aware Super Theatre", "venue_url": "https://sk.example/v", "website": "https://lumineers.example"}`
	artistAnswer := `{"appears_most_with": [{"count": 3, "link": "https://sk.example/b", "name": "Band"}], "bio": "An indie band.", "fans_num": 1200, "name": "The Lumineers", "on_tour": "yes", "posters": []}`
	cases := []struct {
		name      string
		replies   []llmtest.Reply
		status    toolenv.Status
		body      string // exact body when set
		cacheable bool
		invalid   string // simulator_invalid
		failure   string // simulator_failure
		attempts  string
		repairs   string
	}{
		{name: "clean json", replies: []llmtest.Reply{{Content: `{"error": "", "response": ` + good + `}`}}, status: toolenv.StatusOK, cacheable: true, attempts: "1"},
		{name: "fenced json", replies: []llmtest.Reply{{Content: "```json\n{\"error\": \"\", \"response\": " + good + "}\n```"}}, status: toolenv.StatusOK, cacheable: true, attempts: "1", repairs: repairFence},
		{name: "prose and json", replies: []llmtest.Reply{{Content: "Here is the API response:\n{\"error\": \"\", \"response\": " + good + "}\nHope this helps!"}}, status: toolenv.StatusOK, cacheable: true, attempts: "1", repairs: repairLeading + "," + repairTrailing},
		{name: "python repr string", replies: []llmtest.Reply{{Content: `{"error": "", "response": "{'date': '2023-04-01', 'name': 'The Lumineers', 'venue_name': 'Aware Super Theatre', 'location': 'Sydney'}"}`}}, status: toolenv.StatusOK, cacheable: true, attempts: "1"},
		{name: "broken then good", replies: []llmtest.Reply{{Content: "I cannot do that."}, {Content: `{"error": "", "response": ` + good + `}`}}, status: toolenv.StatusOK, cacheable: true, attempts: "2"},
		{name: "always broken", replies: []llmtest.Reply{{Content: "Sorry, as an AI I cannot browse."}}, status: toolenv.StatusUpstreamError, failure: "unparseable", attempts: "3"},
		{name: "empty answer", replies: []llmtest.Reply{{Content: ""}}, status: toolenv.StatusUpstreamError, failure: "unparseable", attempts: "3"},
		{name: "empty response", replies: []llmtest.Reply{{Content: `{"error": "", "response": ""}`}}, status: toolenv.StatusOK, body: `""`, invalid: "empty", attempts: "1"},
		{name: "another api's answer", replies: []llmtest.Reply{{Content: `{"error": "", "response": ` + artistAnswer + `}`}}, status: toolenv.StatusOK, invalid: "shape,other_api", attempts: "1"},
		{name: "system prompt example", replies: []llmtest.Reply{{Content: "{\"error\": \"\", \"response\": \"{\"status\":0,\"msg\":\"Success\",\"languages\":[\"en\",\"fr-fr\",\"pt-br\"]}\"}"}}, status: toolenv.StatusOK, invalid: "prompt_example,shape", attempts: "1", repairs: repairEnvelope},
		{name: "plain text", replies: []llmtest.Reply{{Content: `{"error": "", "response": "The concert is on April 1st."}`}}, status: toolenv.StatusOK, invalid: "shape", attempts: "1"},
		{name: "truncated", replies: []llmtest.Reply{{Raw: chatBody(`{"error": "", "response": {"date": "2023-04-01", "name": "The Lumineers", "venue_name": "Aware`, "length")}}, status: toolenv.StatusOK, invalid: "truncated", attempts: "1", repairs: repairLoose + "," + repairTruncated},
		{name: "simulated error", replies: []llmtest.Reply{{Content: `{"error": "Invalid id_conc: concert not found", "response": ""}`}}, status: toolenv.StatusUpstreamError, attempts: "1"},
		{name: "server 500", replies: []llmtest.Reply{{Status: 500}}, status: toolenv.StatusUnavailable, failure: "endpoint", attempts: "1"},
		{name: "garbage body", replies: []llmtest.Reply{{Raw: "<html>proxy error</html>"}}, status: toolenv.StatusUnavailable, failure: "endpoint", attempts: "1"},
		{name: "hang", replies: []llmtest.Reply{{Delay: time.Minute}}, status: toolenv.StatusTimeout, failure: "endpoint", attempts: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tc.replies...))
			defer srv.Close()
			// Only the hanging endpoint meets the short timeout; the others
			// get one a loaded machine cannot reach. The hang's status and
			// error naming the 500ms budget prove its timeout fired; no
			// wall-clock bound is asserted.
			timeout := time.Minute
			if tc.status == toolenv.StatusTimeout {
				timeout = 500 * time.Millisecond
			}
			client := llm.New(srv.URL(), llm.Options{MaxRetries: -1, Timeout: timeout})
			sim, _ := New(client, Options{Neighbours: neighbours})
			r := sim.Invoke(context.Background(), &toolenv.Call{Tool: concert, Args: map[string]any{"id_conc": "40698227"}})
			if r.Status != tc.status {
				t.Fatalf("status %s (error %q), want %s", r.Status, r.Error, tc.status)
			}
			if tc.status == toolenv.StatusTimeout && !strings.Contains(r.Error, "no answer within 500ms") {
				t.Errorf("error %q should name the 500ms timeout", r.Error)
			}
			if tc.body != "" && string(r.Body) != tc.body {
				t.Errorf("body %s, want %s", r.Body, tc.body)
			}
			if got := r.Meta[MetaCacheable] != "false"; got != tc.cacheable {
				t.Errorf("cacheable = %v, want %v (meta %v, warnings %v)", got, tc.cacheable, r.Meta, r.Warnings)
			}
			if r.Meta[MetaInvalid] != tc.invalid || r.Meta[MetaFailure] != tc.failure || r.Meta[MetaAttempts] != tc.attempts || r.Meta[MetaRepairs] != tc.repairs {
				t.Errorf("meta %v, want invalid %q failure %q attempts %q repairs %q", r.Meta, tc.invalid, tc.failure, tc.attempts, tc.repairs)
			}
			if tc.invalid != "" && len(r.Warnings) == 0 {
				t.Error("an invalid response must carry a warning")
			}
			if tc.failure != "" && (r.Error == "" || r.Hint == "") {
				t.Errorf("a failure must say what went wrong and what to do: %+v", r)
			}
			if tc.status == toolenv.StatusOK && !json.Valid(r.Body) {
				t.Errorf("body is not JSON: %s", r.Body)
			}
		})
	}
}

// chatBody is a chat-completion answer with the given finish reason.
func chatBody(content, finish string) string {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "choices": []any{
		map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}}})
	return string(b)
}

// TestRetriesRaiseTemperature: a greedy decoder repeats itself, so each
// retry after an unreadable answer is asked at a higher temperature.
func TestRetriesRaiseTemperature(t *testing.T) {
	srv := llmtest.New(reply("nope"))
	defer srv.Close()
	sim, _ := New(newClient(srv.URL()), Options{})
	sim.Invoke(context.Background(), &toolenv.Call{Tool: cheerio()})
	var temps []float64
	for _, r := range srv.Requests() {
		temps = append(temps, *r.Temperature)
		if *r.Seed != 42 {
			t.Errorf("seed %d", *r.Seed)
		}
	}
	if fmt.Sprint(temps) != "[0 0.3 0.6]" {
		t.Errorf("temperatures %v, want [0 0.3 0.6]", temps)
	}
}

// TestDeadEndpoint: nothing listens; the answer is a clear error naming
// the address. (Unavailable, not timeout, shows the refusal was reported
// rather than waited out; no wall-clock bound is asserted.)
func TestDeadEndpoint(t *testing.T) {
	addr := deadport.Addr(t)
	sim, _ := New(llm.New("http://"+addr+"/v1", llm.Options{MaxRetries: 1, Backoff: 10 * time.Millisecond}), Options{})
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: cheerio()})
	if r.Status != toolenv.StatusUnavailable || r.Meta[MetaFailure] != "endpoint" || !strings.Contains(r.Error, addr) {
		t.Fatalf("result %+v", r)
	}
}

// TestSimulatorTimeout bounds a whole simulation: the simulator's 200ms
// budget ends it, not the client's minute per request nor its retries.
// The error saying the caller's deadline came first, and the single
// request, prove which budget fired; no wall-clock bound is asserted.
func TestSimulatorTimeout(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Delay: time.Minute}))
	defer srv.Close()
	sim, _ := New(llm.New(srv.URL(), llm.Options{MaxRetries: 3, Timeout: time.Minute}), Options{Timeout: 200 * time.Millisecond})
	r := sim.Invoke(context.Background(), &toolenv.Call{Tool: cheerio()})
	if r.Status != toolenv.StatusTimeout || !strings.Contains(r.Error, "caller's deadline") {
		t.Fatalf("status %s (error %q), want a timeout at the simulator's deadline", r.Status, r.Error)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry past the deadline)", n)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("a nil model must be refused")
	}
	srv := llmtest.New(reply(""))
	defer srv.Close()
	if _, err := New(newClient(srv.URL()), Options{Prompt: "fancy"}); err == nil || !strings.Contains(err.Error(), "sft, cot or stb") {
		t.Errorf("unknown prompt: %v", err)
	}
	if _, err := New(newClient(srv.URL()), Options{RequestStyle: "other"}); err == nil {
		t.Error("unknown request style must be refused")
	}
}

// TestDocOverridesTool: a drifted call carries the documentation the
// client was shown; the simulator must prompt with it.
func TestDocOverridesTool(t *testing.T) {
	srv := llmtest.New(reply(`{"error": "", "response": "ok"}`))
	defer srv.Close()
	sim, _ := New(newClient(srv.URL()), Options{})
	tool := cheerio()
	doc := tool.Clone()
	doc.Description = "returns the page, version 2"
	sim.Invoke(context.Background(), &toolenv.Call{Tool: tool, Doc: doc})
	if u := srv.Requests()[0].Messages[1].Content; !strings.Contains(u, "'api_description': 'returns the page, version 2'") {
		t.Errorf("the doc was not used: %s", u)
	}
}
