package server

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// episodeCollector reports the RL episodes (package episode) of the
// process: open now, ended by how, refused by why.
type episodeCollector struct {
	mu     sync.Mutex
	counts func() map[string]int
	open   *prometheus.Desc
	ended  *prometheus.Desc
	refuse *prometheus.Desc
}

func newEpisodeCollector() *episodeCollector {
	return &episodeCollector{
		open: prometheus.NewDesc("toolenv_episodes_open", "RL episodes open in this process (each holds a slot of --max-episodes).", nil, nil),
		ended: prometheus.NewDesc("toolenv_episodes_finished_total", "RL episodes ended in this process, by how: done (final answer or step limit), closed (by their client), expired (idle).",
			[]string{"how"}, nil),
		refuse: prometheus.NewDesc("toolenv_episodes_refused_total", "Resets refused for room, by why: full (--max-episodes) or client_share (--max-episodes-per-client).",
			[]string{"reason"}, nil),
	}
}

func (c *episodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.ended
	ch <- c.refuse
}

func (c *episodeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	f := c.counts
	c.mu.Unlock()
	m := map[string]int{}
	if f != nil {
		m = f()
	}
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(m["open"]))
	for _, how := range []string{"done", "closed", "expired"} {
		ch <- prometheus.MustNewConstMetric(c.ended, prometheus.CounterValue, float64(m[how]), how)
	}
	for _, why := range []string{"full", "client_share"} {
		ch <- prometheus.MustNewConstMetric(c.refuse, prometheus.CounterValue, float64(m["refused_"+why]), why)
	}
}

// CountEpisodes makes /metrics report the RL episodes counts returns:
// "open", "done", "closed", "expired", "refused_full" and
// "refused_client_share" (package episode calls it; a later call
// replaces the earlier).
func (m *Metrics) CountEpisodes(counts func() map[string]int) {
	if m == nil {
		return
	}
	m.episodes.mu.Lock()
	m.episodes.counts = counts
	m.episodes.mu.Unlock()
}
