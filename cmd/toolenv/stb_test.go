package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

// TestEvalSTBPassRateNoLabels: a results file with nothing to score exits
// non-zero saying it has no labels (it printed 0.0 %); bare "Solved"
// labels score 0, as eval_pass_rate.py scores them.
func TestEvalSTBPassRateNoLabels(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.json":    "",
		"object.json":   "{}",
		"norounds.json": `{"1": {"is_solved": {}}}`,
		"bare.json":     `{"1": {"is_solved": {"0": "Solved"}}, "2": {"is_solved": {"0": "AnswerStatus.Solved"}}}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"empty.json", "object.json", "norounds.json"} {
		code, stdout, stderr := run(t, context.Background(), "eval", "stb", "passrate", filepath.Join(dir, name))
		if code == 0 || !strings.Contains(stderr, "no labels") || strings.Contains(stdout, "Solve rate") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want an error saying it has no labels", name, code, stdout, stderr)
		}
	}
	code, stdout, stderr := run(t, context.Background(), "eval", "stb", "passrate", filepath.Join(dir, "bare.json"))
	if code != 0 || !strings.Contains(stdout, "bare.json: 2 queries. Solve rate: 50.0% Std: 0.0%") {
		t.Errorf("bare labels: exit %d, stdout %q, stderr %q; want 50.0%% (a bare Solved scores 0)", code, stdout, stderr)
	}
}

// TestCacheImportNonFinite: a cache file whose answers hold NaN and
// Infinity (as Python's json.dump writes them) is imported entry by entry;
// only the unreadable entry is skipped, and the report counts both.
func TestCacheImportNonFinite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Finance", "stocks_for_Finance", "quote.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	text := `{"{'symbol': 'AAPL'}": {"error": "", "response": {"price": NaN, "high": Infinity}},
 "{'symbol': 'IBM'}": {"error": "", "response": "ok"},
 "{'symbol': 'BAD'}": {"error": "", "response": [1,,2]}}`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "store.db")
	code, stdout, stderr := run(t, context.Background(), "cache", "import", dir, "--store", st, "--json")
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	var rep importReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err, stdout)
	}
	if rep.Files != 1 || rep.Imported != 2 || rep.Skipped != 1 || rep.NonFiniteAsNull != 1 ||
		len(rep.Problems) != 1 || rep.Problems[0].Key != "{'symbol': 'BAD'}" || rep.Problems[0].Err == "" {
		t.Fatalf("report %+v; want 2 imported, the NaN answer counted, the bad entry skipped with its reason", rep)
	}
	code, stdout, stderr = run(t, context.Background(), "cache", "export", "--store", st)
	if code != 0 || !strings.Contains(stdout, `"response":{"price":null,"high":null}`) {
		t.Fatalf("export exit %d: %s %s; want the NaN answer with nulls", code, stdout, stderr)
	}
}

// TestSynthesizedAnswersSaySo: with no simulator, a call that misses the
// cache of an API documented without a response template was answered
// with another call's recorded answer verbatim, and an API whose template
// is "{}" with {}. The answer now carries this call's arguments where the
// record carried its own, and every front-end says it is synthesized:
// REST and /virtual in X-Toolenv-Source, MCP in _meta, and /virtual in a
// "toolenv" member when the request asks with "toolenv_meta" (never
// unasked: StableToolBench's client shows the model the whole object).
func TestSynthesizedAnswersSaySo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tools, cache, st := filepath.Join(dir, "tools"), filepath.Join(dir, "cache"), filepath.Join(dir, "store.db")
	writeTestFile(t, filepath.Join(tools, "Data", "weather_now.json"), `{"tool_name": "Weather Now", "tool_description": "Weather.",
 "api_list": [
  {"name": "forecast", "description": "The forecast.", "method": "GET",
   "required_parameters": [{"name": "city", "type": "STRING", "description": "", "default": ""}],
   "optional_parameters": [{"name": "days", "type": "NUMBER", "description": "", "default": ""}]},
  {"name": "alerts", "description": "Alerts.", "method": "GET", "template_response": {},
   "required_parameters": [{"name": "city", "type": "STRING", "description": "", "default": ""}], "optional_parameters": []}]}`)
	writeTestFile(t, filepath.Join(cache, "Data", "weather_now_for_Data", "forecast.json"),
		`{"{'city': 'Paris', 'days': 3}": {"error": "", "response": {"city": "Paris", "summary": "Sunny in Paris for 3 days"}}}`)
	if code, _, stderr := run(t, ctx, "cache", "import", cache, "--toolbench", tools, "--store", st); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	base, stop := serveInBackground(t, "--toolbench", tools, "--store", st)
	defer stop()

	post := func(body string) (map[string]json.RawMessage, http.Header) {
		t.Helper()
		resp, err := http.Post(base+"/virtual", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m, resp.Header
	}
	const london = `{"category": "Data", "tool_name": "weather_now", "api_name": "forecast", "tool_input": "{\"city\": \"London\", \"days\": 5}", "strip": "", "toolbench_key": ""`
	m, h := post(london + "}")
	if len(m) != 2 || !sameJSON(m["response"], json.RawMessage(`{"city":"London","summary":"Sunny in London for 5 days"}`)) {
		t.Errorf("/virtual answered %v; want the recorded answer adapted to London and 5 days, and only error and response", m)
	}
	if h.Get("X-Toolenv-Source") != "synthesizer" || !strings.Contains(h.Get("X-Toolenv-Warning"), "synthesized") {
		t.Errorf("/virtual headers %v; want it marked synthesized", h)
	}
	m, _ = post(london + `, "toolenv_meta": true}`)
	var meta struct {
		Source   string            `json:"source"`
		Warnings []string          `json:"warnings"`
		Meta     map[string]string `json:"meta"`
	}
	if err := json.Unmarshal(m["toolenv"], &meta); err != nil || meta.Source != "synthesizer" || meta.Meta["synth_rule"] != "nearest" ||
		meta.Meta["synth_from"] != `{"city":"Paris","days":3}` || len(meta.Warnings) == 0 {
		t.Errorf("/virtual with toolenv_meta: %s (%v); want the source, rule and the record it came from", m["toolenv"], err)
	}
	m, _ = post(`{"category": "Data", "tool_name": "weather_now", "api_name": "alerts", "tool_input": {"city": "Oslo"}}`)
	if string(m["response"]) == "{}" || !strings.Contains(string(m["response"]), "Oslo") {
		t.Errorf("an API whose template is {} answered %s", m["response"])
	}

	resp, err := http.Get(base + "/tools/toolbench/forecast_for_weather_now?city=Rome")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Toolenv-Source") != "synthesizer" || !strings.Contains(string(body), "Rome") || strings.Contains(string(body), "Paris") {
		t.Errorf("REST: %s from %q; want Rome's answer marked synthesized", body, resp.Header.Get("X-Toolenv-Source"))
	}

	cs := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"})
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast_for_weather_now", Arguments: map[string]any{"city": "Lima"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["toolenv/source"] != "synthesizer" || !strings.Contains(callText(t, res), "Lima") {
		t.Errorf("MCP: %s with _meta %v; want Lima's answer marked synthesized", callText(t, res), res.Meta)
	}
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	x, errA := toolenv.CanonicalizeJSON(a)
	y, errB := toolenv.CanonicalizeJSON(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// TestLoneSurrogateKeysHit: StableToolBench keys an input holding an
// escaped lone surrogate by str() of what json.loads made of it, the
// surrogate written as its escape ('\ud800'). Imported, such an entry is
// what /virtual answers for that input, from the cache, under either
// spelling of tool_input (an object, or a string holding one).
func TestLoneSurrogateKeysHit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tools, cache, st := filepath.Join(dir, "tools"), filepath.Join(dir, "cache"), filepath.Join(dir, "store.db")
	writeTestFile(t, filepath.Join(tools, "Data", "echo_text.json"), `{"tool_name": "Echo Text", "tool_description": "Echo.",
 "api_list": [{"name": "echo", "description": "Echo.", "method": "GET",
   "required_parameters": [{"name": "q", "type": "STRING", "description": "", "default": ""}], "optional_parameters": []}]}`)
	// As Python's json.dump writes the dict whose key is
	// str({'q': 'a\ud800b'}): the key's backslash escaped once more.
	writeTestFile(t, filepath.Join(cache, "Data", "echo_text_for_Data", "echo.json"),
		`{"{'q': 'a\\ud800b'}": {"error": "", "response": "recorded for the lone surrogate"},
 "{'q': 'a\\\\ud800b'}": {"error": "", "response": "recorded for a backslash"}}`)
	if code, _, stderr := run(t, ctx, "cache", "import", cache, "--toolbench", tools, "--store", st); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	base, stop := serveInBackground(t, "--toolbench", tools, "--store", st)
	defer stop()
	for _, tc := range []struct{ input, want string }{
		{`{"q": "a\ud800b"}`, "recorded for the lone surrogate"},
		{`"{\"q\": \"a\\ud800b\"}"`, "recorded for the lone surrogate"},
		{`{"q": "a\\ud800b"}`, "recorded for a backslash"},
	} {
		body := `{"category": "Data", "tool_name": "echo_text", "api_name": "echo", "tool_input": ` + tc.input + `}`
		resp, err := http.Post(base+"/virtual", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct{ Response string }
		if err := json.Unmarshal(raw, &m); err != nil || m.Response != tc.want || resp.Header.Get("X-Toolenv-Source") != "cache" {
			t.Errorf("tool_input %s: %s from %q; want %q from the cache", tc.input, raw, resp.Header.Get("X-Toolenv-Source"), tc.want)
		}
	}
}
