package episode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/mcpsource"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// BenchmarkMCPEpisodeStart measures how long an RL episode on the npm
// memory server, isolated per episode, takes to start (Reset: an
// instance handed over from the pool, its folder seeded, the first
// observation made), with an instance ready in the pool — the timer is
// stopped while the pool refills, so that each reset is "from the pool";
// empty: no initial files; seeded: a graph file copied in. back-to-back
// resets without waiting for the pool, so that once the pool's ready
// instances are used a reset waits for a start (the price of episodes
// that come faster than the pool refills). It reports the p50 and p90 in
// milliseconds. The end of each episode (stopping its instance) is not
// timed.
//
//	go test ./episode -run '^$' -bench MCPEpisodeStart -benchtime 200x
func BenchmarkMCPEpisodeStart(b *testing.B) {
	tools := npmtest.Require(b)
	seed := b.TempDir()
	eve := `{"type":"entity","name":"Eve","entityType":"person","observations":["seeded"]}`
	if err := os.WriteFile(filepath.Join(seed, "memory.jsonl"), []byte(eve+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		init *toolenv.InitialState
		wait bool // for an instance ready in the pool
	}{{"empty", nil, true}, {"seeded", &toolenv.InitialState{Files: seed}, true}, {"back-to-back", nil, false}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			task := &toolenv.Task{ID: "t", Collection: "memory", Query: "Remember.", Initial: c.init,
				Checks: []toolenv.StateCheck{{Call: &toolenv.GoldCall{Name: "read_graph", Args: map[string]any{}}, Expect: json.RawMessage(`{}`)}}}
			entry := map[string]any{"command": tools.Node(), "args": []string{tools.Bin("mcp-server-memory")},
				"env": map[string]string{"MEMORY_FILE_PATH": "${TOOLENV_EPISODE_DIR}/memory.jsonl"}}
			raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"memory": entry}})
			env, eps := openMemory(b, ":memory:", string(raw), task)
			defer env.Close()
			defer eps.Close()
			pool := env.Registry.Backend("memory").(*mcpsource.Backend).Pool()
			ready := func() {
				deadline := time.Now().Add(time.Minute)
				for pool.Stats().Ready < 1 {
					if time.Now().After(deadline) {
						b.Fatal("no instance ready within a minute")
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			b.StopTimer()
			for range b.N {
				if c.wait {
					ready()
				}
				b.StartTimer()
				start := time.Now()
				first, err := eps.Reset(ctx, "", &episode.ResetOptions{Collection: "memory", TaskID: "t"})
				times = append(times, time.Since(start))
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if err := eps.End(ctx, "", first.Observation.EpisodeID); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
			if s := pool.Stats(); s.Handed < b.N {
				b.Fatalf("%d episodes, %d instances handed out", b.N, s.Handed)
			}
		})
	}
}
