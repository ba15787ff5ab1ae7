package mapping

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestSetLookupsAtOnce: a server's requests share one Set, and the first
// lookups build its index while others read it. Many goroutines look up
// a fresh Set at once, and each gets what one lookup alone gets. Before
// the index was built behind an atomic pointer, this failed with Go's
// "concurrent map read and map write" (map eval failover's episodes at
// once found it); with -race it fails on every run of the old code.
func TestSetLookupsAtOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var ms []*Mapping
	for i := range 400 {
		ms = append(ms, &Mapping{From: fmt.Sprintf("a/t%d", r.IntN(40)), To: fmt.Sprintf("b/u%d", i%60), Score: r.Float64(), Provenance: Structural})
	}
	alone := &Set{Version: SetVersion}
	alone.Add(ms...)
	want := map[string]int{}
	for i := range 40 {
		tool := fmt.Sprintf("a/t%d", i)
		want[tool] = len(alone.Alternatives(tool))
	}
	for round := range 20 {
		s := &Set{Version: SetVersion}
		s.Add(ms...)
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := range 16 {
			wg.Go(func() {
				for i := range 40 {
					tool := fmt.Sprintf("a/t%d", (i+g)%40)
					if got := len(s.Alternatives(tool)); got != want[tool] {
						errs <- fmt.Sprintf("round %d: %s: %d alternatives, alone %d", round, tool, got, want[tool])
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
	// Add after lookups: the index is made again and sees the new mapping.
	alone.Add(&Mapping{From: "a/new", To: "b/new", Score: 1, Provenance: Human})
	if got := alone.Alternatives("a/new"); len(got) != 1 || got[0].To != "b/new" {
		t.Errorf("after Add: %+v", got)
	}
}
