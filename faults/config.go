package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"
)

// Config is a fault configuration: a seed and the rules. Every rule whose
// match fits a call applies to it, in order.
//
//	{
//	  "seed": 7,
//	  "rules": [
//	    {"collection": "demo", "tool": "current_weather",
//	     "latency": {"distribution": "lognormal", "median": "80ms", "sigma": 0.5},
//	     "rate_limit": {"per_second": 2, "burst": 5, "key": "tool"},
//	     "errors": {"rate": 0.1, "status": 503},
//	     "timeout": {"rate": 0.02, "after": "5s"},
//	     "flaky": {"period": "1m", "down": "10s", "status": 503}}
//	  ]
//	}
type Config struct {
	Seed  uint64 `json:"seed"`
	Rules []Rule `json:"rules"`
}

// Rule applies faults to the calls it matches.
type Rule struct {
	// Collection and Tool select the calls: a name or a glob ("get_*",
	// "*"); empty matches everything.
	Collection string `json:"collection,omitempty"`
	Tool       string `json:"tool,omitempty"`

	Latency   *Latency   `json:"latency,omitempty"`
	Timeout   *Timeout   `json:"timeout,omitempty"`
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	Errors    *Errors    `json:"errors,omitempty"`
	Flaky     *Flaky     `json:"flaky,omitempty"`
}

// Duration is a time.Duration written as a string ("150ms", "2s").
type Duration time.Duration

// UnmarshalJSON reads "150ms" (or a number of nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s := strings.Trim(string(b), `"`)
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration (write e.g. \"150ms\", \"2s\", \"1m\")", s)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if _, err := fmt.Sscan(string(b), &n); err != nil {
		return fmt.Errorf("%s is not a duration (write e.g. \"150ms\")", b)
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// Latency adds a delay to every matched call: Fixed, or drawn from a
// distribution — "uniform" (Min..Max), "normal" (Mean, StdDev, cut at 0),
// "lognormal" (Median, Sigma) or "exponential" (Mean).
type Latency struct {
	Fixed        Duration `json:"fixed,omitempty"`
	Distribution string   `json:"distribution,omitempty"`
	Min          Duration `json:"min,omitempty"`
	Max          Duration `json:"max,omitempty"`
	Mean         Duration `json:"mean,omitempty"`
	StdDev       Duration `json:"stddev,omitempty"`
	Median       Duration `json:"median,omitempty"`
	Sigma        float64  `json:"sigma,omitempty"`
}

// Timeout makes a share Rate of matched calls hang for After and fail
// with StatusTimeout (default After: 30s, or until the call's deadline).
type Timeout struct {
	Rate  float64  `json:"rate"`
	After Duration `json:"after,omitempty"`
}

// RateLimit is a token bucket: PerSecond tokens a second, holding at most
// Burst (default: PerSecond, at least 1). Key says what shares a bucket:
// "tool" (default), "collection", "session" (per session and tool) or
// "global".
type RateLimit struct {
	PerSecond float64 `json:"per_second"`
	Burst     float64 `json:"burst,omitempty"`
	Key       string  `json:"key,omitempty"`
}

// Errors makes a share Rate of matched calls fail with an HTTP 5xx Status
// (default 503).
type Errors struct {
	Rate   float64 `json:"rate"`
	Status int     `json:"status,omitempty"`
}

// Flaky takes a tool down for Down out of every Period (shifted by
// Offset), answering Status (default 503) meanwhile.
type Flaky struct {
	Period Duration `json:"period"`
	Down   Duration `json:"down"`
	Offset Duration `json:"offset,omitempty"`
	Status int      `json:"status,omitempty"`
}

// ReadConfig reads a configuration from a file, or from the text itself
// when it starts with '{' (an inline --faults value).
func ReadConfig(fileOrJSON string) (*Config, error) {
	data := []byte(fileOrJSON)
	name := "--faults"
	if !strings.HasPrefix(strings.TrimSpace(fileOrJSON), "{") {
		b, err := os.ReadFile(fileOrJSON)
		if err != nil {
			return nil, fmt.Errorf("faults: %w", err)
		}
		data, name = b, fileOrJSON
	}
	return ParseConfig(data, name)
}

// ParseConfig parses and checks a configuration; name says where it came
// from in errors.
func ParseConfig(data []byte, name string) (*Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt key must not silently disable a fault
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("faults: %s is not a fault configuration: %w (see docs/drift.md, \"Faults\")", name, err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("faults: %s: %w", name, err)
	}
	return &c, nil
}

// Check reports every problem of the configuration.
func (c *Config) Check() error {
	var errs []error
	for i, r := range c.Rules {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("rule %d: "+format, append([]any{i + 1}, args...)...))
		}
		for _, g := range []string{r.Collection, r.Tool} {
			if _, err := path.Match(g, ""); err != nil {
				bad("bad glob %q", g)
			}
		}
		if r.Latency == nil && r.Timeout == nil && r.RateLimit == nil && r.Errors == nil && r.Flaky == nil {
			bad("no fault (latency, timeout, rate_limit, errors or flaky)")
		}
		if l := r.Latency; l != nil {
			if err := l.check(); err != nil {
				bad("latency: %v", err)
			}
		}
		if t := r.Timeout; t != nil && (t.Rate < 0 || t.Rate > 1 || t.After < 0) {
			bad("timeout: rate must be in [0, 1] and after not negative")
		}
		if rl := r.RateLimit; rl != nil {
			if rl.PerSecond <= 0 || rl.Burst < 0 {
				bad("rate_limit: per_second must be positive and burst not negative")
			}
			switch rl.Key {
			case "", "tool", "collection", "session", "global":
			default:
				bad("rate_limit: key %q: want tool, collection, session or global", rl.Key)
			}
		}
		if e := r.Errors; e != nil {
			if e.Rate < 0 || e.Rate > 1 {
				bad("errors: rate must be in [0, 1]")
			}
			if e.Status != 0 && (e.Status < 500 || e.Status > 599) {
				bad("errors: status %d is not a 5xx status", e.Status)
			}
		}
		if f := r.Flaky; f != nil {
			if f.Period <= 0 || f.Down <= 0 || f.Down > f.Period {
				bad("flaky: period must be positive and down between 0 and period")
			}
			if f.Status != 0 && (f.Status < 500 || f.Status > 599) {
				bad("flaky: status %d is not a 5xx status", f.Status)
			}
		}
	}
	return errors.Join(errs...)
}

