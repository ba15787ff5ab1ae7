package environment

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestOpenNil: the zero configuration serves the demo from memory, through
// the pipeline and every HTTP front-end.
func TestOpenNil(t *testing.T) {
	ctx := context.Background()
	env, err := Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Store.Path() != ":memory:" || len(env.Collections()) != 1 || env.Collections()[0].Name != "demo" || len(env.Tasks["demo"]) == 0 {
		t.Fatalf("store %s, collections %v", env.Store.Path(), env.Collections())
	}
	call, res := env.Registry.NewCall("demo", "weather_forecast", map[string]any{"city": "Paris", "days": 2})
	if res != nil {
		t.Fatal(res.Error)
	}
	if res := env.Pipeline.Invoke(ctx, call); res.Status != toolenv.StatusOK {
		t.Fatalf("%+v", res)
	}
	h, err := env.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for path, want := range map[string]string{"/collections": `"demo"`, "/metrics": `toolenv_calls_total{collection="demo"`, "/collections/demo/openapi.json": `"openapi"`} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200s", path, resp.StatusCode, body)
		}
	}
	if h2, _ := env.Handler(); h2 != h {
		t.Error("Handler built twice")
	}
}

// TestOpenInvalid: a value no component accepts is an invalid-arguments
// error naming the key and its flag, before anything is opened.
func TestOpenInvalid(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Drift: DriftConfig{Mode: "loose"}}, `drift.mode (--drift-mode) "loose": want strict or compat`},
		{Config{Feedback: "all"}, `feedback (--feedback) "all"`},
		{Config{MCP: MCPConfig{Names: "short"}}, "mcp.names (--mcp-names)"},
		{Config{MCP: MCPConfig{EmbedURL: "http://127.0.0.1:9/v1"}}, "mcp.embed_url (--search-embed-url) needs mcp.embed_model (--search-embed-model)"},
		{Config{Simulator: SimulatorConfig{URL: "http://127.0.0.1:9/v1"}}, "simulator.url (--llm-url) needs simulator.model (--llm-model)"},
		{Config{Faults: `{"rules": [{"tool": "*", "error_rate": 2}]}`}, "faults (--faults)"},
		{Config{Repair: RepairConfig{Base: true}}, "repair.base (--repair): no drifted collection is loaded"},
		{Config{Failover: FailoverConfig{Mappings: "/nonexistent/m.json"}}, "failover.mappings (--failover) /nonexistent/m.json"},
	} {
		env, err := Open(context.Background(), &tc.cfg)
		if err == nil {
			env.Close()
			t.Errorf("%+v: no error", tc.cfg)
			continue
		}
		if toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %s: %v\nwant %q", toolenv.StatusOf(err), err, tc.want)
		}
	}
}
