package virtual

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
)

// concert is StableToolBench G1's TheClique "Songkick concert", loaded
// as the ToolBench loader loads it, in a collection with caching on.
func concert() (*toolenv.Collection, *toolenv.Tool) {
	doc := toolbench.APIDoc{CategoryName: "Data", ToolName: "TheClique", APIName: "Songkick concert", APIDescription: "Concert info",
		RequiredParameters: []toolbench.ParamDoc{{Name: "id_conc", Type: "string", Default: "40698227-lumineers-at-aware-super-theatre"}},
		TemplateResponse:   json.RawMessage(`{"date": "str", "name": "str", "venue_name": "str", "location": "str"}`)}
	c := toolbench.NewCollection([]toolbench.APIDoc{doc}, toolbench.CollectionOptions{})
	return c, c.Tools[0]
}

// proxy imitates the RapidAPI proxy with a fixed answer, counting calls.
func proxy(t *testing.T, body string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// deadURL is a loopback URL nothing answers on (deadport).
func deadURL(t *testing.T) string { return deadport.URL(t, "") }

func mustUpstream(t *testing.T, url string) *upstream.Backend {
	up, err := upstream.New(upstream.Config{ProxyURL: url, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return up
}

func mustSimulator(t *testing.T, url string) *simulate.Simulator {
	sim, err := simulate.New(llm.New(url, llm.Options{MaxRetries: -1, Timeout: time.Second}), simulate.Options{Model: "MirrorAPI"})
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

const simAnswer = `{"error": "", "response": {"date": "2023-04-01", "name": "The Lumineers", "venue_name": "Aware Super Theatre", "location": "Sydney"}}`

func TestStages(t *testing.T) {
	_, tool := concert()
	okProxy, _ := proxy(t, `{"error": "", "response": "{'date': '2023-04-01', 'name': 'The Lumineers'}"}`)
	missingProxy, _ := proxy(t, `{"error": "", "response": "{'message': \"API doesn't exists\"}"}`)
	llmOK := llmtest.New(llmtest.Script(llmtest.Reply{Content: simAnswer}))
	defer llmOK.Close()
	dead := deadURL(t)

	cases := []struct {
		name       string
		cfg        Config
		source     toolenv.Source
		warnings   int
		class      string
		simFailure string
	}{
		{"upstream answers", Config{Upstream: mustUpstream(t, okProxy.URL), Simulator: mustSimulator(t, llmOK.URL())}, toolenv.SourceUpstream, 0, "success", ""},
		{"upstream not found, simulator answers", Config{Upstream: mustUpstream(t, missingProxy.URL), Simulator: mustSimulator(t, llmOK.URL())}, toolenv.SourceSimulator, 1, "not_found", ""},
		{"upstream and simulator down, synthesizer answers", Config{Upstream: mustUpstream(t, dead), Simulator: mustSimulator(t, dead+"/v1")}, toolenv.SourceSynthesizer, 2, "not_connected", "endpoint"},
		{"nothing configured", Config{}, toolenv.SourceSynthesizer, 1, "", ""},
		{"typed nil stages", Config{Upstream: (*upstream.Backend)(nil), Simulator: (*simulate.Simulator)(nil)}, toolenv.SourceSynthesizer, 1, "", ""},
		{"upstream configured for other tools only", Config{Upstream: mustDirectOnly(t), Simulator: mustSimulator(t, llmOK.URL())}, toolenv.SourceSimulator, 0, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.cfg)
			r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"id_conc": "40698227"}})
			if !r.OK() || r.Source != tc.source {
				t.Fatalf("status %s source %s (error %q), want ok from %s", r.Status, r.Source, r.Error, tc.source)
			}
			if len(r.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", r.Warnings, tc.warnings)
			}
			for _, w := range r.Warnings {
				if tc.cfg.Simulator != nil && !isNil(tc.cfg.Simulator) && strings.Contains(w, "no LLM simulator is configured") {
					t.Errorf("a configured simulator failed, and the warning says none is: %q", w)
				}
			}
			if r.Meta[upstream.MetaClass] != tc.class || r.Meta[simulate.MetaFailure] != tc.simFailure {
				t.Errorf("meta %v, want class %q simulator failure %q", r.Meta, tc.class, tc.simFailure)
			}
			if !json.Valid(r.Body) || len(r.Body) == 0 {
				t.Errorf("body %s", r.Body)
			}
		})
	}
}

