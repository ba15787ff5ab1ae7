package virtual

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/internal/breaker"
)

// Meta keys the backend sets on results, besides those of its stages.
const (
	// MetaFinal is "true" on an upstream failure that is the API's own
	// answer to the call (an MCP server's JSON-RPC error): it is returned
	// as it is, never simulated.
	MetaFinal = "final"
	// MetaFallback names the stage that answered after an earlier one
	// failed: "simulator" or "synthesizer"; "none" when the simulator's
	// failure is returned (OnSimulatorFailure FallbackError).
	MetaFallback = "fallback"
)

// The values of simulate.MetaFailure this backend adds to the
// simulator's own ("endpoint", "unparseable"), and of upstream.MetaRule.
const (
	// FailureCircuitOpen: the stage was not called because its circuit
	// breaker is open.
	FailureCircuitOpen = "circuit_open"
	// FailureNoTime: the call's deadline left no time for the stage.
	FailureNoTime = "no_time"
	// FailureTooLarge: the stage answered with more than MaxAnswerBytes
	// (upstream.MetaRule is then upstream's "body_too_large").
	FailureTooLarge = "too_large"
)

// What to do when the simulator fails (Config.OnSimulatorFailure).
const (
	// FallbackSynthesize answers with the offline synthesizer, marked.
	FallbackSynthesize = "synthesize"
	// FallbackError returns the simulator's failure.
	FallbackError = "error"
)

// Config names the stages. Leave a stage nil when it is not configured;
// Synthesizer nil means a simulate.NewSynthesizer with default options.
type Config struct {
	// Upstream calls the real API (typically *upstream.Backend).
	Upstream toolenv.Handler
	// Simulator asks an LLM (typically *simulate.Simulator).
	Simulator toolenv.Handler
	// Synthesizer answers offline (typically *simulate.Synthesizer).
	Synthesizer toolenv.Handler
	// Logger logs each fall-through at debug level; nil discards.
	Logger *slog.Logger

	// SimulatorEndpoint names the simulator's model endpoint (its base
	// URL, redacted) in warnings; it also keys its circuit breaker.
	SimulatorEndpoint string
	// SimulatorBudget bounds the simulator stage of one call, every
	// attempt included; default 30 s. The stage also always ends Reserve
	// before the call's own deadline, so the synthesizer can answer.
	SimulatorBudget time.Duration
	// Reserve is the part of a call's deadline kept for the stages after
	// the upstream and the simulator; default 1 s (half of what is left
	// when less than 2 s is).
	Reserve time.Duration
	// OnSimulatorFailure is FallbackSynthesize (default) or
	// FallbackError.
	OnSimulatorFailure string
	// Breakers configure the circuit breaker of each upstream host and of
	// the model endpoint.
	Breakers BreakerOptions
	// MaxAnswerBytes is the largest answer body the upstream or the
	// simulator may give (the server's --max-result-bytes); 0 means no
	// limit. A larger answer is that stage's failure: it counts for the
	// stage's circuit breaker (so a dependency that keeps answering too
	// much is skipped, not downloaded again on every call) and the call
	// falls through to the next stage, as for any other failure.
	MaxAnswerBytes int
}

// BreakerOptions configure circuit breakers: after Failures failures in a
// row (default 5; negative: never) calls skip the dependency for
// Cooldown (default 30 s, doubled after each failed probe up to 5 min),
// then one call probes it.
type BreakerOptions struct {
	Failures int
	Cooldown time.Duration
	// Now is the clock; tests inject their own.
	Now func() time.Time
}

// Backend is the composed virtual backend, a toolenv.Handler safe for
// concurrent use.
type Backend struct {
	up, sim, synth toolenv.Handler
	log            *slog.Logger
	cfg            Config
	upBreakers     *breaker.Set
	simBreaker     *breaker.Breaker
	target         func(*toolenv.Tool) string
}

var _ toolenv.Handler = (*Backend)(nil)

