package server

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// Metrics are the server's Prometheus metrics, in a registry of their own
// (no global state). It implements invoke.Observer.
type Metrics struct {
	reg     *prometheus.Registry
	calls   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	cache   *prometheus.CounterVec
	faults  *prometheus.CounterVec
	store   *prometheus.CounterVec
	evicted *prometheus.CounterVec
	// series holds each label set's call counter and latency histogram
	// once looked up (the label sets are few: collections, front-ends,
	// sources, statuses), so that counting a call hashes no labels.
	// Reads take no lock (two cores counting calls would contend for
	// one): the map is immutable, replaced whole under mu when a label
	// set is added.
	mu                  sync.Mutex
	series              atomic.Pointer[map[callLabels]*callSeries]
	cacheHit, cacheMiss prometheus.Counter
	episodes            *episodeCollector
}

type callLabels struct{ collection, frontend, source, status string }

type callSeries struct {
	calls   prometheus.Counter
	latency prometheus.Observer
}

var _ invoke.Observer = (*Metrics)(nil)

// NewMetrics returns the metrics: calls by collection, front-end, source
// and status; latency by source; cache lookups by result; store failures
// by operation; plus the Go
// runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolenv_calls_total", Help: "Tool calls by collection, front-end, source of the answer and status.",
		}, []string{"collection", "frontend", "source", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolenv_call_duration_seconds", Help: "Time to answer a tool call, by source of the answer.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"source"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolenv_cache_lookups_total", Help: "Cache lookups for cacheable collections: hit or miss.",
		}, []string{"result"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolenv_faults_total", Help: "Operational faults injected (toolenv serve --faults), by collection and kind (latency, timeout, rate_limited, error, flaky).",
		}, []string{"collection", "fault"}),
		store: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolenv_store_errors_total", Help: "Calls the store failed, by operation: read and claim (the call failed fast), write (the answer was served with a warning but not kept).",
		}, []string{"op"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolenv_sessions_evicted_total", Help: "Sessions this process evicted at --max-sessions (the idlest not in use, to make room for a new one), by kind: task (SLOT/SEL) or mcp.",
		}, []string{"kind"}),
	}
	m.episodes = newEpisodeCollector()
	m.cacheHit, m.cacheMiss = m.cache.WithLabelValues("hit"), m.cache.WithLabelValues("miss")
	m.evicted.WithLabelValues("task")
	m.evicted.WithLabelValues("mcp")
	m.reg.MustRegister(m.calls, m.latency, m.cache, m.faults, m.store, m.evicted, m.episodes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// SessionsEvicted counts n sessions of kind ("task" or "mcp") evicted
// at the cap: the OnEvict of session.Options, tasksession.Options and
// MCPHTTPOptions.
func (m *Metrics) SessionsEvicted(kind string, n int) {
	if m != nil {
		m.evicted.WithLabelValues(kind).Add(float64(n))
	}
}

// Observe records one finished call.
func (m *Metrics) Observe(call *toolenv.Call, res *toolenv.Result, elapsed time.Duration) {
	coll := ""
	if call.Tool != nil {
		coll = call.Tool.Collection
	}
	src := string(res.Source)
	key := callLabels{coll, call.Frontend, src, string(res.Status)}
	var cs *callSeries
	if series := m.series.Load(); series != nil {
		cs = (*series)[key]
	}
	if cs == nil {
		cs = m.addSeries(key)
	}
	cs.calls.Inc()
	cs.latency.Observe(elapsed.Seconds())
	if op := res.Meta[invoke.MetaStoreError]; op != "" {
		m.store.WithLabelValues(op).Inc()
	}
	for _, f := range res.Faults {
		kind, _, _ := strings.Cut(f, ":")
		m.faults.WithLabelValues(coll, kind).Inc()
	}
	if call.Collection != nil && call.Collection.Policy.Cache && res.Source != toolenv.SourcePipeline {
		if res.Source == toolenv.SourceCache {
			m.cacheHit.Inc()
		} else {
			m.cacheMiss.Inc()
		}
	}
}

// addSeries returns the series of a label set, adding it to m.series.
func (m *Metrics) addSeries(key callLabels) *callSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.series.Load()
	if old != nil {
		if cs := (*old)[key]; cs != nil {
			return cs
		}
	}
	cs := &callSeries{calls: m.calls.WithLabelValues(key.collection, key.frontend, key.source, key.status), latency: m.latency.WithLabelValues(key.source)}
	series := map[callLabels]*callSeries{key: cs}
	if old != nil {
		for k, v := range *old {
			series[k] = v
		}
	}
	m.series.Store(&series)
	return cs
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
