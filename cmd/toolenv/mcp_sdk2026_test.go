package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/npmtest"
)

// sdk2026Report is what sdk2026-check.mjs saw.
type sdk2026Report struct {
	Protocol    string   `json:"protocol"`
	Tools       int      `json:"tools"`
	Call        string   `json:"call"`
	UnknownCode int      `json:"unknownCode"`
	Elicit      string   `json:"elicit"`
	Asked       int      `json:"asked"`
	Problems    []string `json:"problems"`
}

// TestMCPTypeScriptSDK2026 drives toolenv serve with the official
// TypeScript SDK's v2 client (@modelcontextprotocol/client, pinned in
// testdata/npm), pinned to MCP 2026-07-28 (no initialize, no session):
// on the demo, a call and an unknown tool (-32602); behind toolenv
// --mcp-server, a tool of the suite's reference server asking for input
// reaches the client, which answers it — the stateless server's
// input-required result passed through as it is, and the stateful
// server's elicitation request turned into one (the call parked until
// the client's answer).
func TestMCPTypeScriptSDK2026(t *testing.T) {
	t.Parallel() // waits on the node clients
	tools := npmtest.Require(t)
	script := filepath.Join(tools.ScriptDir(t), "sdk2026-check.mjs")
	src, err := os.ReadFile("testdata/mcp/sdk2026-check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ref := referenceServer(t)
	run := func(t *testing.T, cfg map[string]any) sdk2026Report {
		t.Helper()
		raw, _ := json.Marshal(cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := npmtest.Run(tools.Script(ctx, script, string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		var rep sdk2026Report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if len(rep.Problems) > 0 {
			t.Fatalf("the TypeScript SDK saw problems: %v (report %+v)", rep.Problems, rep)
		}
		if rep.Protocol != "2026-07-28" {
			t.Fatalf("negotiated %q", rep.Protocol)
		}
		return rep
	}
	t.Run("demo", func(t *testing.T) {
		base, stop := serveInBackground(t, "--store", ":memory:")
		defer stop()
		rep := run(t, map[string]any{"url": base + "/mcp",
			"call":    map[string]any{"name": "current_weather", "args": map[string]any{"city": "Paris"}, "want": "Paris"},
			"unknown": "curent_weather"})
		if rep.Tools != 6 || rep.UnknownCode != -32602 {
			t.Errorf("report %+v", rep)
		}
	})
	for _, tc := range []struct {
		name      string
		stateless bool
		elicit    map[string]any
	}{
		{"proxy, input-required result passed through", true, map[string]any{"name": "test_input_required_result_elicitation", "args": map[string]any{},
			"content": map[string]any{"name": "ts-client"}, "want": "Hello, ts-client!"}},
		{"proxy, an elicitation request parked", false, map[string]any{"name": "test_elicitation", "args": map[string]any{"message": "Your username?"},
			"content": map[string]any{"username": "ts-client"}, "want": "username:ts-client"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := startReference(t, ref, tc.stateless)
			base, stop := serveInBackground(t, "--store", ":memory:", "--mcp-server", "ref="+url)
			defer stop()
			rep := run(t, map[string]any{"url": base + "/mcp", "elicit": tc.elicit})
			t.Logf("%+v", rep)
		})
	}
}
