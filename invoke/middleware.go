package invoke

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// Recover turns a panic below it into a StatusInternal result, logging the
// stack, so one bad call never takes the server down.
func Recover(log *slog.Logger) toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) (res *toolenv.Result) {
			defer func() {
				if p := recover(); p != nil {
					tool := ""
					if call.Tool != nil {
						tool = call.Tool.ID
					}
					log.Error("panic while invoking a tool", "tool", tool, "panic", p, "stack", string(debug.Stack()))
					res = toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv; the server log has the details", "internal error while calling %s", tool)
				}
			}()
			res = next.Invoke(ctx, call)
			if res == nil {
				res = toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv", "backend returned no result")
			}
			return res
		})
	}
}

// Observer is told about every finished call (metrics, access logs). It
// must not change call or res: one result may be shown for several calls
// answered alike (see CachedInvoker.ReplayHit), each call's time being
// elapsed, not res.Latency.
type Observer interface {
	Observe(call *toolenv.Call, res *toolenv.Result, elapsed time.Duration)
}

// ReplayObserver is an Observer that can prepare, once, what it does for
// the calls a front-end replays (see CachedInvoker.ReplayHit): a call of
// the same tool, collection and front-end as call, answered with res.
type ReplayObserver interface {
	Observer
	// ObserveReplays returns a function doing for each such call, of
	// elapsed time, what Observe would do, or nil to be asked Observe.
	// The function is not shown the replayed call: what it does must
	// depend on call's tool, collection and front-end alone (a replay
	// through CachedInvoker.ReplayPrepared has no Call).
	ObserveReplays(call *toolenv.Call, res *toolenv.Result) func(elapsed time.Duration)
}

// Observe times each call, sets Result.Latency and reports to obs (which
// may be nil). It logs each call at debug level.
func Observe(obs Observer, log *slog.Logger) toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			start := time.Now()
			res := next.Invoke(ctx, call)
			observed(ctx, obs, log, call, res, time.Since(start))
			return res
		})
	}
}

// observed is what Observe does once a call is answered.
func observed(ctx context.Context, obs Observer, log *slog.Logger, call *toolenv.Call, res *toolenv.Result, elapsed time.Duration) {
	res.Latency = elapsed
	if obs != nil {
		obs.Observe(call, res, elapsed)
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		tool := ""
		if call.Tool != nil {
			tool = call.Tool.ID
		}
		log.Debug("call", "tool", tool, "frontend", call.Frontend, "status", res.Status, "source", res.Source, "elapsed", elapsed, "request", call.RequestID)
	}
}

// Timeout bounds each call to d (0 disables). A call that runs out of time
// gets StatusTimeout.
func Timeout(d time.Duration) toolenv.Middleware {
	if d <= 0 {
		return nil
	}
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			res := next.Invoke(ctx, call)
			if !res.OK() && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				res.Status = toolenv.StatusTimeout
				if res.Error == "" {
					res.Error = fmt.Sprintf("no answer within %s", d)
				}
			}
			return res
		})
	}
}

// Validate checks each call's arguments against its tool's input schema
// under the collection's policy, coercing them in lenient mode, and
// rejects invalid calls with per-argument problems at the feedback level
// the call or collection asks for. A collection whose policy says
// "lenient" rejects nothing: a missing required argument becomes a
// warning and the call goes on, as StableToolBench passes it on (see
// LenientCache, which runs first).
func Validate(v *validate.Validator) toolenv.Middleware {
	if v == nil {
		v = &validate.Validator{}
	}
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil {
				return toolenv.Errorf(toolenv.StatusUnknownTool, "", "call names no tool")
			}
			policy := policyOf(call)
			lenient := policy.Validation != toolenv.ValidationStrict
			out := validateMemo(call, v, call.Args, lenient)
			// The memo is shared: its lists are appended to in copies.
			out.Problems, out.Warnings = slices.Clip(out.Problems), slices.Clip(out.Warnings)
			if policy.Validation == toolenv.ValidationLenient {
				var missing []string
				out.Problems, missing = lenientMissing(out.Problems)
				out.Warnings = append(out.Warnings, missing...)
			}
			if len(out.Problems) > 0 {
				level := call.Options.Feedback
				if level == "" {
					level = policy.Feedback
				}
				msg, hint := validate.Feedback(level, call.Tool, out.Problems)
				res := &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: msg, Hint: hint, Source: toolenv.SourcePipeline}
				if level != toolenv.FeedbackNone {
					res.Problems = out.Problems
				}
				return res
			}
			if out.Args == nil {
				out.Args = map[string]any{}
			}
			call.Args = out.Args
			res := next.Invoke(ctx, call)
			if len(out.Warnings) > 0 {
				res.Warnings = append(res.Warnings, out.Warnings...)
			}
			return res
		})
	}
}

func policyOf(call *toolenv.Call) toolenv.Policy {
	if call.Collection != nil {
		return call.Collection.Policy
	}
	return toolenv.Policy{}
}

// Limit rejects results whose body is larger than max bytes (0 disables),
// so a runaway upstream or simulator cannot flood a client.
func Limit(max int) toolenv.Middleware {
	if max <= 0 {
		return nil
	}
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			res := next.Invoke(ctx, call)
			if len(res.Body) > max {
				n := len(res.Body)
				res.Body = nil
				res.Status = toolenv.StatusTooLarge
				res.Error = fmt.Sprintf("the response is %d bytes, over the server's limit of %d", n, max)
				res.Hint = "narrow the request (filters, a smaller page size), or raise the server's --max-result-bytes"
				res.SetMeta("cacheable", "false")
			}
			return res
		})
	}
}
