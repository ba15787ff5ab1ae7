package openenv_test

import (
	"context"
	"testing"

	"github.com/toolenv/toolenv/episode"
)

// BenchmarkResetHTTP is POST /openenv/reset to the first observation,
// server and client in one process.
func BenchmarkResetHTTP(b *testing.B) {
	t := &testing.T{}
	_ = t
	s := serveB(b)
	c := s.client(tokenA)
	ctx := context.Background()
	tasks := s.env.Tasks["bird-slot"]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := c.ResetHTTP(ctx, map[string]any{"collection": "bird-slot", "task_id": tasks[i%len(tasks)].ID})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.eps.End(ctx, principalA, r.Metadata["episode_id"].(string))
		b.StartTimer()
	}
}

var _ = episode.Options{}
