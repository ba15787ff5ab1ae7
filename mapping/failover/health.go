package failover

import (
	"sort"
	"sync"
	"time"
)

// Health records the availability and latency of tools. It is safe for
// concurrent use; the zero value is not usable, use NewHealth.
type Health struct {
	mu       sync.Mutex
	tools    map[string]*stat
	alpha    float64
	trip     int
	cooldown time.Duration
	now      func() time.Time
}

type stat struct {
	calls, failures int
	avail           float64 // EWMA of success
	latency         float64 // EWMA of seconds
	consecutive     int
	openUntil       time.Time
}

// HealthOptions configure a Health.
type HealthOptions struct {
	// Alpha is the EWMA weight of the newest call; default 0.2.
	Alpha float64
	// Trip is how many consecutive failures open a tool's circuit;
	// default 3.
	Trip int
	// Cooldown is how long an open circuit skips the tool; default 30s.
	Cooldown time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// NewHealth returns an empty record.
func NewHealth(o HealthOptions) *Health {
	if o.Alpha <= 0 || o.Alpha > 1 {
		o.Alpha = 0.2
	}
	if o.Trip <= 0 {
		o.Trip = 3
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Health{tools: map[string]*stat{}, alpha: o.Alpha, trip: o.Trip, cooldown: o.Cooldown, now: o.Now}
}

// Record notes one call of tool: whether it succeeded and how long it
// took.
func (h *Health) Record(tool string, ok bool, latency time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.tools[tool]
	if s == nil {
		s = &stat{avail: 1, latency: latency.Seconds()}
		h.tools[tool] = s
	}
	s.calls++
	x := 0.0
	if ok {
		x = 1
		s.consecutive = 0
		s.openUntil = time.Time{}
	} else {
		s.failures++
		s.consecutive++
		if s.consecutive >= h.trip {
			s.openUntil = h.now().Add(h.cooldown)
		}
	}
	s.avail = (1-h.alpha)*s.avail + h.alpha*x
	s.latency = (1-h.alpha)*s.latency + h.alpha*latency.Seconds()
}

// Availability is the tool's recorded success rate (1 for a tool never
// seen).
func (h *Health) Availability(tool string) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.tools[tool]; s != nil {
		return s.avail
	}
	return 1
}

// Latency is the tool's recorded latency (0 for a tool never seen).
func (h *Health) Latency(tool string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.tools[tool]; s != nil {
		return time.Duration(s.latency * float64(time.Second))
	}
	return 0
}

// Open reports whether the tool's circuit is open: it failed Trip times
// in a row less than Cooldown ago.
func (h *Health) Open(tool string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.tools[tool]
	return s != nil && h.now().Before(s.openUntil)
}

// ToolHealth is one tool's record, for reports.
type ToolHealth struct {
	Tool         string        `json:"tool"`
	Calls        int           `json:"calls"`
	Failures     int           `json:"failures"`
	Availability float64       `json:"availability"`
	Latency      time.Duration `json:"latency_ns"`
	Open         bool          `json:"open"`
}

// Snapshot returns every tool's record, sorted by tool.
func (h *Health) Snapshot() []ToolHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ToolHealth, 0, len(h.tools))
	for id, s := range h.tools {
		out = append(out, ToolHealth{Tool: id, Calls: s.calls, Failures: s.failures, Availability: s.avail,
			Latency: time.Duration(s.latency * float64(time.Second)), Open: h.now().Before(s.openUntil)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
