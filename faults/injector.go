package faults

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// Options configure an Injector.
type Options struct {
	// Clock gives the time and waits; nil means the wall clock.
	Clock Clock
	// Logger logs injected faults at debug level; nil discards.
	Logger *slog.Logger
}

// Injector injects the faults of a Config into calls. It is safe for
// concurrent use.
type Injector struct {
	cfg   Config
	clock Clock
	log   *slog.Logger
	start time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	counts  map[string]uint64
}

// New returns an injector for cfg (checked with cfg.Check).
func New(cfg *Config, opts Options) (*Injector, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	clock := opts.Clock
	if clock == nil {
		clock = RealClock{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Injector{cfg: *cfg, clock: clock, log: log, start: clock.Now(), buckets: map[string]*bucket{}, counts: map[string]uint64{}}, nil
}

// The Result.Meta key holding the HTTP status an injected 5xx stands for.
const MetaHTTPStatus = "fault_http_status"

// Middleware returns the pipeline middleware that injects the faults.
func (in *Injector) Middleware() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			return in.invoke(ctx, call, next)
		})
	}
}

func (in *Injector) invoke(ctx context.Context, call *toolenv.Call, next toolenv.Handler) *toolenv.Result {
	if call.Tool == nil {
		return next.Invoke(ctx, call)
	}
	coll, tool := call.Tool.Collection, call.Tool.Name
	var faults []string
	var delay time.Duration
	for i := range in.cfg.Rules {
		r := &in.cfg.Rules[i]
		if !r.matches(coll, tool) {
			continue
		}
		d := in.draws(i, call.Tool.ID)
		if rl := r.RateLimit; rl != nil {
			if ok, wait := in.bucket(i, rl, call).take(in.clock.Now()); !ok {
				res := toolenv.Errorf(toolenv.StatusRateLimited, fmt.Sprintf("retry after %s", wait.Round(time.Millisecond)),
					"rate limit exceeded: %g requests per second (injected fault)", rl.PerSecond)
				res.RetryAfter = wait
				return in.failed(res, append(faults, "rate_limited"), call)
			}
		}
		if f := r.Flaky; f != nil {
			phase := (in.clock.Now().Sub(in.start) + f.Offset.d()) % f.Period.d()
			if phase < 0 {
				phase += f.Period.d()
			}
			if phase < f.Down.d() {
				res := serverError(f.Status, fmt.Sprintf("the API is down for %s (flaky window, injected fault)", (f.Down.d()-phase).Round(time.Millisecond)))
				return in.failed(res, append(faults, fmt.Sprintf("flaky:%d", orStatus(f.Status))), call)
			}
		}
		if e := r.Errors; e != nil && d.next() < e.Rate {
			res := serverError(e.Status, "intermittent server error (injected fault)")
			return in.failed(res, append(faults, fmt.Sprintf("error:%d", orStatus(e.Status))), call)
		}
		if t := r.Timeout; t != nil && d.next() < t.Rate {
			after := t.After.d()
			if after <= 0 {
				after = 30 * time.Second
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < after {
				after = time.Until(dl)
			}
			if err := in.clock.Sleep(ctx, after); err != nil {
				return in.failed(toolenv.ResultOf(err), append(faults, "timeout"), call)
			}
			res := toolenv.Errorf(toolenv.StatusTimeout, "try again; the API answers most calls", "no answer within %s (injected fault)", after.Round(time.Millisecond))
			return in.failed(res, append(faults, "timeout:"+after.Round(time.Millisecond).String()), call)
		}
		if l := r.Latency; l != nil {
			dd := l.delay(d)
			delay += dd
			faults = append(faults, "latency:"+dd.Round(time.Microsecond).String())
		}
	}
	if delay > 0 {
		if err := in.clock.Sleep(ctx, delay); err != nil {
			return in.failed(toolenv.ResultOf(err), faults, call)
		}
	}
	res := next.Invoke(ctx, call)
	if len(faults) > 0 {
		res.Faults = append(res.Faults, faults...)
	}
	return res
}

func (in *Injector) failed(res *toolenv.Result, faults []string, call *toolenv.Call) *toolenv.Result {
	res.Faults = append(res.Faults, faults...)
	res.SetMeta("cacheable", "false")
	in.log.Debug("fault injected", "tool", call.Tool.ID, "status", res.Status, "faults", faults)
	return res
}

// draws returns the draws of this call of rule i on a tool: the n-th call
// gets the n-th draws, whatever other tools do.
func (in *Injector) draws(rule int, toolID string) *draws {
	key := fmt.Sprintf("%d\x00%s", rule, toolID)
	in.mu.Lock()
	n := in.counts[key]
	in.counts[key] = n + 1
	in.mu.Unlock()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", in.cfg.Seed, key, n)
	return &draws{state: h.Sum64()}
}

func (in *Injector) bucket(rule int, rl *RateLimit, call *toolenv.Call) *bucket {
	var k string
	switch rl.Key {
	case "collection":
		k = call.Tool.Collection
	case "session":
		k = call.Session + "\x00" + call.Tool.ID
	case "global":
		k = ""
	default:
		k = call.Tool.ID
	}
	k = fmt.Sprintf("%d\x00%s", rule, k)
	in.mu.Lock()
	defer in.mu.Unlock()
	b := in.buckets[k]
	if b == nil {
		b = newBucket(rl.PerSecond, rl.Burst, in.clock.Now())
		in.buckets[k] = b
	}
	return b
}

func orStatus(s int) int {
	if s == 0 {
		return http.StatusServiceUnavailable
	}
	return s
}

// serverError is the result of an injected HTTP 5xx: 503 is unavailable,
// 504 a timeout, any other 5xx an upstream error (REST clients get 502).
func serverError(status int, msg string) *toolenv.Result {
	status = orStatus(status)
	st := toolenv.StatusUpstreamError
	switch status {
	case http.StatusServiceUnavailable:
		st = toolenv.StatusUnavailable
	case http.StatusGatewayTimeout:
		st = toolenv.StatusTimeout
	}
	res := toolenv.Errorf(st, "the failure is intermittent: retry", "%d %s: %s", status, http.StatusText(status), msg)
	res.SetMeta(MetaHTTPStatus, fmt.Sprint(status))
	return res
}
