package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/toolbench"
)

// toolbenchTool is a ToolBench API as the ToolBench loader makes it
// (StableToolBench G1, TheClique "Songkick concert").
func toolbenchTool() *toolenv.Tool {
	doc := toolbench.APIDoc{CategoryName: "Data", ToolName: "TheClique", APIName: "Songkick concert", APIDescription: "Concert info",
		RequiredParameters: []toolbench.ParamDoc{{Name: "id_conc", Type: "STRING", Default: "40698227-lumineers-at-aware-super-theatre"}}, Method: "GET"}
	t := doc.Tool()
	t.Collection = "toolbench"
	t.ID = toolenv.ToolID(t.Collection, t.Name)
	return t
}

// proxyServer imitates StableToolBench's RapidAPI proxy: it records the
// requests it gets and answers with handler.
type proxyServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	header http.Header
	body   map[string]any
}

// requests returns the requests recorded so far.
func (p *proxyServer) requests() []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recorded(nil), p.reqs...)
}

func newProxy(t *testing.T, handler http.HandlerFunc) *proxyServer {
	t.Helper()
	p := &proxyServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		p.mu.Lock()
		p.reqs = append(p.reqs, recorded{header: r.Header.Clone(), body: body})
		p.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// answer writes the proxy's {"error", "response"} envelope.
func answer(errMsg string, response any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"error": errMsg, "response": response})
	}
}

