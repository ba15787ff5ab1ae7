package environment

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// conceptVector embeds a text by the concepts its first line (a tool's
// title, a query) names: weather, books, money, forecasts, and a
// constant (no zero vectors). "meteorology outlook" shares no word with
// any demo tool, so BM25 cannot find the forecast by it and the vectors
// can.
func conceptVector(text string) []float32 {
	s, _, _ := strings.Cut(strings.ToLower(text), "\n")
	has := func(words ...string) float32 {
		for _, w := range words {
			if strings.Contains(s, w) {
				return 1
			}
		}
		return 0
	}
	return []float32{has("weather", "temperature", "meteorolog"), has("book", "isbn"), has("currenc", "rate"), has("forecast", "outlook"), 0.1}
}

// docInputs counts the texts the embeddings server was asked to embed,
// besides the given queries.
func docInputs(t *testing.T, srv *llmtest.Server, queries ...string) int {
	t.Helper()
	n := 0
	for _, body := range srv.RawRequests() {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		for _, in := range req.Input {
			isQuery := false
			for _, q := range queries {
				isQuery = isQuery || in == q
			}
			if !isQuery {
				n++
			}
		}
	}
	return n
}

// TestSearchEmbeddings: with mcp.embed_url the search_tools index embeds
// the tools through the OpenAI-compatible endpoint in the background once
// the server is Ready (no search asked for it), and ranks by BM25 and
// cosine fused, finding a tool by meaning where BM25 alone cannot; a
// restart over the same tools embeds nothing again (the index file is
// reused); a dead endpoint leaves BM25 with a logged warning, and the next
// start with the endpoint up builds the vectors after all.
func TestSearchEmbeddings(t *testing.T) {
	ctx := context.Background()
	const query = "meteorology outlook"
	srv := llmtest.New(func(int, *llm.Request) llmtest.Reply { return llmtest.Reply{Embed: conceptVector} })
	defer srv.Close()
	dead := llmtest.New(llmtest.Script())
	deadURL := dead.URL()
	dead.Close()

	open := func(t *testing.T, store, url string, log *logtest.Buffer) *Environment {
		t.Helper()
		cfg := Config{Store: store, MCP: MCPConfig{SearchAbove: 1, EmbedURL: url, EmbedModel: "concepts"}}
		if log != nil {
			cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		env, err := Open(ctx, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.MCPServer(); err != nil {
			t.Fatal(err)
		}
		env.Ready()
		return env
	}
	// search calls search_tools through an MCP client and returns the
	// IDs of the tools found and the notes.
	search := func(t *testing.T, env *Environment, q string) ([]string, []string) {
		t.Helper()
		srv, err := env.MCPServer()
		if err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": q, "limit": 3}})
		if err != nil || res.IsError {
			t.Fatalf("search_tools %q: %v %+v", q, err, res)
		}
		var ans struct {
			Tools []struct{ Name, Collection string }
			Notes []string
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &ans); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range ans.Tools {
			ids = append(ids, h.Collection+"/"+h.Name)
		}
		return ids, ans.Notes
	}

	store := filepath.Join(t.TempDir(), "store.db")
	env := open(t, store, srv.URL(), nil)
	// Ready alone starts the build: the tools are embedded before any search.
	deadline := time.Now().Add(2 * time.Minute) // a liveness guard, not a speed bound
	for docInputs(t, srv) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no tool was embedded after Ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ids, notes := search(t, env, query)
	if len(ids) == 0 || ids[0] != "demo/weather_forecast" || len(notes) != 0 {
		t.Fatalf("hybrid search %q: %v (notes %v), want demo/weather_forecast first", query, ids, notes)
	}
	embedded := docInputs(t, srv, query)
	if embedded != len(env.ListedTools()) {
		t.Errorf("%d tool texts embedded, want one per listed tool (%d)", embedded, len(env.ListedTools()))
	}
	env.Close()

	lexical := open(t, filepath.Join(t.TempDir(), "store.db"), "", nil)
	if ids, _ := search(t, lexical, query); len(ids) > 0 && ids[0] == "demo/weather_forecast" {
		t.Errorf("BM25 alone found %v for %q: the query does not test the vectors", ids, query)
	}
	lexical.Close()

	env = open(t, store, srv.URL(), nil)
	if ids, _ := search(t, env, query); len(ids) == 0 || ids[0] != "demo/weather_forecast" {
		t.Errorf("after a restart: %v", ids)
	}
	if n := docInputs(t, srv, query); n != embedded {
		t.Errorf("a restart over the same tools embedded %d more texts, want none", n-embedded)
	}
	env.Close()

	var log logtest.Buffer
	store = filepath.Join(t.TempDir(), "store.db")
	env = open(t, store, deadURL, &log)
	ids, notes = search(t, env, "weather forecast for the next days")
	if len(ids) == 0 || ids[0] != "demo/weather_forecast" || len(notes) == 0 {
		t.Errorf("with a dead endpoint: %v (notes %v), want BM25's demo/weather_forecast and a note", ids, notes)
	}
	env.Close()
	if !strings.Contains(log.String(), "embeddings unavailable") || !strings.Contains(log.String(), "BM25 alone") {
		t.Errorf("the dead endpoint was not logged as a warning:\n%s", log.String())
	}
	env = open(t, store, srv.URL(), nil)
	if ids, notes := search(t, env, query); len(ids) == 0 || ids[0] != "demo/weather_forecast" || len(notes) != 0 {
		t.Errorf("the endpoint back up, the index still lacks vectors: %v (notes %v)", ids, notes)
	}
	env.Close()
}
