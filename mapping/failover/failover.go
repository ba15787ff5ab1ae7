package failover

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

// The Result.Meta keys a failover sets.
const (
	MetaFrom   = "failover_from"
	MetaTo     = "failover_to"
	MetaReason = "failover_reason"
	MetaScore  = "failover_score"
	MetaTried  = "failover_tried"
)

// Tools resolves tools and collections. *invoke.Registry implements it.
type Tools interface {
	Tool(id string) *toolenv.Tool
	Collection(name string) *toolenv.Collection
}

// Options configure a Failover.
type Options struct {
	// Mappings are the alternatives (structural, reviewed, …).
	Mappings *mapping.Set
	// Health records availability and latency; nil means a new one.
	Health *Health
	// MinScore is the lowest mapping score used (human and manifest
	// mappings need none); default 0.6.
	MinScore float64
	// MaxAlternatives bounds the alternatives tried per call; default 2.
	MaxAlternatives int
	// Statuses are the failures that trigger a failover; default
	// unavailable, rate_limited, timeout, upstream_error, unauthorized
	// and gone.
	Statuses []toolenv.Status
	// Logger logs failovers at info level; nil discards.
	Logger *slog.Logger
}

// DefaultStatuses are the failures that trigger a failover by default: the
// backend could not answer, not "the answer is no".
var DefaultStatuses = []toolenv.Status{
	toolenv.StatusUnavailable, toolenv.StatusRateLimited, toolenv.StatusTimeout,
	toolenv.StatusUpstreamError, toolenv.StatusUnauthorized, toolenv.StatusGone,
}

// Failover re-routes failed calls to mapped alternatives.
type Failover struct {
	tools    Tools
	opts     Options
	health   *Health
	triggers map[toolenv.Status]bool
	log      *slog.Logger
}

// New returns a failover over the tools the mappings name.
func New(tools Tools, opts Options) *Failover {
	if opts.MinScore <= 0 {
		opts.MinScore = 0.6
	}
	if opts.MaxAlternatives <= 0 {
		opts.MaxAlternatives = 2
	}
	if opts.Statuses == nil {
		opts.Statuses = DefaultStatuses
	}
	f := &Failover{tools: tools, opts: opts, health: opts.Health, triggers: map[toolenv.Status]bool{}, log: opts.Logger}
	if f.health == nil {
		f.health = NewHealth(HealthOptions{})
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	for _, s := range opts.Statuses {
		f.triggers[s] = true
	}
	return f
}

// Health returns the record the failover keeps.
func (f *Failover) Health() *Health { return f.health }

// Alternatives returns the alternatives of tool in the order they would be
// tried now: usable mappings (score, served target that is not
// deprecated), ranked by score, recorded availability and latency, and
// cost; tools whose circuit is open go last.
func (f *Failover) Alternatives(tool string) []*mapping.Mapping {
	type ranked struct {
		m    *mapping.Mapping
		u    float64
		open bool
	}
	var rs []ranked
	for _, m := range f.opts.Mappings.Alternatives(tool) {
		if m.Score < f.opts.MinScore && m.Provenance != mapping.Human && m.Provenance != mapping.Manifest {
			continue
		}
		t := f.tools.Tool(m.To)
		if t == nil || t.Deprecated != nil || t.Hidden() {
			continue
		}
		a := f.health.Availability(m.To)
		u := m.Score * a * a / (cost(t) * (1 + f.health.Latency(m.To).Seconds()))
		rs = append(rs, ranked{m, u, f.health.Open(m.To)})
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].open != rs[j].open {
			return !rs[i].open
		}
		if rs[i].u != rs[j].u {
			return rs[i].u > rs[j].u
		}
		return rs[i].m.To < rs[j].m.To
	})
	out := make([]*mapping.Mapping, len(rs))
	for i, r := range rs {
		out[i] = r.m
	}
	return out
}

// cost reads a tool's Meta["cost"], 1 when absent or not a positive
// number.
func cost(t *toolenv.Tool) float64 {
	if c, err := strconv.ParseFloat(t.Meta["cost"], 64); err == nil && c > 0 {
		return c
	}
	return 1
}

// Middleware is the failover. Put it first among the middleware before
// validation, so that faults injected further in, and the alternative's
// own validation, apply to the re-routed call as to any other.
func (f *Failover) Middleware() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil {
				return next.Invoke(ctx, call)
			}
			primary := call.Tool.ID
			alts := f.Alternatives(primary)
			skip := len(alts) > 0 && f.health.Open(primary)
			var res *toolenv.Result
			reason := "its circuit is open (it failed repeatedly just before)"
			if !skip {
				res = f.invoke(ctx, next, call)
				if !f.triggers[res.Status] || len(alts) == 0 {
					return res
				}
				reason = string(res.Status)
			}
			var tried []string
			for i, m := range alts {
				if i == f.opts.MaxAlternatives || ctx.Err() != nil {
					break
				}
				target := f.tools.Tool(m.To)
				tr, err := mapping.Translate(m, call.Args, target)
				if err != nil {
					tried = append(tried, m.To+" (arguments do not translate)")
					continue
				}
				alt := call.Clone()
				alt.Tool, alt.Args = target, tr.Args
				alt.Collection = f.tools.Collection(target.Collection)
				r := f.invoke(ctx, next, alt)
				if !r.OK() {
					tried = append(tried, fmt.Sprintf("%s (%s)", m.To, r.Status))
					continue
				}
				if body, changed, err := mapping.TranslateResponse(m, r.Body); err == nil && changed {
					r.Body = body
				}
				w := fmt.Sprintf("answered by %s because %s failed (%s)", m.To, primary, reason)
				if len(tr.Notes) > 0 {
					w += "; arguments translated: " + strings.Join(tr.Notes, ", ")
				}
				r.Warnings = append(r.Warnings, w)
				r.SetMeta(MetaFrom, primary)
				r.SetMeta(MetaTo, m.To)
				r.SetMeta(MetaReason, reason)
				r.SetMeta(MetaScore, strconv.FormatFloat(m.Score, 'f', 3, 64))
				if len(tried) > 0 {
					r.SetMeta(MetaTried, strings.Join(tried, ", "))
				}
				f.log.Info("failover", "from", primary, "to", m.To, "reason", reason)
				return r
			}
			if skip {
				res = f.invoke(ctx, next, call)
			}
			if len(tried) > 0 {
				res.SetMeta(MetaTried, strings.Join(tried, ", "))
				res.Warnings = append(res.Warnings, "no alternative answered: "+strings.Join(tried, ", "))
			}
			return res
		})
	}
}

// invoke calls next and records the outcome in the health record.
func (f *Failover) invoke(ctx context.Context, next toolenv.Handler, call *toolenv.Call) *toolenv.Result {
	start := time.Now()
	res := next.Invoke(ctx, call)
	f.health.Record(call.Tool.ID, !f.triggers[res.Status], time.Since(start))
	return res
}
