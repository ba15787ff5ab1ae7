package virtual

import (
	"context"
	"log/slog"
	"reflect"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/upstream"
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
}

// Backend is the composed virtual backend, a toolenv.Handler safe for
// concurrent use.
type Backend struct {
	up, sim, synth toolenv.Handler
	log            *slog.Logger
}

var _ toolenv.Handler = (*Backend)(nil)

// New returns the composed backend.
func New(cfg Config) *Backend {
	b := &Backend{up: present(cfg.Upstream), sim: present(cfg.Simulator), synth: present(cfg.Synthesizer), log: cfg.Logger}
	if b.synth == nil {
		b.synth = simulate.NewSynthesizer(simulate.SynthOptions{})
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
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

// Invoke runs the stages in order and returns the first answer.
func (b *Backend) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	var passed []*toolenv.Result
	if b.up != nil {
		r := b.up.Invoke(ctx, call)
		if r.OK() || r.Status == toolenv.StatusCanceled {
			return r
		}
		if r.Meta[upstream.MetaRule] != "not_configured" {
			passed = append(passed, r)
			b.log.LogAttrs(ctx, slog.LevelDebug, "upstream failed; simulating", slog.String("tool", toolID(call)),
				slog.String("class", r.Meta[upstream.MetaClass]), slog.String("err", r.Error))
		}
	}
	if b.sim != nil {
		r := b.sim.Invoke(ctx, call)
		if r.Meta[simulate.MetaFailure] == "" || r.Status == toolenv.StatusCanceled {
			return annotate(r, passed)
		}
		passed = append(passed, r)
		b.log.LogAttrs(ctx, slog.LevelDebug, "simulator failed; synthesizing", slog.String("tool", toolID(call)),
			slog.String("failure", r.Meta[simulate.MetaFailure]), slog.String("err", r.Error))
	}
	if ctx.Err() != nil {
		r := toolenv.ResultOf(ctx.Err())
		return annotate(r, passed)
	}
	return annotate(b.synth.Invoke(ctx, call), passed)
}

// annotate tells the result's reader which stages were passed over and
// why: a warning each, and the upstream's class in Meta.
func annotate(r *toolenv.Result, passed []*toolenv.Result) *toolenv.Result {
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
			r.Warnings = append(r.Warnings, "the simulator could not answer: "+p.Error)
			r.SetMeta(simulate.MetaFailure, p.Meta[simulate.MetaFailure])
		default:
			r.Warnings = append(r.Warnings, p.Error)
		}
	}
	return r
}

func toolID(call *toolenv.Call) string {
	if call == nil || call.Tool == nil {
		return ""
	}
	return call.Tool.ID
}
