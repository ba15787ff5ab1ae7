package environment

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// BenchmarkMCPMirror mirrors server-everything and reports the figures of
// docs/mcp-sources.md, all from one run:
//
//   - tools: the tools imported from its tools/list;
//   - recorded: the calls recorded (distinct echo and get-sum calls);
//   - identical_%: the share of those calls answered with the recorded
//     bytes after the server is stopped (toolenv reopened, the server's
//     command broken);
//   - direct_µs, toolenv_µs: one echo call to the live server directly
//     (the SDK client toolenv holds) and through toolenv's whole
//     pipeline with the cache skipped (NoCache: it reaches the server),
//     alternated call by call; ratio_x is toolenv over direct;
//   - hit_µs: a recorded call answered from the cache.
//
// Run: go test ./environment -run '^$' -bench MCPMirror -benchtime 2000x
func BenchmarkMCPMirror(b *testing.B) {
	tools := npmtest.Require(b)
	ctx := context.Background()
	dir := b.TempDir()
	storePath := filepath.Join(dir, "s.db")
	env, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{Config: []string{stdioServer(b, tools, "everything", "mcp-server-everything", nil, nil)}}})
	if err != nil {
		b.Fatal(err)
	}
	col := env.Registry.Collection("everything")
	const recordN = 200
	type rec struct {
		tool string
		args map[string]any
		body string
	}
	var recs []rec
	for i := range recordN {
		tool, args := "echo", map[string]any{"message": fmt.Sprintf("message %d", i)}
		if i%2 == 1 {
			tool, args = "get-sum", map[string]any{"a": i, "b": 1000 - i}
		}
		r := invokeIn(b, env, "everything", fmt.Sprintf("rec-%d", i), tool, args)
		if !r.OK() || r.Source != toolenv.SourceUpstream {
			b.Fatalf("record %s: %s %s %s", tool, r.Status, r.Source, r.Error)
		}
		recs = append(recs, rec{tool, args, string(r.Body)})
	}
	stats, err := env.Store.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cl := env.MCPClients()["everything"]
	echo := col.Tool("echo")
	direct := func(i int) {
		res, err := cl.Call(ctx, "echo", map[string]any{"message": fmt.Sprintf("bench %d", i)})
		if err != nil || res.IsError {
			b.Fatalf("direct: %v", err)
		}
	}
	through := func(i int) {
		call := &toolenv.Call{Tool: echo, Collection: col, Args: map[string]any{"message": fmt.Sprintf("bench %d", i)}, Session: "bench", Options: toolenv.CallOptions{NoCache: true}}
		if r := env.Pipeline.Invoke(ctx, call); r.Source != toolenv.SourceUpstream {
			b.Fatalf("through toolenv: %s %s %s", r.Status, r.Source, r.Error)
		}
	}
	hitCall := &toolenv.Call{Tool: echo, Collection: col, Args: recs[0].args, Session: "hits"}
	for i := range 50 { // warm both paths
		direct(i)
		through(-1 - i)
	}
	var dDirect, dThrough, dHit time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := time.Now()
		direct(i)
		dDirect += time.Since(s)
		s = time.Now()
		through(1000 + i) // a key never stored: the call reaches the server
		dThrough += time.Since(s)
		s = time.Now()
		if r := env.Pipeline.Invoke(ctx, hitCall); r.Source != toolenv.SourceCache {
			b.Fatalf("hit: %s", r.Source)
		}
		dHit += time.Since(s)
	}
	b.StopTimer()
	env.Close()

	gone, err := Open(ctx, &Config{Store: storePath, MCPSources: MCPSourcesConfig{StartTimeout: 5 * time.Second,
		Config: []string{`{"mcpServers":{"everything":{"command":"` + filepath.Join(dir, "gone") + `"}}}`}}})
	if err != nil {
		b.Fatal(err)
	}
	defer gone.Close()
	same := 0
	for i, r := range recs {
		res := invokeIn(b, gone, "everything", fmt.Sprintf("rec-%d", i), r.tool, r.args)
		if res.Source == toolenv.SourceCache && string(res.Body) == r.body {
			same++
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(float64(len(col.Tools)), "tools")
	b.ReportMetric(float64(stats.Entries-1), "recorded") // less the recorded tool list
	b.ReportMetric(100*float64(same)/float64(len(recs)), "identical_%")
	b.ReportMetric(per(dDirect), "direct_µs")
	b.ReportMetric(per(dThrough), "toolenv_µs")
	b.ReportMetric(per(dHit), "hit_µs")
	b.ReportMetric(float64(dThrough)/float64(dDirect), "ratio_x")
	if !strings.Contains(recs[0].body, "message 0") {
		b.Fatalf("recorded body: %s", recs[0].body)
	}
}
