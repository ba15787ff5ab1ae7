package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// TestFrontEndsAgreeOnAnswersThatBreakTheirSchema: an answer that breaks
// its tool's documented output schema is reported by REST (200, and a
// warning) and MCP (an error result, since its clients reject such
// structured content) with the same words, which say who made it: an
// answer of the real API (live, or recorded from it) is the API's, and
// one toolenv made — its offline synthesizer's (here, for a schema no
// answer can keep), a recorded answer of its simulator — is toolenv's,
// never blamed on the API. /virtual warns the same way.
func TestFrontEndsAgreeOnAnswersThatBreakTheirSchema(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"one"}`)
	}))
	defer up.Close()
	idSchema := `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`
	// No string is at least 5 and at most 2 characters long: the
	// synthesizer cannot keep this schema.
	impossible := `{"type":"object","properties":{"code":{"type":"string","minLength":5,"maxLength":2}},"required":["code"]}`
	tools := []*toolenv.Tool{
		{Name: "live_api", Description: "the API", Input: toolenv.ObjectSchema(), Output: mustSchema(t, idSchema),
			Binding: &toolenv.Binding{Method: "GET", Path: "/live", BaseURL: up.URL}},
		{Name: "made_up", Description: "no API: synthesized", Input: toolenv.ObjectSchema(), Output: mustSchema(t, impossible)},
		{Name: "simulated", Description: "a recorded answer of the simulator", Input: toolenv.ObjectSchema(), Output: mustSchema(t, idSchema)},
		{Name: "recorded_api", Description: "a recorded answer of the API", Input: toolenv.ObjectSchema(), Output: mustSchema(t, idSchema)},
	}
	c := toolenv.NewCollection("checks", "openapi", tools)
	c.Policy.Cache = true
	reg := invoke.NewRegistry()
	backend, err := virtual.Build(virtual.Options{UpstreamDirect: true, Tools: c.Tools})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(c, backend); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for tool, origin := range map[string]string{"checks/simulated": "simulator", "checks/recorded_api": "upstream"} {
		if _, err := st.Put(context.Background(), &store.Entry{Tool: tool, Args: `{}`, Status: toolenv.StatusOK, Body: []byte(`{"id":"two"}`), Origin: origin}); err != nil {
			t.Fatal(err)
		}
	}
	p := invoke.New(reg, invoke.Options{Cache: st})
	ms, err := NewMCPServer(MCPOptions{Pipeline: p, Registry: reg, SearchAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Pipeline: p, Registry: reg, MCP: NewMCPHandler(ms, MCPHTTPOptions{})}))
	defer srv.Close()
	cs := connectWith(t, ms, "", nil, "2025-11-25")

	for _, tc := range []struct {
		tool  string
		byAPI bool // the API made the answer (else toolenv did)
		maker string
	}{
		{"live_api", true, "the API"}, // live on REST, then recorded: the API's either way
		{"recorded_api", true, "a recorded answer of the API"},
		{"made_up", false, "made by toolenv's offline synthesizer (not the API)"},
		{"simulated", false, "made by a recorded answer of toolenv's simulator (a model playing the API, not the API)"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			attributed := func(front, text string) {
				t.Helper()
				if !strings.Contains(text, tc.maker) {
					t.Errorf("%s does not say the answer was %s: %q", front, tc.maker, text)
				}
				if tc.byAPI == strings.Contains(text, "toolenv") {
					t.Errorf("%s attributes the answer wrongly (made by the API: %v): %q", front, tc.byAPI, text)
				}
			}
			resp, err := http.Get(srv.URL + "/tools/checks/" + tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			var warning string
			for _, w := range resp.Header.Values("X-Toolenv-Warning") {
				if strings.HasPrefix(w, "output_mismatch: ") {
					warning = w
				}
			}
			if resp.StatusCode != 200 || warning == "" {
				t.Fatalf("REST: %d, warnings %q; want 200 and an output_mismatch warning", resp.StatusCode, resp.Header.Values("X-Toolenv-Warning"))
			}
			attributed("REST", warning)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool})
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(t, res)
			if !res.IsError || !strings.HasPrefix(text, "error (output_mismatch): ") {
				t.Fatalf("MCP: isError %v, %q; want an output_mismatch error result", res.IsError, text)
			}
			attributed("MCP", text)
			// The same problem named on both.
			restProblem := warning[strings.Index(warning, "at '"):]
			if i := strings.IndexAny(restProblem, ";\n"); i >= 0 {
				restProblem = restProblem[:i]
			}
			if !strings.Contains(text, restProblem) {
				t.Errorf("REST names %q, MCP does not: %q", restProblem, text)
			}
			vresp, err := http.Post(srv.URL+"/virtual", "application/json", strings.NewReader(
				`{"category":"checks","tool_name":"checks","api_name":"`+tc.tool+`","tool_input":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, vresp.Body)
			vresp.Body.Close()
			vw := strings.Join(vresp.Header.Values("X-Toolenv-Warning"), "\n")
			if !strings.Contains(vw, "output_mismatch: ") {
				t.Fatalf("/virtual: %d, warnings %q", vresp.StatusCode, vw)
			}
			attributed("/virtual", vw)
		})
	}
}
