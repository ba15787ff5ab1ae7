package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// BenchmarkVirtualCacheHit measures the /virtual handler answering cache
// hits for StableToolBench's 1,920 APIs, without the network.
func BenchmarkVirtualCacheHit(b *testing.B) {
	src, err := toolbench.Load(shareddata.Require(b, "stabletoolbench", "solvable_queries", "test_instruction"))
	if err != nil {
		b.Fatal(err)
	}
	c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	reg := invoke.NewRegistry()
	miss := toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return toolenv.Errorf(toolenv.StatusInternal, "", "benchmark call missed the cache")
	})
	if err := reg.Add(c, miss); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), b.TempDir()+"/s.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var v validate.Validator
	var bodies [][]byte
	var entries []*store.Entry
	for _, t := range c.Tools {
		args := map[string]any{}
		for _, n := range t.Input.Required {
			args[n] = "x"
		}
		canon, _ := toolenv.Canonical(v.Args(t.Input, args, true).Args)
		ti, _ := json.Marshal(args)
		body, _ := json.Marshal(map[string]any{"category": t.Category, "tool_name": t.Meta["std_tool"], "api_name": t.Meta["api_name"], "tool_input": string(ti), "strip": "", "toolbench_key": ""})
		// Recorded as a first live call records it: under the client's
		// exact key too.
		exact, _ := toolbench.ToolInputKey(body)
		entries = append(entries, &store.Entry{Tool: t.ID, Args: string(canon), Exact: exact, Body: json.RawMessage(`"{'result': 'a recorded answer of moderate length, as StableToolBench caches them'}"`)})
		bodies = append(bodies, body)
	}
	if _, err := st.PutMany(context.Background(), entries, true); err != nil {
		b.Fatal(err)
	}
	m := NewMetrics()
	srv := New(Options{Pipeline: invoke.New(reg, invoke.Options{Cache: st, Observer: m}), Registry: reg, Metrics: m})
	// Every call once before the clock starts: the first read of an
	// entry is the store's, the later ones the in-memory cache's.
	for _, body := range bodies {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/virtual", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		w := httptest.NewRecorder()
		for pb.Next() {
			// A loopback Host and a JSON content type, as the guard asks.
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/virtual", bytes.NewReader(bodies[i%len(bodies)]))
			req.Header.Set("Content-Type", "application/json")
			w.Body.Reset()
			w.Header().Del("X-Toolenv-Source")
			srv.ServeHTTP(w, req)
			if w.Header().Get("X-Toolenv-Source") != "cache" {
				b.Fatalf("not a hit: %s", w.Body)
			}
			i++
		}
	})
}