func (l *Latency) check() error {
	switch l.Distribution {
	case "":
		if l.Fixed <= 0 {
			return errors.New("give fixed (e.g. \"100ms\") or a distribution")
		}
	case "uniform":
		if l.Min < 0 || l.Max <= l.Min {
			return errors.New("uniform needs 0 <= min < max")
		}
	case "normal":
		if l.Mean <= 0 || l.StdDev < 0 {
			return errors.New("normal needs mean > 0 and stddev >= 0")
		}
	case "lognormal":
		if l.Median <= 0 || l.Sigma <= 0 {
			return errors.New("lognormal needs median > 0 and sigma > 0")
		}
	case "exponential":
		if l.Mean <= 0 {
			return errors.New("exponential needs mean > 0")
		}
	default:
		return fmt.Errorf("unknown distribution %q (want uniform, normal, lognormal or exponential)", l.Distribution)
	}
	return nil
}

// RulesFor returns the rules that may apply to calls of collection coll
// (their collection matches it; their tool, some or all of its tools),
// in order.
func (c *Config) RulesFor(coll string) []Rule {
	var out []Rule
	for _, r := range c.Rules {
		if m, _ := path.Match(r.Collection, coll); r.Collection == "" || r.Collection == "*" || m {
			out = append(out, r)
		}
	}
	return out
}

// matches reports whether the rule applies to a call of tool in coll.
func (r *Rule) matches(coll, tool string) bool {
	ok := func(glob, s string) bool {
		if glob == "" || glob == "*" {
			return true
		}
		m, _ := path.Match(glob, s)
		return m
	}
	return ok(r.Collection, coll) && ok(r.Tool, tool)
}
