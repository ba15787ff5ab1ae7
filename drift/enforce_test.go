package drift_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/store"
)

// servedDemo drifts the demo (renames only, so every old call differs by
// a name), and serves the new version over HTTP with the enforcer, the
// cache and backend as "toolenv serve --collection" does.
type servedDemo struct {
	url   string
	l     *drift.Lineage
	st    store.Store
	param struct{ tool, old, new string } // a renamed parameter
	tool  struct{ old, new string }       // a renamed tool
}

func serveDrifted(t *testing.T, mode string, backend toolenv.Handler) *servedDemo {
	t.Helper()
	l, tasks := demoLineage(t)
	d, err := drift.Drift(l, drift.Options{Seed: 4, Tasks: tasks, Operators: []string{"endpoint", "rename", "errors"},
		Rates: map[string]float64{"endpoint": 1, "rename": 1}, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "v2")
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := toolenv.ReadCollection(dir)
	if err != nil {
		t.Fatal(err)
	}
	lin, err := drift.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if backend == nil {
		backend = simulate.NewSynthesizer(simulate.SynthOptions{})
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	enf := drift.NewEnforcer(drift.EnforcerOptions{Cache: st}, lin)
	p := invoke.New(reg, invoke.Options{Cache: st, BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
	ts := httptest.NewServer(server.New(server.Options{Pipeline: p, Registry: reg}))
	t.Cleanup(ts.Close)
	s := &servedDemo{url: ts.URL, l: lin, st: st}
	for _, tc := range d.Step.Tools {
		for _, ch := range tc.Changes {
			if ch.Op == drift.OpRenameParam && s.param.old == "" && tc.Name == tc.Tool {
				s.param.tool, s.param.old, s.param.new = tc.Name, ch.Param, ch.To
			}
			if ch.Op == drift.OpRenameTool && s.tool.old == "" {
				s.tool.old, s.tool.new = ch.From, ch.To
			}
		}
	}
	if s.param.old == "" || s.tool.old == "" {
		t.Fatalf("seed 4 renamed no parameter or tool of an unrenamed tool: %s", mustJSONString(d.Step))
	}
	return s
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// validArgs returns a valid v1 call of tool: its first documented example.
func (s *servedDemo) v1Example(t *testing.T, tool string) map[string]any {
	t.Helper()
	bt := s.l.Base.Tool(tool)
	if bt == nil || len(bt.Examples) == 0 {
		t.Fatalf("no example of %s", tool)
	}
	return bt.Examples[0].Args
}

func post(t *testing.T, u string, body any) (*http.Response, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if !json.Valid(b) {
		t.Fatalf("%s: %s", u, b)
	}
	_ = json.Unmarshal(b, &m) // nil unless an object
	return resp, m
}

func TestStrictModeOverREST(t *testing.T) {
	s := serveDrifted(t, drift.ModeStrict, nil)
	old := s.v1Example(t, s.param.tool)
	for _, tt := range []struct {
		level        string
		wantProblems bool
		namesNew     bool
	}{{"none", false, false}, {"terse", true, false}, {"helpful", true, true}} {
		t.Run(tt.level, func(t *testing.T) {
			resp, body := post(t, s.url+"/tools/demo/"+s.param.tool+"?_feedback="+tt.level, old)
			if resp.StatusCode != http.StatusBadRequest || body["status"] != "invalid_arguments" {
				t.Fatalf("%d %v", resp.StatusCode, body)
			}
			errText, _ := body["error"].(string)
			// The API's new error format (the errors operator ran at rate 1).
			st := s.l.Manifest.Steps[0].Tools[0].Changes[len(s.l.Manifest.Steps[0].Tools[0].Changes)-1].Style
			if _, _, ok := st.Parse(errText); !ok {
				t.Errorf("error %q is not in the v2 format %q", errText, st.Template)
			}
			probs, _ := body["problems"].([]any)
			if (len(probs) > 0) != tt.wantProblems {
				t.Fatalf("problems %v", probs)
			}
			if strings.Contains(errText, "`"+s.param.new+"`") != tt.namesNew {
				t.Errorf("error %q names the new parameter %s: %v, want %v", errText, s.param.new, !tt.namesNew, tt.namesNew)
			}
			if tt.wantProblems {
				var found bool
				for _, p := range probs {
					pm := p.(map[string]any)
					if pm["param"] == s.param.old {
						found = pm["code"] == drift.CodeRenamed && (pm["expected"] == s.param.new) == tt.namesNew
					}
				}
				if !found {
					t.Errorf("no precise problem for %s: %v", s.param.old, probs)
				}
			}
		})
	}
	// The new call works.
	name, args, _ := s.l.Manifest.Forward("v1", s.param.tool, old)
	resp, body := post(t, s.url+"/tools/demo/"+name, args)
	if resp.StatusCode != 200 {
		t.Fatalf("new call: %d %v", resp.StatusCode, body)
	}
	// A renamed tool's old name answers 410 Gone pointing to its successor.
	resp, body = post(t, s.url+"/tools/demo/"+s.tool.old, s.v1Example(t, s.tool.old))
	if resp.StatusCode != http.StatusGone || !strings.Contains(body["error"].(string), s.tool.new) {
		t.Fatalf("old tool: %d %v", resp.StatusCode, body)
	}
}

func TestStrictModeOverVirtual(t *testing.T) {
	s := serveDrifted(t, drift.ModeStrict, nil)
	call := func(api string, input map[string]any) map[string]any {
		bt := s.l.Base.Tool(s.param.tool)
		_, body := post(t, s.url+"/virtual", map[string]any{"category": bt.Category, "tool_name": bt.Group, "api_name": api, "tool_input": input})
		return body
	}
	body := call(s.param.tool, s.v1Example(t, s.param.tool))
	errText, _ := body["error"].(string)
	if !strings.Contains(errText, "renamed to `"+s.param.new+"`") {
		t.Errorf("/virtual error: %v", body)
	}
	// The stub's 410 is StableToolBench's "API not working" (its status 6).
	bt := s.l.Base.Tool(s.tool.old)
	_, body = post(t, s.url+"/virtual", map[string]any{"category": bt.Category, "tool_name": bt.Group, "api_name": s.tool.old, "tool_input": s.v1Example(t, s.tool.old)})
	if e, _ := body["error"].(string); server.STBCode(e) != 6 || !strings.Contains(body["response"].(string), s.tool.new) {
		t.Errorf("/virtual stub: %v", body)
	}
}

func TestCompatModeTranslatesOldCalls(t *testing.T) {
	s := serveDrifted(t, drift.ModeCompat, nil)
	old := s.v1Example(t, s.param.tool)
	raw, _ := json.Marshal(old)
	resp, err := http.Post(s.url+"/tools/demo/"+s.param.tool, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(strings.Join(resp.Header.Values("X-Toolenv-Warning"), " "), "deprecated") {
		t.Fatalf("compat: %d %v", resp.StatusCode, resp.Header)
	}
	// Old tool names are forwarded too.
	raw, _ = json.Marshal(s.v1Example(t, s.tool.old))
	resp, err = http.Post(s.url+"/tools/demo/"+s.tool.old, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Toolenv-Warning") == "" {
		t.Fatalf("compat old tool: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestCacheSurvivesDrift(t *testing.T) {
	s := serveDrifted(t, drift.ModeStrict, nil)
	ctx := context.Background()
	old := s.v1Example(t, s.param.tool)
	canon, _ := toolenv.Canonical(old)
	recorded := json.RawMessage(`{"recorded":"before the drift"}`)
	if _, err := s.st.Put(ctx, &store.Entry{Tool: "demo/" + s.param.tool, Args: string(canon), Status: toolenv.StatusOK, Body: recorded, Origin: "simulator"}); err != nil {
		t.Fatal(err)
	}
	name, args, _ := s.l.Manifest.Forward("v1", s.param.tool, old)
	q := url.Values{}
	resp, body := post(t, s.url+"/tools/demo/"+name+"?"+q.Encode(), args)
	if resp.Header.Get("X-Toolenv-Source") != "cache" || body["recorded"] != "before the drift" {
		t.Fatalf("the v2 call missed the v1 entry: %s %v", resp.Header.Get("X-Toolenv-Source"), body)
	}
}

// TestSimulatorSeesNewDocs checks that a call translated to the base tool
// carries the new documentation: the simulator's prompt shows the v2
// parameter names.
func TestSimulatorSeesNewDocs(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": "{\"ok\": true}"}`}))
	defer srv.Close()
	sim, err := simulate.New(llm.New(srv.URL(), llm.Options{MaxRetries: -1}), simulate.Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	s := serveDrifted(t, drift.ModeStrict, sim)
	name, args, _ := s.l.Manifest.Forward("v1", s.param.tool, s.v1Example(t, s.param.tool))
	resp, body := post(t, s.url+"/tools/demo/"+name, args)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, body)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the simulator was not asked")
	}
	var prompt strings.Builder
	for _, m := range reqs[0].Messages {
		prompt.WriteString(m.Content)
	}
	if !strings.Contains(prompt.String(), s.param.new) {
		t.Errorf("the simulator's prompt does not show the v2 parameter %s:\n%s", s.param.new, prompt.String())
	}
}

// TestCompatAnswersInTheOldFormat: a v1 call in compat mode gets the
// response in v1's field names, a v2 call in v2's, from the same cache
// entry.
func TestCompatAnswersInTheOldFormat(t *testing.T) {
	ctx := context.Background()
	l, _ := demoLineage(t)
	d, err := drift.Drift(l, drift.Options{Seed: 2, Operators: []string{"response", "rename"}, Rates: map[string]float64{"response": 1, "rename": 1}, Mode: drift.ModeCompat})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "v2")
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _ := toolenv.ReadCollection(dir)
	lin, err := drift.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	var field drift.Change
	for _, tc := range d.Step.Tools {
		for _, ch := range tc.Changes {
			if tc.Tool == "current_weather" && ch.Op == drift.OpRenameField && ch.Path == "" {
				field = ch
			}
		}
	}
	if field.From == "" {
		t.Fatalf("seed 2 renamed no top-level field of current_weather: %s", mustJSONString(d.Step))
	}
	st, _ := store.Open(ctx, ":memory:", store.Options{})
	defer st.Close()
	old := map[string]any{"city": "Paris"}
	canon, _ := toolenv.Canonical(old)
	st.Put(ctx, &store.Entry{Tool: "demo/current_weather", Args: string(canon), Status: toolenv.StatusOK, Body: json.RawMessage(`{"` + field.From + `": 1}`), Origin: "simulator"})
	reg := invoke.NewRegistry()
	reg.Add(c, simulate.NewSynthesizer(simulate.SynthOptions{}))
	enf := drift.NewEnforcer(drift.EnforcerOptions{Cache: st}, lin)
	h := invoke.New(reg, invoke.Options{Cache: st, BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
	res := h.Invoke(ctx, &toolenv.Call{Tool: c.Tool("current_weather"), Collection: c, Args: old})
	if res.Source != toolenv.SourceCache || string(res.Body) != `{"`+field.From+`": 1}` || len(res.Warnings) == 0 {
		t.Fatalf("v1 call: %s %s %v", res.Source, res.Body, res.Warnings)
	}
	name, args, _ := lin.Manifest.Forward("v1", "current_weather", old)
	res = h.Invoke(ctx, &toolenv.Call{Tool: c.Tool(name), Collection: c, Args: args})
	if res.Source != toolenv.SourceCache || string(res.Body) != `{"`+field.To+`": 1}` || len(res.Warnings) != 0 {
		t.Fatalf("v2 call: %s %s %v", res.Source, res.Body, res.Warnings)
	}
}

// TestLenientStillRejectsOldNames: a drifted collection validated
// leniently (undocumented arguments pass) still rejects an argument under
// a name an older version had.
func TestLenientStillRejectsOldNames(t *testing.T) {
	l, _ := demoLineage(t)
	d, err := drift.Drift(l, drift.Options{Seed: 4, Operators: []string{"rename"}, Rates: map[string]float64{"rename": 1}, Validation: toolenv.ValidationLenient})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "v2")
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _ := toolenv.ReadCollection(dir)
	lin, err := drift.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	reg.Add(c, simulate.NewSynthesizer(simulate.SynthOptions{}))
	enf := drift.NewEnforcer(drift.EnforcerOptions{}, lin)
	h := invoke.New(reg, invoke.Options{BeforeValidate: []toolenv.Middleware{enf.Before()}, AfterValidate: []toolenv.Middleware{enf.After()}})
	res := h.Invoke(context.Background(), &toolenv.Call{Tool: c.Tool("current_weather"), Collection: c, Args: map[string]any{"city": "Paris", "extra": 1}})
	if res.Status != toolenv.StatusInvalidArguments || len(res.Problems) != 1 || res.Problems[0].Code != drift.CodeRenamed {
		t.Fatalf("%s %s %v", res.Status, res.Error, res.Problems)
	}
}
