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
	cache   *cacheCollector
	faults  *prometheus.CounterVec
	store   *prometheus.CounterVec
	evicted *prometheus.CounterVec
	// series holds each label set's call counts (the label sets are
	// few: collections, front-ends, sources, statuses). Reads take no
	// lock (two cores counting calls would contend for one): the map is
	// immutable, replaced whole under mu when a label set is added.
	mu       sync.Mutex
	series   atomic.Pointer[map[callLabels]*callSeries]
	episodes *episodeCollector
}

type callLabels struct{ collection, frontend, source, status string }

var _ invoke.ReplayObserver = (*Metrics)(nil)

// NewMetrics returns the metrics: calls by collection, front-end, source
// and status; latency by source; cache lookups by result; store failures
// by operation; plus the Go
// runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		cache: newCacheCollector(),
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
	m.evicted.WithLabelValues("task")
	m.evicted.WithLabelValues("mcp")
	calls := newCallCollector(func() map[callLabels]*callSeries {
		if s := m.series.Load(); s != nil {
			return *s
		}
		return nil
	})
	m.reg.MustRegister(calls, m.cache, m.faults, m.store, m.evicted, m.episodes,
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
	cs := m.seriesOf(call, res)
	cs.observe(elapsed.Seconds())
	if op := res.Meta[invoke.MetaStoreError]; op != "" {
		m.store.WithLabelValues(op).Inc()
	}
	for _, f := range res.Faults {
		kind, _, _ := strings.Cut(f, ":")
		m.faults.WithLabelValues(cs.labels.collection, kind).Inc()
	}
	if c := m.lookups(call, res); c != nil {
		c.inc()
	}
}

// seriesOf returns the series counting call, answered with res.
func (m *Metrics) seriesOf(call *toolenv.Call, res *toolenv.Result) *callSeries {
	coll := ""
	if call.Tool != nil {
		coll = call.Tool.Collection
	}
	key := callLabels{coll, call.Frontend, string(res.Source), string(res.Status)}
	if series := m.series.Load(); series != nil {
		if cs := (*series)[key]; cs != nil {
			return cs
		}
	}
	return m.addSeries(key)
}

// lookups returns the cache lookup counter call, answered with res,
// counts in, or nil.
func (m *Metrics) lookups(call *toolenv.Call, res *toolenv.Result) *stripedCounter {
	if call.Collection == nil || !call.Collection.Policy.Cache || res.Source == toolenv.SourcePipeline {
		return nil
	}
	if res.Source == toolenv.SourceCache {
		return &m.cache.hit
	}
	return &m.cache.miss
}

// ObserveReplays implements invoke.ReplayObserver: the series and the
// lookup counter are found once. A result with a store error or faults
// is left to Observe.
func (m *Metrics) ObserveReplays(call *toolenv.Call, res *toolenv.Result) func(time.Duration) {
	if res.Meta[invoke.MetaStoreError] != "" || len(res.Faults) > 0 {
		return nil
	}
	cs, c := m.seriesOf(call, res), m.lookups(call, res)
	switch c {
	case nil:
		return cs.replays[0]
	case &m.cache.hit:
		return cs.replays[1]
	}
	return cs.replays[2]
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
	cs := &callSeries{labels: key}
	for i, c := range []*stripedCounter{nil, &m.cache.hit, &m.cache.miss} {
		cs.replays[i] = func(elapsed time.Duration) {
			cs.observe(elapsed.Seconds())
			if c != nil {
				c.inc()
			}
		}
	}
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
