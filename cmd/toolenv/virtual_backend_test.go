package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolenv/toolenv/llm/llmtest"
)

// TestServeVirtualStages serves the demo collection with a RapidAPI proxy
// that does not know the API and an OpenAI-compatible simulator: /virtual
// answers from the simulator after the upstream failed, then from the
// cache; with a bad proxy URL serve refuses to start.
func TestServeVirtualStages(t *testing.T) {
	var proxyCalls atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxyCalls.Add(1)
		_, _ = io.WriteString(w, `{"error": "", "response": "{'message': \"API doesn't exists\"}"}`)
	}))
	defer proxy.Close()
	sim := llmtest.New(llmtest.Script(llmtest.Reply{Content: `{"error": "", "response": "{\"city\": \"Paris\", \"temperature_c\": 21.5, \"conditions\": \"sunny\"}"}`}))
	defer sim.Close()

	store := filepath.Join(t.TempDir(), "store.db")
	base, stop := serveInBackground(t, "--store", store, "--upstream-url", proxy.URL+"/rapidapi", "--llm-url", sim.URL(), "--llm-model", "MirrorAPI")
	req := map[string]any{"category": "Weather", "tool_name": "Skylark Weather", "api_name": "current_weather",
		"tool_input": `{"city": "Paris"}`, "strip": "", "toolbench_key": "k"}
	ans, hdr := postVirtual(t, base, req)
	if ans["error"] != "" || hdr.Get("X-Toolenv-Source") != "simulator" || !strings.Contains(ans["response"].(string), "sunny") {
		t.Fatalf("answer %v from %s", ans, hdr.Get("X-Toolenv-Source"))
	}
	if proxyCalls.Load() != 1 || len(sim.Requests()) != 1 {
		t.Fatalf("proxy called %d times, simulator %d", proxyCalls.Load(), len(sim.Requests()))
	}
	if _, hdr := postVirtual(t, base, req); hdr.Get("X-Toolenv-Source") != "cache" {
		t.Fatalf("second call from %s, want the cache", hdr.Get("X-Toolenv-Source"))
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}

	code, _, errs := run(t, t.Context(), "serve", "--store", filepath.Join(t.TempDir(), "s.db"), "--upstream-url", "8.218.239.54:8080")
	if code != 2 || !strings.Contains(errs, "http://") {
		t.Fatalf("a proxy URL without a scheme: exit %d, %s", code, errs)
	}
}
