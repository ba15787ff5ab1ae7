package toolenv

import (
	"encoding/json"
	"fmt"
	"time"
)

// Call is one invocation of one tool, independent of the wire format it
// arrived in. Front-ends fill it; middleware may rewrite it on its way to
// the backend (drift translates Args, failover swaps Tool).
type Call struct {
	// Tool is the resolved tool being called. Front-ends resolve it
	// through the server's registry; a Call without a Tool fails with
	// StatusUnknownTool.
	Tool *Tool
	// Collection is the collection Tool belongs to (its policy and
	// backend).
	Collection *Collection
	// Args are the arguments, decoded from JSON with numbers kept as
	// json.Number so that their exact value survives.
	Args map[string]any
	// Session ties calls of one episode together (SLOT/SEL task sessions,
	// MCP sessions). Empty means no session.
	Session string
	// RequestID identifies the request in logs; front-ends set it.
	RequestID string
	// Frontend names the wire format the call arrived in: "virtual",
	// "rest", "mcp", "go".
	Frontend string
	// Options adjust how the pipeline treats this one call.
	Options CallOptions
	// Doc, when set, is the documentation the client was shown, which may
	// differ from Tool (drift: the cache is keyed by the old tool while
	// the simulator must see the new documentation).
	Doc *Tool
	// Meta carries front-end details middleware may need (a client key,
	// headers). Backends must not depend on it for semantics.
	Meta map[string]string

	// memo holds what middleware derived from argument maps (MemoArgs).
	memo *callMemo
}

// CallOptions adjust the pipeline for one call.
type CallOptions struct {
	// NoCache skips the cache lookup (the result may still be stored).
	NoCache bool `json:"no_cache,omitempty"`
	// Feedback is how much an error explains: "none", "terse" or
	// "helpful". Empty means the collection's policy.
	Feedback string `json:"feedback,omitempty"`
}

// Clone returns a shallow copy of c with its own Args and Meta maps, for
// middleware that rewrites a call without disturbing the caller's.
func (c *Call) Clone() *Call {
	if c.memo == nil {
		c.memo = &callMemo{} // shared with the clone
	}
	cp := *c
	if c.Args != nil {
		cp.Args = make(map[string]any, len(c.Args))
		for k, v := range c.Args {
			cp.Args[k] = v
		}
	}
	if c.Meta != nil {
		cp.Meta = make(map[string]string, len(c.Meta))
		for k, v := range c.Meta {
			cp.Meta[k] = v
		}
	}
	return &cp
}

// Result is what a backend returns for a Call, whatever the backend.
type Result struct {
	// Status says whether the call succeeded and, if not, why.
	Status Status `json:"status"`
	// Body is the API's response payload as JSON. StableToolBench-style
	// responses are often a JSON string holding text; live tools return
	// objects or arrays.
	Body json.RawMessage `json:"body,omitempty"`
	// Error is the error message the client sees; empty on success.
	Error string `json:"error,omitempty"`
	// Hint says how to fix the call, when toolenv knows.
	Hint string `json:"hint,omitempty"`
	// Problems lists what was wrong with each argument, for validation
	// failures.
	Problems []Problem `json:"problems,omitempty"`
	// Source is where the answer came from.
	Source Source `json:"source,omitempty"`
	// Latency is the wall time the pipeline spent on the call.
	Latency time.Duration `json:"latency_ns,omitempty"`
	// RetryAfter is set on rate-limited results.
	RetryAfter time.Duration `json:"retry_after_ns,omitempty"`
	// Warnings are non-fatal notes for the client (deprecations, answers
	// from an alternative tool, synthesized content).
	Warnings []string `json:"warnings,omitempty"`
	// Faults lists the operational faults injected into this call.
	Faults []string `json:"faults,omitempty"`
	// Meta holds details for metrics and logs: the upstream error class,
	// the origin of a cached answer, the tool a failover went to.
	Meta map[string]string `json:"meta,omitempty"`
}

// MetaInfraFailure is the Result.Meta key by which a backend marks a
// failed call as a failure of the environment rather than of the caller
// (an MCP server that crashed, a model endpoint down), with a short
// reason as its value. RL episodes report it apart from the agent's
// failures, so that a trainer can mask the rewards it touches.
const MetaInfraFailure = "infra_failure"

// infraStatuses are the statuses that are the environment's failure
// unless a fault was injected: nothing the caller wrote makes them.
var infraStatuses = map[Status]bool{
	StatusUnavailable: true, StatusTimeout: true, StatusUpstreamError: true,
	StatusInternal: true, StatusCanceled: true, StatusRateLimited: true,
}