func status(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

const html500 = `<!DOCTYPE html>
<html><head><title>500 Internal Server Error</title></head>
<body><h1>Internal Server Error</h1><p>The server encountered an internal error and was unable to complete your request.</p></body></html>`

const html404 = `<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>`

func TestProxyClasses(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	cases := []struct {
		name       string
		handler    http.HandlerFunc
		wantClass  Class
		wantStatus toolenv.Status
		wantRule   string
		wantBody   string // exact body on success
	}{
		{"success object", answer("", map[string]any{"date": "2023-04-01", "name": "The Lumineers"}), ClassSuccess, toolenv.StatusOK, "success", `{"date":"2023-04-01","name":"The Lumineers"}`},
		{"success text", answer("", "{'date': '2023-04-01', 'name': 'The Lumineers', 'venue_url': 'https://www.songkick.com/venues/1'}"), ClassSuccess, toolenv.StatusOK, "success",
			`"{'date': '2023-04-01', 'name': 'The Lumineers', 'venue_url': 'https://www.songkick.com/venues/1'}"`},
		{"404 page", answer("", html404), ClassNotFound, toolenv.StatusNotFound, "text_not_found", ""},
		{"api does not exist", answer("", `{'message': "API doesn't exists"}`), ClassNotFound, toolenv.StatusNotFound, "text_not_found", ""},
		{"rate limit", answer("Rate limit per minute error...", "{'message': 'You have exceeded the rate limit per minute for your plan, BASIC, by the API provider'}"), ClassNotConnected, toolenv.StatusRateLimited, "proxy_label_rate_limit", ""},
		{"rate limit 429", status(http.StatusTooManyRequests, "application/json", `{"message":"Too many requests"}`), ClassNotConnected, toolenv.StatusRateLimited, "http_429", ""},
		{"unauthorized", answer("Unauthorized error...", "{'message': 'Invalid API key. Go to https://docs.rapidapi.com/docs/keys for more info.'}"), ClassNotAuthorized, toolenv.StatusUnauthorized, "proxy_label_unauthorized", ""},
		{"unsubscribed text", answer("", "{'message': 'You are not subscribed to this API.'}"), ClassNotAuthorized, toolenv.StatusUnauthorized, "text_not_authorized", ""},
		{"html 500 page", status(http.StatusInternalServerError, "text/html", html500), ClassNotConnected, toolenv.StatusUpstreamError, "http_5xx", ""},
		{"parse error", answer("Function executing from my_tools.Data.theclique.api import songkick_concert error...\nExpecting value: line 1 column 1 (char 0)", ""), ClassParsingError, toolenv.StatusUpstreamError, "parsing_error", ""},
		{"parameter change", answer("Function executing from my_tools.Data.theclique.api import songkick_concert error...\nsongkick_concert() missing 1 required positional argument: 'id_conc'", ""), ClassParameterChange, toolenv.StatusInvalidArguments, "text_parameter", ""},
		{"empty", answer("", ""), ClassOther, toolenv.StatusUpstreamError, "empty_response", ""},
		{"not an envelope", status(http.StatusOK, "text/html", "<html>maintenance</html>"), ClassOther, toolenv.StatusUpstreamError, "proxy_bad_envelope", ""},
		{"slow server", slow, ClassNotConnected, toolenv.StatusTimeout, "transport_timeout", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, tc.handler)
			// Only the slow server meets the short timeout; the others get
			// one a loaded machine cannot reach, so they never time out.
			timeout := time.Minute
			if tc.wantRule == "transport_timeout" {
				timeout = 300 * time.Millisecond
			}
			b, err := New(Config{ProxyURL: p.URL + "/rapidapi", ToolbenchKey: "key-123", Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			call := &toolenv.Call{Tool: toolbenchTool(), Args: map[string]any{"id_conc": "40698227-lumineers", "n": json.Number("5")}}
			// The slow server's class and status prove its timeout fired
			// (it would answer after 5s); no wall-clock bound is asserted.
			r := b.Invoke(context.Background(), call)
			if r.Meta[MetaClass] != string(tc.wantClass) || r.Status != tc.wantStatus || r.Meta[MetaRule] != tc.wantRule {
				t.Fatalf("got class %s status %s rule %s (error %q), want %s %s %s", r.Meta[MetaClass], r.Status, r.Meta[MetaRule], r.Error, tc.wantClass, tc.wantStatus, tc.wantRule)
			}
			if r.Source != toolenv.SourceUpstream {
				t.Errorf("Source = %q", r.Source)
			}
			if tc.wantClass == ClassSuccess {
				if string(r.Body) != tc.wantBody {
					t.Errorf("Body = %s, want %s", r.Body, tc.wantBody)
				}
				if r.Meta[MetaCacheable] == "false" || r.Error != "" {
					t.Errorf("a success must be cacheable and error-free: %+v", r)
				}
			} else {
				if r.Meta[MetaCacheable] != "false" {
					t.Errorf("a failure must be marked not cacheable: %+v", r.Meta)
				}
				if r.Error == "" || !strings.Contains(r.Error, "songkick_concert_for_theclique") {
					t.Errorf("Error %q should name the tool", r.Error)
				}
			}
			if tc.wantStatus == toolenv.StatusRateLimited && tc.wantRule == "http_429" && r.RetryAfter != 7*time.Second {
				t.Errorf("RetryAfter = %v, want 7s", r.RetryAfter)
			}
			// The proxy got StableToolBench's request.
			reqs := p.requests()
			if len(reqs) != 1 {
				t.Fatalf("proxy got %d requests", len(reqs))
			}
			got := reqs[0]
			if got.header.Get("toolbench_key") != "key-123" || got.header.Get("Content-Type") != "application/json" {
				t.Errorf("headers = %v", got.header)
			}
			want := map[string]any{"category": "Data", "tool_name": "theclique", "api_name": "songkick_concert", "strip": "", "toolbench_key": "key-123",
				"tool_input": map[string]any{"id_conc": "40698227-lumineers", "n": float64(5)}}
			if gb, _ := json.Marshal(got.body); string(gb) != mustJSON(want) {
				t.Errorf("proxy request = %s, want %s", gb, mustJSON(want))
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestConnectionRefused(t *testing.T) {
	addr := deadport.Addr(t)
	b, err := New(Config{ProxyURL: "http://" + addr + "/rapidapi", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// transport_failed (not transport_timeout) proves the refusal was
	// reported as such rather than waited out; no wall-clock bound is
	// asserted.
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: toolbenchTool(), Args: map[string]any{"id_conc": "x"}})
	if r.Meta[MetaClass] != string(ClassNotConnected) || r.Meta[MetaRule] != "transport_failed" || r.Status != toolenv.StatusUnavailable {
		t.Fatalf("got %s/%s/%s (%s), want not_connected/transport_failed/unavailable", r.Meta[MetaClass], r.Meta[MetaRule], r.Status, r.Error)
	}
}

func TestCallerKeyForwarded(t *testing.T) {
	p := newProxy(t, answer("", "ok"))
	b, _ := New(Config{ProxyURL: p.URL})
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: toolbenchTool(), Meta: map[string]string{CallMetaToolbenchKey: "client-key"}})
	if !r.OK() {
		t.Fatalf("result %+v", r)
	}
	req := p.requests()[0]
	if req.header.Get("toolbench_key") != "client-key" || req.body["toolbench_key"] != "client-key" {
		t.Errorf("the caller's key was not forwarded: %v %v", req.header, req.body)
	}
	if m, ok := req.body["tool_input"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("nil args must be sent as {}: %v", req.body["tool_input"])
	}
}

func TestCanceledCall(t *testing.T) {
	p := newProxy(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	b, _ := New(Config{ProxyURL: p.URL, Timeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	r := b.Invoke(ctx, &toolenv.Call{Tool: toolbenchTool()})
	if r.Status != toolenv.StatusCanceled {
		t.Fatalf("Status = %s (%s), want canceled", r.Status, r.Error)
	}
}

func TestNotConfigured(t *testing.T) {
	b, _ := New(Config{})
	if b.Configured() {
		t.Fatal("an empty config must not be configured")
	}
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: toolbenchTool()})
	if r.Status != toolenv.StatusUnavailable || r.Meta[MetaRule] != "not_configured" || r.Meta[MetaCacheable] != "false" {
		t.Fatalf("got %+v", r)
	}
	if r := b.Invoke(context.Background(), &toolenv.Call{}); r.Status != toolenv.StatusUnknownTool {
		t.Fatalf("a call without a tool: %+v", r)
	}
	if _, err := New(Config{ProxyURL: "8.218.239.54:8080"}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Fatalf("a proxy URL without a scheme must be refused with a hint, got %v", err)
	}
}

// TestDirect calls a tool's own URL: arguments go where the binding says
// and HTTP answers are classified.
func TestDirect(t *testing.T) {
	var mu sync.Mutex
	var last *http.Request
	var lastBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		last, lastBody = r, string(data)
		mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/items/missing"):
			status(http.StatusNotFound, "text/html", html404)(w, r)
		case r.Header.Get("X-Api-Key") != "secret":
			status(http.StatusUnauthorized, "application/json", `{"message":"Unauthorized"}`)(w, r)
		case r.URL.Path == "/v1/broken":
			status(http.StatusBadGateway, "text/html", "<html>502 Bad Gateway</html>")(w, r)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id": "42", "ok": true}`)
		}
	}))
	defer srv.Close()
	seen := func() (*http.Request, string) {
		mu.Lock()
		defer mu.Unlock()
		return last, lastBody
	}

	in := toolenv.ObjectSchema()
	tool := &toolenv.Tool{ID: "demo/get_item", Name: "get_item", Input: in,
		Binding: &toolenv.Binding{Method: "GET", Path: "/v1/items/{item_id}", BaseURL: srv.URL, In: map[string]string{"trace": "header"}}}
	post := &toolenv.Tool{ID: "demo/create", Name: "create", Input: in,
		Binding: &toolenv.Binding{Method: "POST", Path: "/v1/items", BaseURL: srv.URL}}
	broken := &toolenv.Tool{ID: "demo/broken", Name: "broken", Input: in,
		Binding: &toolenv.Binding{Method: "GET", Path: "/v1/broken", BaseURL: srv.URL}}

	b, err := New(Config{Direct: true, Headers: map[string]string{"X-Api-Key": "secret"}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("get", func(t *testing.T) {
		r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"item_id": "a b/c", "limit": json.Number("10"), "tags": []any{"x", "y"}, "trace": "t-1"}})
		if !r.OK() || string(r.Body) != `{"id": "42", "ok": true}` || r.Meta[MetaMode] != ModeDirect {
			t.Fatalf("got %+v body %s", r, r.Body)
		}
		last, _ := seen()
		if last.URL.EscapedPath() != "/v1/items/a%20b%2Fc" || last.URL.RawQuery != "limit=10&tags=x&tags=y" || last.Header.Get("trace") != "t-1" {
			t.Errorf("request = %s %s?%s trace=%q", last.Method, last.URL.EscapedPath(), last.URL.RawQuery, last.Header.Get("trace"))
		}
	})
	t.Run("post body", func(t *testing.T) {
		r := b.Invoke(context.Background(), &toolenv.Call{Tool: post, Args: map[string]any{"name": "lamp", "price": json.Number("12.50")}})
		if !r.OK() {
			t.Fatalf("got %+v", r)
		}
		last, lastBody := seen()
		if last.Method != "POST" || lastBody != `{"name":"lamp","price":12.50}` {
			t.Errorf("request = %s body %s", last.Method, lastBody)
		}
	})
	t.Run("404", func(t *testing.T) {
		r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"item_id": "missing"}})
		if r.Status != toolenv.StatusNotFound || r.Meta[MetaRule] != "http_404_410" || r.Meta[MetaHTTPStatus] != "404" {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("502", func(t *testing.T) {
		r := b.Invoke(context.Background(), &toolenv.Call{Tool: broken})
		if r.Meta[MetaClass] != string(ClassNotConnected) {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("missing path parameter", func(t *testing.T) {
		r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool})
		if r.Meta[MetaClass] != string(ClassParameterChange) || !strings.Contains(r.Error, `"item_id"`) {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("unauthorized", func(t *testing.T) {
		nokey, _ := New(Config{Direct: true})
		r := nokey.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"item_id": "1"}})
		if r.Status != toolenv.StatusUnauthorized || r.Meta[MetaClass] != string(ClassNotAuthorized) {
			t.Fatalf("got %+v", r)
		}
	})
}

// TestConcurrentCalls runs many calls at once through one Backend (run
// with -race).
func TestConcurrentCalls(t *testing.T) {
	p := newProxy(t, answer("", "fine"))
	b, _ := New(Config{ProxyURL: p.URL})
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := b.Invoke(context.Background(), &toolenv.Call{Tool: toolbenchTool()}); !r.OK() {
				t.Errorf("got %+v", r)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkProxyInvoke is one call through the RapidAPI proxy format to a
// loopback proxy answering at once: toolenv's cost per upstream call.
func BenchmarkProxyInvoke(b *testing.B) {
	srv := httptest.NewServer(answer("", "{'date': '2023-04-01', 'name': 'The Lumineers', 'venue_name': 'Aware Super Theatre'}"))
	defer srv.Close()
	be, _ := New(Config{ProxyURL: srv.URL})
	call := &toolenv.Call{Tool: toolbenchTool(), Args: map[string]any{"id_conc": "40698227"}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := be.Invoke(context.Background(), call); !r.OK() {
			b.Fatal(r.Error)
		}
	}
}
