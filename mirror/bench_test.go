package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
)

// benchTools makes n documented tools of two parameters each.
func benchTools(n int) []*toolenv.Tool {
	tools := make([]*toolenv.Tool, n)
	for i := range tools {
		in := toolenv.ObjectSchema()
		in.SetProp("city", &toolenv.Schema{Type: "string", Description: "The city to look up, e.g. Paris."})
		in.SetProp("days", &toolenv.Schema{Type: "integer", Description: "How many days ahead.", Minimum: mirror.Ptr(1.0), Maximum: mirror.Ptr(14.0)})
		in.Required = []string{"city"}
		tools[i] = &toolenv.Tool{ID: fmt.Sprintf("bench/api_%04d", i), Collection: "bench", Name: fmt.Sprintf("api_%04d", i),
			Title: fmt.Sprintf("Forecast %d", i), Description: "Returns the weather forecast of a city for the next days, with temperatures and rain.",
			Category: fmt.Sprintf("Category%d", i%49), Group: fmt.Sprintf("tool_%d", i/4), GroupDescription: "A weather service.", Input: in}
	}
	return tools
}

// fillStore puts n training pairs spread over tools into a new store.
func fillStore(tb testing.TB, tools []*toolenv.Tool, n int) (*sqlstore.Store, string) {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "bench.db"), sqlstore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	const ds = "bench"
	batch := make([]*mirror.Pair, 0, 1000)
	body := json.RawMessage(`{"city":"Paris","days":[{"date":"2025-06-01","min":14.5,"max":23.1,"rain_mm":0.4,"summary":"partly cloudy"},{"date":"2025-06-02","min":15.0,"max":25.2,"rain_mm":0,"summary":"sunny"}]}`)
	now := time.Unix(1_750_000_000, 0)
	for i := range n {
		t := tools[i%len(tools)]
		batch = append(batch, &mirror.Pair{Tool: t.ID, Args: fmt.Sprintf(`{"city":"City %d","days":%d}`, i, 1+i%14), Origin: mirror.OriginReal,
			Kind: "sampled", Status: toolenv.StatusOK, Body: body, Source: "live", Class: "success", Rule: "success", Attempts: 1,
			Latency: time.Millisecond, CalledAt: now, Filter: mirror.FilterKept, Split: mirror.SplitTrain})
		if len(batch) == cap(batch) {
			if err := st.PutPairs(ctx, ds, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := st.PutPairs(ctx, ds, batch); err != nil {
		tb.Fatal(err)
	}
	return st, ds
}

// BenchmarkExport100k exports 100,000 training pairs (SFT samples, both
// formats, with the dataset card): the target is under 10 s.
func BenchmarkExport100k(b *testing.B) {
	tools := benchTools(500)
	st, ds := fillStore(b, tools, 100_000)
	e := &mirror.Engine{Store: st, Dataset: ds, Tools: tools}
	b.ResetTimer()
	for range b.N {
		out := b.TempDir()
		stats, err := e.Export(context.Background(), mirror.ExportOptions{Out: out, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if stats.SFT != 100_000 {
			b.Fatalf("exported %d SFT samples, want 100000", stats.SFT)
		}
	}
}
