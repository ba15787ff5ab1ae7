package server

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets are toolenv_call_duration_seconds' upper bounds.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// callStripes is how many stripes a label set's counts are spread over.
// Every call counts itself in one stripe picked at random, so that two
// cores counting calls at once rarely write the same cache line (one
// shared counter bounces between them on every call); a scrape adds the
// stripes up.
const callStripes = 8

// callSeries counts the calls of one label set: toolenv_calls_total and
// toolenv_call_duration_seconds both come from its buckets, so that a
// scrape taken while calls are counted is consistent (the count is the
// buckets' sum).
type callSeries struct {
	labels  callLabels
	stripes [callStripes]callStripe
	// replays are the functions ObserveReplays returns for the label
	// set, made once with it so that every hit kept shares them: one
	// counting no cache lookup, one a hit, one a miss.
	replays [3]func(time.Duration)
}

type callStripe struct {
	// buckets counts the calls whose duration is at most
	// latencyBuckets[i] and over the bound before; the last one, those
	// over every bound.
	buckets [18]atomic.Uint64
	sum     atomic.Uint64 // float64 bits: seconds
	_       [64]byte      // the next stripe on other cache lines
}

// observe counts one call of seconds. A call of no time (a replayed
// hit's) counts in the first bucket and adds nothing to the sum.
func (cs *callSeries) observe(seconds float64) {
	st := &cs.stripes[rand.Uint32()%callStripes]
	if seconds == 0 {
		st.buckets[0].Add(1)
		return
	}
	st.buckets[sort.SearchFloat64s(latencyBuckets, seconds)].Add(1)
	for {
		old := st.sum.Load()
		if st.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+seconds)) {
			return
		}
	}
}

// read returns the buckets (not cumulative) and the sum of seconds.
func (cs *callSeries) read() (buckets [18]uint64, sum float64) {
	for i := range cs.stripes {
		st := &cs.stripes[i]
		for j := range st.buckets {
			buckets[j] += st.buckets[j].Load()
		}
		sum += math.Float64frombits(st.sum.Load())
	}
	return buckets, sum
}

// callCollector exposes the call series as toolenv_calls_total by
// collection, front-end, source and status and
// toolenv_call_duration_seconds by source.
type callCollector struct {
	series  func() map[callLabels]*callSeries
	calls   *prometheus.Desc
	latency *prometheus.Desc
}

func newCallCollector(series func() map[callLabels]*callSeries) *callCollector {
	return &callCollector{series: series,
		calls: prometheus.NewDesc("toolenv_calls_total", "Tool calls by collection, front-end, source of the answer and status.",
			[]string{"collection", "frontend", "source", "status"}, nil),
		latency: prometheus.NewDesc("toolenv_call_duration_seconds", "Time to answer a tool call, by source of the answer.", []string{"source"}, nil),
	}
}

func (c *callCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.calls
	ch <- c.latency
}

func (c *callCollector) Collect(ch chan<- prometheus.Metric) {
	type latency struct {
		buckets [18]uint64
		sum     float64
	}
	bySource := map[string]*latency{}
	for k, cs := range c.series() {
		buckets, sum := cs.read()
		var n uint64
		for _, b := range buckets {
			n += b
		}
		ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(n), k.collection, k.frontend, k.source, k.status)
		l := bySource[k.source]
		if l == nil {
			l = &latency{}
			bySource[k.source] = l
		}
		for i, b := range buckets {
			l.buckets[i] += b
		}
		l.sum += sum
	}
	for src, l := range bySource {
		cum := make(map[float64]uint64, len(latencyBuckets))
		var n uint64
		for i, bound := range latencyBuckets {
			n += l.buckets[i]
			cum[bound] = n
		}
		n += l.buckets[len(latencyBuckets)]
		ch <- prometheus.MustNewConstHistogram(c.latency, n, l.sum, cum, src)
	}
}

// stripedCounter is a counter spread over stripes as callSeries is.
type stripedCounter struct {
	stripes [callStripes]struct {
		n atomic.Uint64
		_ [56]byte
	}
}

func (c *stripedCounter) inc() { c.stripes[rand.Uint32()%callStripes].n.Add(1) }

func (c *stripedCounter) load() uint64 {
	var n uint64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}

// cacheCollector exposes toolenv_cache_lookups_total by result.
type cacheCollector struct {
	hit, miss stripedCounter
	desc      *prometheus.Desc
}

func newCacheCollector() *cacheCollector {
	return &cacheCollector{desc: prometheus.NewDesc("toolenv_cache_lookups_total", "Cache lookups for cacheable collections: hit or miss.", []string{"result"}, nil)}
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.hit.load()), "hit")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.miss.load()), "miss")
}
