package nl2api_test

import (
	"context"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
)

// BenchmarkBuild measures the whole build of both databases, all three
// flavors, with verification (no variants).
func BenchmarkBuild(b *testing.B) {
	data := shareddata.Require(b, "bird")
	for i := 0; i < b.N; i++ {
		if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplayAll replays every kept gold sequence of all three
// flavors for both databases (init calls included, one fresh session per
// task) through backends opened from the written collections, and checks
// each answer. One op is the whole set.
func BenchmarkReplayAll(b *testing.B) {
	data := shareddata.Require(b, "bird")
	out := b.TempDir()
	if _, err := nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: out}); err != nil {
		b.Fatal(err)
	}
	type set struct {
		c     *toolenv.Collection
		h     toolenv.Handler
		tasks []*toolenv.Task
	}
	var sets []set
	calls := 0
	for _, flavor := range nl2api.Flavors {
		c, h, tasks := openServed(b, filepath.Join(out, flavor))
		sets = append(sets, set{c, h, tasks})
		for _, t := range tasks {
			calls += len(t.Gold)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		for _, s := range sets {
			for _, t := range s.tasks {
				if reason, detail := nl2api.Verify(context.Background(), s.h, s.c, t, "bench-"+t.ID); reason != "" {
					b.Fatalf("%s %s: %s %s", s.c.Name, t.ID, reason, detail)
				}
				n++
			}
		}
		b.ReportMetric(float64(n), "tasks/op")
	}
	b.ReportMetric(float64(calls), "gold-calls/op")
}
