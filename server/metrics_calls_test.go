package server

import (
	"io"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// TestMetricsStripedCounts: calls counted from many goroutines at once
// come out of /metrics exactly: each label set's toolenv_calls_total, the
// latency histogram by source (cumulative buckets, +Inf equal to the
// count, the sum of the durations) and the cache lookups, whatever the
// stripes they were counted in; a scrape taken while calls are counted is
// a consistent histogram.
func TestMetricsStripedCounts(t *testing.T) {
	m := NewMetrics()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	cached := toolenv.NewCollection("c", "toolbench", []*toolenv.Tool{{Name: "t"}})
	cached.Policy.Cache = true
	sources := []toolenv.Source{toolenv.SourceCache, toolenv.SourceSimulator, toolenv.SourceUpstream}
	statuses := []toolenv.Status{toolenv.StatusOK, toolenv.StatusUpstreamError}
	type key struct {
		src toolenv.Source
		st  toolenv.Status
	}
	const goroutines, each = 8, 3000
	var mu sync.Mutex
	want := map[key]int{}
	bySrc := map[toolenv.Source][]time.Duration{}
	scrape := func() string {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Error(err)
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	stop := make(chan struct{})
	scraped := make(chan int)
	go func() { // scrapes while calls are counted
		n := 0
		defer func() { scraped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			checkHistogram(t, scrape(), "cache")
			n++
		}
	}()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 29))
			local := map[key]int{}
			durs := map[toolenv.Source][]time.Duration{}
			for range each {
				k := key{sources[r.IntN(len(sources))], statuses[r.IntN(len(statuses))]}
				// Durations on and around every bucket bound, past the
				// last, and zero (a replayed hit's).
				d := time.Duration(r.Float64() * 40 * float64(time.Second))
				switch r.IntN(5) {
				case 0, 1:
					d = time.Duration(latencyBuckets[r.IntN(len(latencyBuckets))] * float64(time.Second))
				case 2:
					d = 0
				}
				m.Observe(&toolenv.Call{Tool: cached.Tools[0], Collection: cached, Frontend: "virtual"}, &toolenv.Result{Status: k.st, Source: k.src}, d)
				local[k]++
				durs[k.src] = append(durs[k.src], d)
			}
			mu.Lock()
			for k, n := range local {
				want[k] += n
			}
			for s, d := range durs {
				bySrc[s] = append(bySrc[s], d...)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	if n := <-scraped; n == 0 {
		t.Fatal("no scrape was taken while calls were counted")
	}
	text := scrape()
	for k, n := range want {
		series := `toolenv_calls_total{collection="c",frontend="virtual",source="` + string(k.src) + `",status="` + string(k.st) + `"}`
		if got := metricIn(t, text, series); got != strconv.Itoa(n) {
			t.Errorf("%s = %s, want %d", series, got, n)
		}
	}
	hits := 0
	for _, src := range sources {
		durs := bySrc[src]
		if src == toolenv.SourceCache {
			hits = len(durs)
		}
		checkHistogram(t, text, string(src))
		if got := metricIn(t, text, `toolenv_call_duration_seconds_count{source="`+string(src)+`"}`); got != strconv.Itoa(len(durs)) {
			t.Errorf("%s: count %s, want %d", src, got, len(durs))
		}
		var sum float64
		for i, bound := range latencyBuckets {
			n := 0
			for _, d := range durs {
				if d.Seconds() <= bound {
					n++
				}
			}
			le := strconv.FormatFloat(bound, 'g', -1, 64)
			if got := metricIn(t, text, `toolenv_call_duration_seconds_bucket{source="`+string(src)+`",le="`+le+`"}`); got != strconv.Itoa(n) {
				t.Errorf("%s: bucket %d (le %s) = %s, want %d", src, i, le, got, n)
			}
		}
		for _, d := range durs {
			sum += d.Seconds()
		}
		got, _ := strconv.ParseFloat(metricIn(t, text, `toolenv_call_duration_seconds_sum{source="`+string(src)+`"}`), 64)
		if math.Abs(got-sum) > 1e-6*sum {
			t.Errorf("%s: sum %g, want %g", src, got, sum)
		}
	}
	if got := metricIn(t, text, `toolenv_cache_lookups_total{result="hit"}`); got != strconv.Itoa(hits) {
		t.Errorf("cache hits %s, want %d", got, hits)
	}
	if got := metricIn(t, text, `toolenv_cache_lookups_total{result="miss"}`); got != strconv.Itoa(goroutines*each-hits) {
		t.Errorf("cache misses %s, want %d", got, goroutines*each-hits)
	}
}

// checkHistogram checks that src's latency histogram in text, if any, has
// cumulative buckets with +Inf equal to its count.
func checkHistogram(t *testing.T, text, src string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^toolenv_call_duration_seconds_bucket\{source="` + regexp.QuoteMeta(src) + `",le="([^"]+)"\} (\S+)$`)
	prev := -1.0
	var inf float64
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if v < prev {
			t.Errorf("%s: bucket le=%s holds %v, less than the one before (%v)", src, m[1], v, prev)
		}
		prev = v
		if m[1] == "+Inf" {
			inf = v
		}
	}
	if prev < 0 {
		return
	}
	count := regexp.MustCompile(`(?m)^toolenv_call_duration_seconds_count\{source="` + regexp.QuoteMeta(src) + `"\} (\S+)$`).FindStringSubmatch(text)
	if count == nil || count[1] != strconv.FormatFloat(inf, 'g', -1, 64) {
		t.Errorf("%s: +Inf bucket %v, count %v", src, inf, count)
	}
}

// metricIn returns the value of series in a /metrics text.
func metricIn(t *testing.T, text, series string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("/metrics has no %s", series)
	}
	return m[1]
}
