package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
)

// stbProxy is a StableToolBench/RapidAPI proxy on loopback: one POST per
// call with the API named in the body, answered with {"error",
// "response"}. Forecast refuses a call without its city as RapidAPI APIs
// do, in the response.
type stbProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []map[string]any
	keys []string
}

func newSTBProxy(t *testing.T) *stbProxy {
	p := &stbProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.seen = append(p.seen, body)
		p.keys = append(p.keys, r.Header.Get("toolbench_key"))
		p.mu.Unlock()
		in, _ := body["tool_input"].(map[string]any)
		var resp string
		switch body["api_name"] {
		case "forecast":
			city, _ := in["city"].(string)
			if city == "" {
				resp = `{"message": "Invalid parameter: city is required"}`
				break
			}
			resp = fmt.Sprintf(`{"city": %q, "days": [{"day": 1, "max": 21}]}`, city)
		case "list_cities":
			resp = `{"cities": ["Paris", "Oslo"]}`
		default:
			json.NewEncoder(w).Encode(map[string]any{"error": "API doesn't exists", "response": ""})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"error": "", "response": resp})
	}))
	t.Cleanup(p.Close)
	return p
}

// TestCollectThroughProxy mirrors ToolBench documentation through a
// StableToolBench proxy, as "toolenv mirror --toolbench DOCS
// --upstream-url URL" does (mirror.OpenSources): every call reaches the
// proxy with the documented category, tool and API names and the key,
// and each answer is stored with its Appendix D class.
func TestCollectThroughProxy(t *testing.T) {
	ctx := context.Background()
	proxy := newSTBProxy(t)
	api := func(name, desc string, required, optional []map[string]any) map[string]any {
		return map[string]any{"category_name": "Weather", "tool_name": "Weather Service", "api_name": name, "api_description": desc,
			"required_parameters": required, "optional_parameters": optional, "method": "GET"}
	}
	city := map[string]any{"name": "city", "type": "STRING", "description": "The city.", "default": "Paris"}
	days := map[string]any{"name": "days", "type": "NUMBER", "description": "Days ahead.", "default": "1"}
	queries := []map[string]any{{"query": "What is the weather in Paris?", "query_id": 1, "api_list": []any{
		api("forecast", "The forecast of a city.", []map[string]any{city}, []map[string]any{days}),
		api("list_cities", "The cities the service knows.", []map[string]any{}, []map[string]any{}),
	}, "relevant APIs": [][]string{{"Weather Service", "forecast"}}}}
	raw, _ := json.Marshal(queries)
	docs := filepath.Join(t.TempDir(), "G1_tool.json")
	if err := os.WriteFile(docs, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := mirror.OpenSources(ctx, mirror.SourceConfig{ToolBench: []string{docs}, UpstreamURL: proxy.URL + "/rapidapi", ToolbenchKey: "key-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if len(src.Tools) != 2 {
		t.Fatalf("%d tools loaded", len(src.Tools))
	}
	e := &mirror.Engine{Store: newStore(t), Dataset: "stb", Tools: src.Tools, Tasks: src.Tasks, Collections: src.Collections, Invoker: src.Invoker}
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 6, Invalid: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := e.Collect(ctx, mirror.CollectOptions{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.Called == 0 || st.Called != len(proxy.seen) || pending(t, e) != 0 {
		t.Fatalf("collect: %+v; the proxy saw %d calls", st, len(proxy.seen))
	}
	for i, body := range proxy.seen {
		if proxy.keys[i] != "key-1" || body["toolbench_key"] != "key-1" || body["category"] != "Weather" || body["tool_name"] == "" {
			t.Fatalf("proxy request %d: %v (key header %q)", i, body, proxy.keys[i])
		}
	}
	var ok, refused int
	for _, tool := range src.Tools {
		for _, p := range pairsOf(t, e, tool.ID) {
			if p.Source != string(toolenv.SourceUpstream) || p.Attempts != 1 {
				t.Errorf("%s %s: source %s, %d attempts", p.Tool, p.Args, p.Source, p.Attempts)
			}
			switch {
			case p.Class == "success":
				ok++
			case p.Class == "parameter_change" && strings.Contains(string(p.Body)+p.Error, "city is required"):
				refused++
			default:
				t.Errorf("%s %s: class %s (%s): %s %s", p.Tool, p.Args, p.Class, p.Rule, p.Body, p.Error)
			}
		}
	}
	if ok == 0 || refused == 0 {
		t.Fatalf("%d successes, %d refusals of a call without its city", ok, refused)
	}
}
