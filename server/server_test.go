package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// echoBackend answers each call with the tool's name, its arguments and
// session, or with a failure the arguments ask for (so tests reach every
// status through the real pipeline and wire).
func echoBackend(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if st, ok := call.Args["fail"].(string); ok {
		r := &toolenv.Result{Status: toolenv.Status(st), Error: "asked to fail with " + st, Source: toolenv.SourceUpstream}
		if st == string(toolenv.StatusRateLimited) {
			r.Source, r.RetryAfter = toolenv.SourcePipeline, 2*time.Second
		}
		return r
	}
	body, _ := json.Marshal(map[string]any{"tool": call.Tool.Name, "args": call.Args, "session": call.Session, "frontend": call.Frontend})
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSimulator}
}

func newTestServer(t *testing.T) (*httptest.Server, *Metrics) {
	t.Helper()
	return newTestServerMax(t, 4096)
}

// newTestServerMax is newTestServer with a body limit of maxBody bytes.
func newTestServerMax(t testing.TB, maxBody int64) (*httptest.Server, *Metrics) {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	// A lenient ToolBench-style collection beside the strict demo one.
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	in.SetProp("limit", &toolenv.Schema{Type: "integer"})
	in.SetProp("fail", &toolenv.Schema{Type: "string"})
	in.Required = []string{"q"}
	tb := toolenv.NewCollection("toolbench", "toolbench", []*toolenv.Tool{{
		Name: "search_for_newsapi", Title: "Search", Category: "News_Media", Group: "NewsAPI", Input: in,
		Meta: map[string]string{"std_category": "News_Media", "std_tool": "newsapi", "api_name": "search"},
	}})
	tb.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}
	// An OpenAPI-style collection: a header parameter and a raw array body.
	hin := toolenv.ObjectSchema()
	hin.SetProp("X-Trace", &toolenv.Schema{Type: "integer"})
	hin.SetProp("items", &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "string"}})
	hin.Required = []string{"items"}
	api := toolenv.NewCollection("api", "openapi", []*toolenv.Tool{{
		Name: "addItems", Input: hin, Meta: map[string]string{"body_param": "items"},
		Binding: &toolenv.Binding{Method: "POST", Path: "/items", In: map[string]string{"X-Trace": "header", "items": "body"}},
	}})
	api.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict}
	reg := invoke.NewRegistry()
	for _, coll := range []*toolenv.Collection{c, tb, api} {
		if err := reg.Add(coll, toolenv.HandlerFunc(echoBackend)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := NewMetrics()
	p := invoke.New(reg, invoke.Options{Cache: st, Observer: m})
	srv := httptest.NewServer(New(Options{Pipeline: p, Registry: reg, Metrics: m, MaxBodyBytes: maxBody}))
	t.Cleanup(srv.Close)
	return srv, m
}

func post(t *testing.T, url, ctype, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

type virtualAnswer struct {
	Error    string          `json:"error"`
	Response json.RawMessage `json:"response"`
}

func TestVirtual(t *testing.T) {
	srv, _ := newTestServer(t)
	tests := []struct {
		name       string
		body       string
		code       int
		wantErr    string // substring of "error"; "" means no error
		wantResp   string // substring of "response"
		wantSource string
	}{
		{"tool_input as a JSON string", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":"{\"q\": \"go\", \"limit\": \"5\"}","strip":"","toolbench_key":"k"}`,
			200, "", `"limit":5`, "simulator"},
		{"same call as an object is a cache hit", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":{"limit":5.0,"q":"go"},"strip":"","toolbench_key":"k"}`,
			200, "", `"limit":5`, "cache"},
		{"full function name and _for_ tool key", `{"category":"News_Media","tool_name":"newsapi_for_News_Media","api_name":"search_for_newsapi","tool_input":{"q":"x"},"strip":"","toolbench_key":""}`,
			200, "", `"q":"x"`, "simulator"},
		{"demo tool by category, group and title", `{"category":"Weather","tool_name":"Skylark Weather","api_name":"Current weather","tool_input":{"city":"Oslo"},"strip":"","toolbench_key":""}`,
			200, "", `"current_weather"`, "simulator"},
		{"empty tool_input means no arguments", `{"category":"Finance","tool_name":"Ledger FX","api_name":"exchange_rates","tool_input":"","strip":"","toolbench_key":""}`,
			200, "", `"exchange_rates"`, "simulator"},
		{"tool_input that is not JSON", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":"{q: go","strip":"","toolbench_key":""}`,
			200, "Tool input parse error...", "", "toolenv"},
		{"tool_input that is an array", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":[1,2],"strip":"","toolbench_key":""}`,
			200, "must be a JSON object", "", "toolenv"},
		{"unknown API names the close one", `{"category":"News_Media","tool_name":"newsapi","api_name":"serch","tool_input":{},"strip":"","toolbench_key":""}`,
			200, `did you mean "search"`, "", "toolenv"},
		{"missing required argument in a strict collection", `{"category":"Weather","tool_name":"Skylark Weather","api_name":"current_weather","tool_input":{"units":"metric"},"strip":"","toolbench_key":""}`,
			200, "missing required argument `city`", "", "toolenv"},
		{"rate limit uses StableToolBench's error string", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":{"q":"a","fail":"rate_limited"},"strip":"","toolbench_key":""}`,
			200, "Too many requests error...", "asked to fail", "toolenv"},
		{"API-level errors pass through", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":{"q":"a","fail":"upstream_error"},"strip":"","toolbench_key":""}`,
			200, "asked to fail with upstream_error", "", "upstream"},
		{"a number string with leading zeros reaches the backend unchanged", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":{"q":"zip","limit":"02134"},"strip":"","toolbench_key":""}`,
			200, "", `"limit":"02134"`, "simulator"},
		{"chat_with_user", `{"category":"x","tool_name":"y","api_name":"chat_with_user","tool_input":"","strip":"","toolbench_key":""}`,
			200, "", "Chat with user.", "toolenv"},
		{"chat_with_user whose input is a message, not JSON", `{"category":"x","tool_name":"y","api_name":"chat_with_user","tool_input":"Which city do you mean?","strip":"","toolbench_key":""}`,
			200, "", "Chat with user.", "toolenv"},
		{"chat_with_user by its function name", `{"category":"x","tool_name":"y","api_name":"chat_with_user_for_y","tool_input":"","strip":"","toolbench_key":""}`,
			200, "", "Chat with user.", "toolenv"},
		{"tool_input that is a JSON string inside the string", `{"category":"News_Media","tool_name":"newsapi","api_name":"search","tool_input":"\"go\"","strip":"","toolbench_key":""}`,
			200, "not a JSON string", "", "toolenv"},
		{"malformed body", `{"category": `, 400, "not a /virtual request", "", "toolenv"},
		{"missing names", `{"tool_input": {}}`, 400, "tool_name api_name", "", "toolenv"},
		{"no category, unambiguous tool and API (StableToolBench accepts \"\")", `{"category":"","tool_name":"newsapi","api_name":"search","tool_input":{"q":"nocat"}}`,
			200, "", `"q":"nocat"`, "simulator"},
		{"huge body", `{"category":"a","tool_name":"b","api_name":"c","tool_input":"` + strings.Repeat("x", 5000) + `"}`, 413, "over the server's limit", "", "toolenv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, srv.URL+"/virtual", "application/json", tt.body)
			if resp.StatusCode != tt.code {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			var ans virtualAnswer
			if err := json.Unmarshal(body, &ans); err != nil || ans.Response == nil {
				t.Fatalf("answer is not {error, response}: %s", body)
			}
			if tt.wantErr == "" && ans.Error != "" {
				t.Fatalf("error = %q", ans.Error)
			}
			if !strings.Contains(strings.NewReplacer("[", "", "]", "").Replace(ans.Error), tt.wantErr) {
				t.Fatalf("error = %q, want it to contain %q", ans.Error, tt.wantErr)
			}
			if !strings.Contains(string(ans.Response), tt.wantResp) {
				t.Fatalf("response = %s, want it to contain %s", ans.Response, tt.wantResp)
			}
			if got := resp.Header.Get("X-Toolenv-Source"); got != tt.wantSource {
				t.Fatalf("source = %q, want %q", got, tt.wantSource)
			}
		})
	}
}

// TestStableToolBenchClient makes the requests StableToolBench's client
// (toolbench/inference/Downstream_tasks/rapidapi.py, _step) makes: the
// function's arguments as the JSON string the model wrote, posted as JSON
// with a toolbench_key header; it reads response.json() and maps the error
// string to its status code.
func TestStableToolBenchClient(t *testing.T) {
	srv, _ := newTestServer(t)
	payload := map[string]any{
		"category":      "News_Media",
		"tool_name":     "newsapi",
		"api_name":      "search",
		"tool_input":    "{\n  \"q\": \"golang\"\n}",
		"strip":         "truncate",
		"toolbench_key": "EMPTY",
	}
	raw, _ := json.Marshal(payload)
	resp, body := post(t, srv.URL+"/virtual", "application/json", string(raw), "toolbench_key", "EMPTY")
	if resp.StatusCode != 200 {
		t.Fatalf("status_code=%d: the client would report code 12", resp.StatusCode)
	}
	var ans map[string]any
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatalf("response.json() fails: %v", err)
	}
	if code := STBCode(ans["error"].(string)); code != 0 {
		t.Fatalf("code = %d", code)
	}
	payload["tool_input"] = `{"q": "x", "fail": "rate_limited"}`
	raw, _ = json.Marshal(payload)
	_, body = post(t, srv.URL+"/virtual", "application/json", string(raw))
	json.Unmarshal(body, &ans)
	if code := STBCode(ans["error"].(string)); code != 9 {
		t.Fatalf("rate limit code = %d, want 9 (%s)", code, body)
	}
}

func TestRESTRoutes(t *testing.T) {
	srv, _ := newTestServer(t)
	// Generic route, GET with query parameters converted by schema.
	resp, body := get(t, srv.URL+"/tools/demo/weather_forecast?city=Paris&days=2")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"days":2`) || resp.Header.Get("X-Toolenv-Source") != "simulator" {
		t.Fatalf("GET: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	// Generic route, POST with a JSON body and a session the server
	// issued.
	resp, _ = post(t, srv.URL+"/sessions", "application/json", `{}`)
	sid := resp.Header.Get(SessionHeader)
	if resp.StatusCode != 201 || sid == "" {
		t.Fatalf("POST /sessions: %d", resp.StatusCode)
	}
	resp, body = post(t, srv.URL+"/tools/demo/convert_currency", "application/json", `{"amount":10,"from":"EUR","to":"USD"}`, SessionHeader, sid)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"session":"`+sid+`"`) || !strings.Contains(string(body), `"frontend":"rest"`) {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	// Bound route with a path parameter.
	resp, body = get(t, srv.URL+"/demo/books/9780441172719")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"isbn":"9780441172719"`) {
		t.Fatalf("bound: %d %s", resp.StatusCode, body)
	}
	tests := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/tools/demo/weather_forecast?city=Paris&days=many", "", 400, "must be an integer"},
		{"GET", "/tools/demo/weather_forecast?city=Paris&days=9", "", 400, "above the maximum"},
		{"GET", "/tools/demo/weather_forecast?days=2&_feedback=none", "", 400, `"error":"invalid arguments"`},
		{"GET", "/tools/demo/get_book?isbn=12", "", 400, "does not match the pattern"},
		{"GET", "/tools/demo/no_such_tool", "", 404, "no tool"},
		{"GET", "/tools/nope/x", "", 404, "loaded collections"},
		{"POST", "/tools/demo/convert_currency", `[1,2]`, 400, "not a JSON object"},
		{"POST", "/demo/books/9780441172719", "", 405, "not allowed"},
		{"GET", "/tools/toolbench/search_for_newsapi?q=a&fail=unauthorized", "", 401, "asked to fail"},
		{"GET", "/nothing/here", "", 404, "no route"},
		{"GET", "/tools/toolbench/search_for_newsapi?q=zip&limit=02134", "", 200, `"limit":2134`},
		{"GET", "/tools/demo/weather_forecast?city=Paris&days=03", "", 200, `"days":3`},
	}
	for _, tt := range tests {
		var resp *http.Response
		var body []byte
		if tt.method == "GET" {
			resp, body = get(t, srv.URL+tt.path)
		} else {
			resp, body = post(t, srv.URL+tt.path, "application/json", tt.body)
		}
		if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s %s: %d %s; want %d containing %q", tt.method, tt.path, resp.StatusCode, body, tt.code, tt.want)
		}
	}
	// Header parameters and a raw body argument at a bound route.
	resp, body = post(t, srv.URL+"/items", "application/json", `["a","b"]`, "X-Trace", "7")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"X-Trace":7`) || !strings.Contains(string(body), `"items":["a","b"]`) {
		t.Errorf("header and body: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, srv.URL+"/items", "application/json", `["a"]`, "X-Trace", "seven")
	if resp.StatusCode != 400 || !strings.Contains(string(body), "X-Trace") {
		t.Errorf("bad header: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, srv.URL+"/items", "application/json", `[1,`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "not JSON") {
		t.Errorf("broken body: %d %s", resp.StatusCode, body)
	}
	resp, _ = get(t, srv.URL+"/tools/toolbench/search_for_newsapi?q=a&fail=rate_limited")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("rate limit: %d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestListingsAndMetrics(t *testing.T) {
	srv, _ := newTestServer(t)
	_, body := get(t, srv.URL+"/collections")
	var colls []collectionInfo
	if err := json.Unmarshal(body, &colls); err != nil || len(colls) != 3 || colls[1].Name != "demo" || colls[1].Tools != 6 {
		t.Fatalf("collections: %s", body)
	}
	_, body = get(t, srv.URL+"/collections/demo/tools?format=openai")
	var fns []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(body, &fns); err != nil || len(fns) != 6 || fns[0].Type != "function" || !bytes.Contains(fns[0].Function.Parameters, []byte(`"required":["city"]`)) {
		t.Fatalf("openai tools: %s", body)
	}
	_, body = get(t, srv.URL+"/collections/demo/tools?format=mcp")
	if !bytes.Contains(body, []byte(`"inputSchema"`)) {
		t.Fatalf("mcp tools: %s", body)
	}
	resp, body := get(t, srv.URL+"/openapi.json")
	if resp.StatusCode != 400 || !bytes.Contains(body, []byte("several collections")) {
		t.Fatalf("openapi without a collection: %d %s", resp.StatusCode, body)
	}
	_, body = get(t, srv.URL+"/collections/demo/openapi.json")
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Servers []struct{ URL string }    `json:"servers"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.OpenAPI != "3.1.0" || doc.Servers[0].URL != srv.URL || doc.Paths["/demo/books/{isbn}"]["get"] == nil {
		t.Fatalf("openapi: %s", body)
	}
	get(t, srv.URL+"/tools/toolbench/search_for_newsapi?q=m")
	get(t, srv.URL+"/tools/toolbench/search_for_newsapi?q=m")
	_, body = get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`toolenv_calls_total{collection="toolbench",frontend="rest",source="cache",status="ok"} 1`,
		`toolenv_cache_lookups_total{result="hit"} 1`,
		`toolenv_cache_lookups_total{result="miss"} 1`,
		`toolenv_call_duration_seconds_bucket`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
	_, body = get(t, srv.URL+"/healthz")
	if !bytes.Contains(body, []byte(`"tools":8`)) {
		t.Errorf("healthz: %s", body)
	}
}

func FuzzDecodeVirtualRequest(f *testing.F) {
	f.Add([]byte(`{"category":"a","tool_name":"b","api_name":"c","tool_input":"{\"x\": 1}"}`))
	f.Add([]byte(`{"category":"a","tool_name":"b","api_name":"c","tool_input":{"y":[1,{"z":null}]}}`))
	f.Add([]byte(`{"category":"a","tool_name":"b","api_name":"c","tool_input":""}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, args, res := DecodeVirtualRequest(body)
		switch {
		case res == nil:
			if req == nil || args == nil || req.ToolName == "" || req.APIName == "" {
				t.Fatalf("accepted an incomplete request: %+v %v", req, args)
			}
			if _, err := toolenv.Canonical(args); err != nil {
				t.Fatalf("arguments do not canonicalize: %v", err)
			}
		case res.Status != toolenv.StatusBadRequest && res.Status != toolenv.StatusInvalidArguments:
			t.Fatalf("unexpected status %s", res.Status)
		case res.Error == "":
			t.Fatal("failure without a message")
		}
		if out := VirtualResponse(&toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: string(body), Source: toolenv.SourcePipeline}); !json.Valid(out) {
			t.Fatalf("wire answer is not JSON: %s", out)
		}
	})
}

// TestBoundRoutePathParameters checks that a path parameter is one
// segment of the request's path as sent, decoded after the split: an
// escaped slash stays inside its parameter.
func TestBoundRoutePathParameters(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("name", &toolenv.Schema{Type: "string"})
	in.Required = []string{"name"}
	files := toolenv.NewCollection("files", "openapi", []*toolenv.Tool{
		{Name: "get_file", Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/files/{name}"}},
		{Name: "get_file_meta", Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/files/{name}/meta"}},
	})
	files.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict}
	reg := invoke.NewRegistry()
	if err := reg.Add(files, toolenv.HandlerFunc(echoBackend)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Pipeline: invoke.New(reg, invoke.Options{}), Registry: reg}))
	defer srv.Close()
	tests := []struct {
		path     string
		code     int
		tool     string
		wantName string
	}{
		{"/files/report.txt", 200, "get_file", "report.txt"},
		{"/files/a%2Fb", 200, "get_file", "a/b"},
		{"/files/AC%2FDC/meta", 200, "get_file_meta", "AC/DC"},
		{"/files/caf%C3%A9%20menu", 200, "get_file", "café menu"},
		{"/files/a/b", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			if tt.code != 200 {
				return
			}
			var got struct {
				Tool string         `json:"tool"`
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Tool != tt.tool || got.Args["name"] != tt.wantName {
				t.Fatalf("got %s(name=%v), want %s(name=%q)", got.Tool, got.Args["name"], tt.tool, tt.wantName)
			}
		})
	}
}