// New returns the composed backend.
func New(cfg Config) *Backend {
	b := &Backend{up: present(cfg.Upstream), sim: present(cfg.Simulator), synth: present(cfg.Synthesizer), log: cfg.Logger, cfg: cfg}
	if b.synth == nil {
		b.synth = simulate.NewSynthesizer(simulate.SynthOptions{})
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.cfg.SimulatorBudget <= 0 {
		b.cfg.SimulatorBudget = 30 * time.Second
	}
	if b.cfg.OnSimulatorFailure == "" {
		b.cfg.OnSimulatorFailure = FallbackSynthesize
	}
	if b.cfg.SimulatorEndpoint == "" {
		b.cfg.SimulatorEndpoint = "the LLM endpoint"
	}
	bo := breaker.Options{Failures: cfg.Breakers.Failures, Cooldown: cfg.Breakers.Cooldown, Now: cfg.Breakers.Now}
	b.upBreakers = breaker.NewSet(bo)
	b.simBreaker = breaker.New(bo)
	if t, ok := b.up.(interface{ Target(*toolenv.Tool) string }); ok {
		b.target = t.Target
	} else {
		b.target = func(*toolenv.Tool) string { return "upstream" }
	}
	return b
}

// present returns h, or nil when h is nil or a nil pointer in an
// interface (a stage that was not configured).
func present(h toolenv.Handler) toolenv.Handler {
	if isNil(h) {
		return nil
	}
	return h
}

// isNil reports whether v is nil or a nil pointer held in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Invoke runs the stages in order and returns the first answer: the real
// API, then the simulator, then (unless OnSimulatorFailure is
// FallbackError) the synthesizer. A stage whose circuit breaker is open is
// skipped at once; the simulator gets at most SimulatorBudget and never
// the call's last Reserve. The result says in Meta and Warnings which
// stages were passed over and why.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	var passed []*toolenv.Result
	if b.up != nil {
		r := b.upstream(ctx, call)
		if r.OK() || r.Status == toolenv.StatusCanceled || r.Meta[MetaFinal] == "true" {
			return r
		}
		if r.Meta[upstream.MetaRule] != "not_configured" {
			passed = append(passed, r)
			b.log.LogAttrs(ctx, slog.LevelDebug, "upstream failed; simulating", slog.String("tool", toolID(call)),
				slog.String("class", r.Meta[upstream.MetaClass]), slog.String("err", r.Error))
		}
	}
	if b.sim != nil {
		r := b.simulate(ctx, call)
		if r.Meta[simulate.MetaFailure] == "" || r.Status == toolenv.StatusCanceled || ctx.Err() != nil {
			if len(passed) > 0 && r.OK() {
				r.SetMeta(MetaFallback, "simulator")
			}
			return annotate(r, passed, "")
		}
		b.log.LogAttrs(ctx, slog.LevelDebug, "simulator failed", slog.String("tool", toolID(call)),
			slog.String("failure", r.Meta[simulate.MetaFailure]), slog.String("err", r.Error), slog.String("then", b.cfg.OnSimulatorFailure))
		if b.cfg.OnSimulatorFailure == FallbackError {
			r.SetMeta(MetaFallback, "none")
			return annotate(r, passed, "")
		}
		passed = append(passed, r)
	}
	if ctx.Err() != nil {
		r := toolenv.ResultOf(ctx.Err())
		return annotate(r, passed, "")
	}
	r := b.synth.Invoke(ctx, call)
	if len(passed) > 0 && r.OK() {
		r.SetMeta(MetaFallback, "synthesizer")
	}
	return annotate(r, passed, b.cfg.SimulatorEndpoint)
}

// upstream calls the real API through its host's circuit breaker, within
// what the call's deadline leaves after the reserve.
func (b *Backend) upstream(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	key := ""
	if call != nil {
		key = b.target(call.Tool)
	}
	if key == "" { // not reachable upstream: the backend says why
		return b.up.Invoke(ctx, call)
	}
	done, err := b.upBreakers.Get(key).Allow()
	if err != nil {
		r := &toolenv.Result{Status: toolenv.StatusUnavailable, Error: "upstream " + key + ": " + err.Error(), Source: toolenv.SourceUpstream}
		r.SetMeta(upstream.MetaClass, string(upstream.ClassNotConnected))
		r.SetMeta(upstream.MetaRule, FailureCircuitOpen)
		r.SetMeta(upstream.MetaCacheable, "false")
		return r
	}
	sctx, cancel, ok := b.stage(ctx, 0)
	if !ok {
		done(true, "") // not the upstream's fault
		r := &toolenv.Result{Status: toolenv.StatusTimeout, Error: "upstream " + key + ": not called: the call's deadline leaves no time", Source: toolenv.SourceUpstream}
		r.SetMeta(upstream.MetaRule, FailureNoTime)
		r.SetMeta(upstream.MetaCacheable, "false")
		return r
	}
	defer cancel()
	r := b.up.Invoke(sctx, call)
	if ctx.Err() != nil && r.Status != toolenv.StatusOK { // the caller went away, or its own deadline passed
		done(true, "")
		return r
	}
	if r.OK() && b.cfg.MaxAnswerBytes > 0 && len(r.Body) > b.cfg.MaxAnswerBytes {
		r = tooLarge(r, "upstream "+key, b.cfg.MaxAnswerBytes)
		r.SetMeta(upstream.MetaRule, "body_too_large")
		r.SetMeta(upstream.MetaCacheable, "false")
	}
	done(!upstream.Unreachable(r) && r.Meta[upstream.MetaRule] != "body_too_large", r.Error)
	return r
}

// tooLarge turns an answer of more than max bytes into the failure of
// the stage that gave it.
func tooLarge(r *toolenv.Result, stage string, max int) *toolenv.Result {
	out := &toolenv.Result{
		Status: toolenv.StatusTooLarge,
		Error:  fmt.Sprintf("%s: the answer is %d bytes, over the server's limit of %d", stage, len(r.Body), max),
		Hint:   "narrow the request, or raise the server's --max-result-bytes",
		Source: r.Source,
	}
	for k, v := range r.Meta {
		out.SetMeta(k, v)
	}
	return out
}