// InfraFailure classifies a failed result: the reason when the
// environment failed the call rather than the caller (Meta's
// MetaInfraFailure as a backend set it, else the status when no input
// makes it: unavailable, timeout, upstream_error, internal, canceled,
// rate_limited), and injected when a fault injected on purpose failed it
// (Faults: that one is the caller's to handle). A success, or a failure
// of the caller's input, is neither.
func InfraFailure(r *Result) (reason string, injected bool) {
	if r == nil || r.OK() {
		return "", false
	}
	if len(r.Faults) > 0 {
		return "", true
	}
	if why := r.Meta[MetaInfraFailure]; why != "" {
		return why, false
	}
	if infraStatuses[r.Status] {
		return string(r.Status), false
	}
	return "", false
}

// OK reports whether the result is a success.
func (r *Result) OK() bool { return r != nil && r.Status == StatusOK }

// Clone returns a copy of r that shares no slices or maps with it.
func (r *Result) Clone() *Result {
	cp := *r
	cp.Body = append(json.RawMessage(nil), r.Body...)
	cp.Problems = append([]Problem(nil), r.Problems...)
	cp.Warnings = append([]string(nil), r.Warnings...)
	cp.Faults = append([]string(nil), r.Faults...)
	if r.Meta != nil {
		cp.Meta = make(map[string]string, len(r.Meta))
		for k, v := range r.Meta {
			cp.Meta[k] = v
		}
	}
	return &cp
}

// SetMeta records a key in r.Meta, allocating it if needed.
func (r *Result) SetMeta(key, value string) {
	if r.Meta == nil {
		r.Meta = make(map[string]string, 2)
	}
	r.Meta[key] = value
}

// Problem is one thing wrong with a call's arguments.
type Problem struct {
	// Param is the argument's name (a dotted path for nested objects);
	// empty when the problem concerns the call as a whole.
	Param string `json:"param,omitempty"`
	// Code is a stable machine-readable kind: "unknown_param",
	// "missing_required", "wrong_type", "not_in_enum", "out_of_range",
	// "renamed" and so on.
	Code string `json:"code"`
	// Message says what was wrong, for a person or a model.
	Message string `json:"message"`
	// Expected describes what would be accepted ("integer", one of the
	// enum values, the new name of a renamed parameter).
	Expected string `json:"expected,omitempty"`
}

// Status classifies a Result.
type Status string

// The statuses a Result can have. Front-ends map each to their wire format
// (HTTP status, StableToolBench status code, MCP isError).
const (
	StatusOK               Status = "ok"
	StatusInvalidArguments Status = "invalid_arguments" // arguments do not match the schema
	StatusUnknownTool      Status = "unknown_tool"      // no such tool/API
	StatusNotFound         Status = "not_found"         // the API answered "not found"
	StatusUnauthorized     Status = "unauthorized"      // the API refused the credentials
	StatusRateLimited      Status = "rate_limited"      // too many requests; see RetryAfter
	StatusTimeout          Status = "timeout"           // the backend did not answer in time
	StatusUpstreamError    Status = "upstream_error"    // the backend answered with an error
	StatusUnavailable      Status = "unavailable"       // no backend could answer (upstream and simulator down)
	StatusGone             Status = "gone"              // the endpoint is deprecated; see Hint for its successor
	StatusBadRequest       Status = "bad_request"       // the request could not be decoded at all
	StatusTooLarge         Status = "too_large"         // request or result over a size limit
	StatusCanceled         Status = "canceled"          // the client went away
	StatusInternal         Status = "internal"          // a bug in toolenv; logged
)

// Source says where a Result came from.
type Source string

// The sources of a Result.
const (
	SourceCache       Source = "cache"       // a recorded answer
	SourceUpstream    Source = "upstream"    // the real API
	SourceSimulator   Source = "simulator"   // an LLM imitating the API
	SourceSynthesizer Source = "synthesizer" // the offline, deterministic synthesizer
	SourceLive        Source = "live"        // a live backend (SQL over a real database)
	SourcePipeline    Source = "toolenv"     // toolenv itself (validation, faults, routing)
)

// Errorf returns a failed Result produced by toolenv itself.
func Errorf(status Status, hint string, format string, args ...any) *Result {
	return &Result{Status: status, Error: fmt.Sprintf(format, args...), Hint: hint, Source: SourcePipeline}
}