func mustDirectOnly(t *testing.T) *upstream.Backend {
	up, err := upstream.New(upstream.Config{Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	return up
}

// TestBehindTheCache puts the virtual backend behind invoke's cache
// middleware over a real SQLite store: a valid simulated answer is stored
// and served from the cache next time; an invalid one and a synthesized
// one are not stored.
func TestBehindTheCache(t *testing.T) {
	coll, tool := concert()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var answer atomic.Value
	answer.Store(simAnswer)
	srv := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply { return llmtest.Reply{Content: answer.Load().(string)} })
	defer srv.Close()
	sim, _ := simulate.New(llm.New(srv.URL(), llm.Options{MaxRetries: -1}), simulate.Options{Examples: st})
	h := toolenv.Chain(New(Config{Simulator: sim}), invoke.CacheMiddleware(st, nil))
	call := func(id string) *toolenv.Result {
		return h.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: coll, Args: map[string]any{"id_conc": id}})
	}

	if r := call("1"); r.Source != toolenv.SourceSimulator || !r.OK() {
		t.Fatalf("first call: %+v", r)
	}
	if r := call("1"); r.Source != toolenv.SourceCache {
		t.Fatalf("second call should hit the cache: %+v", r)
	}
	// The stored answer is now a few-shot example for the next call.
	answer.Store(`{"error": "", "response": "I think the concert was great."}`)
	if r := call("2"); r.Source != toolenv.SourceSimulator || r.Meta[simulate.MetaInvalid] != "shape" {
		t.Fatalf("invalid answer: %+v", r)
	}
	if last := srv.Requests()[len(srv.Requests())-1]; len(last.Messages) != 4 || !strings.Contains(last.Messages[2].Content, "The Lumineers") {
		t.Errorf("the cached answer should be the few-shot example: %+v", last.Messages)
	}
	if r := call("2"); r.Source != toolenv.SourceSimulator {
		t.Fatalf("an invalid answer must not be cached: %+v", r)
	}
	// With the simulator gone, the synthesizer answers and nothing is stored.
	srv.Close()
	if r := call("3"); r.Source != toolenv.SourceSynthesizer {
		t.Fatalf("synthesizer: %+v", r)
	}
	if _, ok, _ := st.Get(context.Background(), tool.ID, `{"id_conc":"3"}`); ok {
		t.Error("a synthesized answer was cached")
	}
	if _, ok, _ := st.Get(context.Background(), tool.ID, `{"id_conc":"1"}`); !ok {
		t.Error("the valid simulated answer was not cached")
	}
}

func TestCanceled(t *testing.T) {
	_, tool := concert()
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Delay: time.Minute}))
	defer srv.Close()
	b := New(Config{Simulator: mustSimulator(t, srv.URL())})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	r := b.Invoke(ctx, &toolenv.Call{Tool: tool})
	if r.Status != toolenv.StatusCanceled {
		t.Fatalf("status %s, want canceled (%+v)", r.Status, r)
	}
}

func TestBuild(t *testing.T) {
	coll, tool := concert()
	if _, err := Build(Options{UpstreamURL: "not a url"}); err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("a bad proxy URL must be refused with a hint: %v", err)
	}
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: simAnswer}))
	defer srv.Close()
	if _, err := Build(Options{LLM: llm.New(srv.URL(), llm.Options{}), Prompt: "poetry"}); err == nil {
		t.Error("an unknown prompt must be refused")
	}
	b, err := Build(Options{LLM: llm.New(srv.URL(), llm.Options{}), Model: "m", Prompt: "cot", Tools: coll.Tools})
	if err != nil {
		t.Fatal(err)
	}
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"id_conc": "1"}})
	if r.Source != toolenv.SourceSimulator || r.Meta[simulate.MetaPrompt] != "cot" || srv.Requests()[0].Model != "m" {
		t.Fatalf("%+v", r)
	}
	var none *llm.Client
	b, _ = Build(Options{LLM: none})
	if r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool}); r.Source != toolenv.SourceSynthesizer {
		t.Fatalf("%+v", r)
	}
}