// simulate asks the simulator through the endpoint's circuit breaker,
// within SimulatorBudget and what the call's deadline leaves after the
// reserve.
func (b *Backend) simulate(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	done, err := b.simBreaker.Allow()
	if err != nil {
		r := &toolenv.Result{Status: toolenv.StatusUnavailable, Error: "simulator: " + b.cfg.SimulatorEndpoint + ": " + err.Error(), Source: toolenv.SourceSimulator}
		r.SetMeta(simulate.MetaFailure, FailureCircuitOpen)
		r.SetMeta(simulate.MetaCacheable, "false")
		return r
	}
	sctx, cancel, ok := b.stage(ctx, b.cfg.SimulatorBudget)
	if !ok {
		done(true, "")
		r := &toolenv.Result{Status: toolenv.StatusTimeout, Error: "simulator: not called: the call's deadline leaves no time", Source: toolenv.SourceSimulator}
		r.SetMeta(simulate.MetaFailure, FailureNoTime)
		r.SetMeta(simulate.MetaCacheable, "false")
		return r
	}
	defer cancel()
	r := b.sim.Invoke(sctx, call)
	if r.OK() && ctx.Err() == nil && b.cfg.MaxAnswerBytes > 0 && len(r.Body) > b.cfg.MaxAnswerBytes {
		r = tooLarge(r, "simulator: "+b.cfg.SimulatorEndpoint, b.cfg.MaxAnswerBytes)
		r.SetMeta(simulate.MetaFailure, FailureTooLarge)
		r.SetMeta(simulate.MetaCacheable, "false")
	}
	switch {
	case ctx.Err() != nil:
		done(true, "") // the caller's doing
	case r.Meta[simulate.MetaFailure] == FailureTooLarge:
		done(false, r.Error)
	case r.Meta[simulate.MetaFailure] == "endpoint":
		if errors.Is(sctx.Err(), context.DeadlineExceeded) && r.Status != toolenv.StatusTimeout {
			r.Status = toolenv.StatusTimeout
		}
		done(false, r.Error)
	default:
		done(true, "")
	}
	return r
}

// stage returns the context of a stage: budget (0: none of its own) and
// the call's deadline less the reserve, whichever ends first. ok is false
// when no time is left.
func (b *Backend) stage(ctx context.Context, budget time.Duration) (context.Context, context.CancelFunc, bool) {
	d := budget
	if dl, has := ctx.Deadline(); has {
		left := time.Until(dl)
		reserve := b.cfg.Reserve
		if reserve <= 0 {
			reserve = time.Second
		}
		if left < 2*reserve {
			reserve = left / 2
		}
		left -= reserve
		if left <= 0 {
			return ctx, func() {}, false
		}
		if d <= 0 || left < d {
			d = left
		}
	}
	if d <= 0 {
		return ctx, func() {}, true
	}
	c, cancel := context.WithTimeout(ctx, d)
	return c, cancel, true
}

// annotate tells the result's reader which stages were passed over and
// why: a warning each, and the upstream's class in Meta. A synthesized
// answer that stands in for a failed simulator says so in place of the
// synthesizer's usual warning (which says no simulator is configured).
func annotate(r *toolenv.Result, passed []*toolenv.Result, endpoint string) *toolenv.Result {
	var simFailed *toolenv.Result
	for _, p := range passed {
		switch p.Source {
		case toolenv.SourceUpstream:
			r.Warnings = append(r.Warnings, "the real API was not used: "+p.Error)
			for _, k := range []string{upstream.MetaClass, upstream.MetaRule, upstream.MetaHTTPStatus} {
				if v := p.Meta[k]; v != "" && r.Meta[k] == "" {
					r.SetMeta(k, v)
				}
			}
		case toolenv.SourceSimulator:
			simFailed = p
			r.SetMeta(simulate.MetaFailure, p.Meta[simulate.MetaFailure])
		default:
			r.Warnings = append(r.Warnings, p.Error)
		}
	}
	if simFailed == nil {
		return r
	}
	cause := strings.TrimPrefix(simFailed.Error, "simulator: ")
	if r.Source == toolenv.SourceSynthesizer {
		for i, w := range r.Warnings {
			if w == simulate.SynthWarning {
				r.Warnings = append(r.Warnings[:i:i], r.Warnings[i+1:]...)
				break
			}
		}
		r.Warnings = append(r.Warnings, "synthesized offline by toolenv because the LLM simulator ("+endpoint+") could not answer: "+cause+
			"; the response has the documented shape but its values are made up")
		return r
	}
	r.Warnings = append(r.Warnings, "the simulator could not answer: "+cause)
	return r
}

func toolID(call *toolenv.Call) string {
	if call == nil || call.Tool == nil {
		return ""
	}
	return call.Tool.ID
}
