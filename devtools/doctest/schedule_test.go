package doctest

import (
	"flag"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// explicitParallel is set when go test was given -parallel: the pages
// then keep go test's own limit (TestMain).
var explicitParallel bool

// pageSlots is how many pages run at once when go test was not given
// -parallel: TOOLENV_DOCTEST_PARALLEL, else four per core and at least
// 8. Pages spend much of their time waiting on the servers and builds
// they start, so more than the cores keep the cores busy; go test's own
// default (GOMAXPROCS) would run two at a time on two cores. On a
// two-core machine that runs the rest of the suite and a `yes` per core
// beside it, four pages at once (twice the cores) left the doc test
// 243-302 s of the suite's 586-670 s, waiting for CPU its pages' processes
// shared with everything else; eight at once, 218-246 s of 580-620 s over
// five runs, and 188-216 s of 555-638 s over ten once the binaries built
// beside the pages rather than before them (docs/benchmarks.md).
func pageSlots() int {
	if n, err := strconv.Atoi(os.Getenv("TOOLENV_DOCTEST_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return max(8, 4*runtime.GOMAXPROCS(0))
}

// setParallel lifts go test's limit on parallel tests, unless -parallel
// was given, so that the page scheduler alone decides (TestMain calls it
// after flag.Parse).
func setParallel() {
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			explicitParallel = true
		}
	})
	if !explicitParallel {
		flag.Set("test.parallel", "1000")
	}
}

// heavy are the commands whose pages run longest (builds, measurements,
// test runs): a page's cost counts them.
var heavy = regexp.MustCompile(`\b(toolenv (build|drift|mirror|eval|bench|map (eval|index|match|probe|sequence))|go test|scripts/)\b`)

// pageCost estimates how long a page runs from its run blocks: a heavy
// command counts 25, any other command line 1. Pages start costliest
// first, so that the longest does not start last.
func pageCost(blocks []Block) int {
	cost := 0
	for _, b := range blocks {
		if b.Lang != "sh" || b.Illustrative {
			continue
		}
		for _, c := range Commands(b.Lines) {
			if heavy.MatchString(c.Text) {
				cost += 25
			} else {
				cost++
			}
		}
	}
	return cost
}

// scheduler gives pages their turns, at most slots at once, the
// costliest waiting page first. Pages join while the test registers them
// (join), then wait for their turn (wait) once start has been called.
type scheduler struct {
	mu      sync.Mutex
	slots   int
	cost    map[string]int
	turn    map[string]chan struct{}
	waiting []string
	running int
	started bool
}

func newScheduler(slots int) *scheduler {
	return &scheduler{slots: slots, cost: map[string]int{}, turn: map[string]chan struct{}{}}
}

// join registers a page that will wait for its turn.
func (s *scheduler) join(page string, cost int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cost[page] = cost
	s.turn[page] = make(chan struct{})
	s.waiting = append(s.waiting, page)
}

// start hands out the first turns: every page has joined.
func (s *scheduler) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	s.dispatch()
}

// wait blocks until the page's turn; the returned func ends it.
func (s *scheduler) wait(page string) (done func()) {
	s.mu.Lock()
	ch := s.turn[page]
	s.mu.Unlock()
	<-ch
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.running--
		s.dispatch()
	}
}

// dispatch gives free slots to the costliest waiting pages (s.mu held).
func (s *scheduler) dispatch() {
	if !s.started {
		return
	}
	sort.SliceStable(s.waiting, func(i, j int) bool { return s.cost[s.waiting[i]] > s.cost[s.waiting[j]] })
	for s.running < s.slots && len(s.waiting) > 0 {
		p := s.waiting[0]
		s.waiting = s.waiting[1:]
		s.running++
		close(s.turn[p])
	}
}

// TestSchedulerCostliestFirst: turns go to the costliest waiting pages,
// never more than the slots at once, and every page gets one.
func TestSchedulerCostliestFirst(t *testing.T) {
	s := newScheduler(2)
	costs := map[string]int{"a": 1, "b": 50, "c": 7, "d": 300, "e": 0}
	for p, c := range costs {
		s.join(p, c)
	}
	s.start()
	order := make(chan string, len(costs))
	var running, most int
	var mu sync.Mutex
	release := map[string]chan struct{}{}
	for p := range costs {
		release[p] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for p := range costs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := s.wait(p)
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			order <- p
			<-release[p]
			mu.Lock()
			running--
			mu.Unlock()
			done()
		}()
	}
	var got []string
	for range costs {
		p := <-order // the next page to get a turn: release it, which frees its slot
		got = append(got, p)
		if len(got) >= 2 {
			close(release[got[len(got)-2]])
		}
	}
	close(release[got[len(got)-1]])
	wg.Wait()
	if strings.Join(got[:2], ",") != "d,b" && strings.Join(got[:2], ",") != "b,d" {
		t.Errorf("first turns %v, want d and b (the costliest)", got[:2])
	}
	if strings.Join(got[2:], ",") != "c,a,e" {
		t.Errorf("later turns %v, want c, a, e", got[2:])
	}
	if most > 2 {
		t.Errorf("%d pages ran at once, slots 2", most)
	}
}

func TestPageCost(t *testing.T) {
	blocks, err := Parse("p.md", []byte("```sh\ntoolenv build bird --data d --out o\ncurl -s x\n```\n\n```sh illustrative\ngo test ./...\n```\n\n```text\ntoolenv drift\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pageCost(blocks); got != 26 {
		t.Errorf("cost %d, want 26 (a build and a curl; illustrative and text blocks do not count)", got)
	}
}
