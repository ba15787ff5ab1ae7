package mirror

import (
	"encoding/json"
	"hash/fnv"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// Where a request came from.
const (
	RequestLLM     = "llm"     // written by a model (scenario, then Calls Writing)
	RequestSampler = "sampler" // the schema-driven sampler
)

// Where a pair came from.
const (
	OriginReal        = "real"        // the real API answered the request
	OriginSynthesized = "synthesized" // a model wrote it from real examples
)

// Filter verdicts. A pair's Filter is "" until the filter stage ran, then
// FilterKept or the reason it was dropped.
const (
	FilterKept = "kept"
	// FilterNotReal drops an answer that did not come from the real API
	// (a simulator, the offline synthesizer or a cache answered).
	FilterNotReal = "not_real"
	// FilterBinary drops a response that is not UTF-8 text or holds NUL
	// bytes: a simulator is trained on text.
	FilterBinary = "binary"
	// FilterOverBound drops a parameter-related failure beyond the
	// bounded set the filter keeps.
	FilterOverBound = "failure_over_bound"
	// FilterDocMismatch drops a pair the documentation-following check
	// judged not to follow the documentation (Table 8, overall_eval 0).
	FilterDocMismatch = "doc_mismatch"
	// FilterDocUnparsed drops a pair whose documentation check answered
	// nothing readable, when the filter is told to (DocUnparsedDrop).
	FilterDocUnparsed = "doc_unparsed"
	// FilterClassPrefix prefixes the Appendix D class of a failed call
	// ("appendix_d:not_found").
	FilterClassPrefix = "appendix_d:"
)

// Splits. A pair's Split is "" until the split stage ran.
const (
	SplitTrain      = "train"
	SplitOODSuccess = "ood_success"
	SplitOODFailure = "ood_failure"
	SplitIDHigh     = "id_high"
	SplitIDMedium   = "id_medium"
	SplitIDLow      = "id_low"
	// SplitHeldOut marks pairs of a held-out (OOD) API that were not
	// drawn into a test set: they are in neither training nor test.
	SplitHeldOut = "ood_unused"
	// SplitNearDuplicate marks training pairs dropped because their
	// request is a near-duplicate of a test request.
	SplitNearDuplicate = "near_duplicate"
	// SplitNone marks pairs the split does not use (not kept).
	SplitNone = "none"
)

// TestSplits are the MirrorAPI-Bench sets, in the paper's order (Table 1).
var TestSplits = []string{SplitOODSuccess, SplitOODFailure, SplitIDHigh, SplitIDMedium, SplitIDLow}

// Request is one generated call of one API, before it is made.
type Request struct {
	// Tool is the tool ID ("collection/name").
	Tool string `json:"tool"`
	// Args is the canonical JSON of the arguments (toolenv.Canonical);
	// with Tool it identifies the request.
	Args string `json:"args"`
	// Origin is RequestLLM or RequestSampler.
	Origin string `json:"origin"`
	// Kind says what the request is for: "documented", "sampled",
	// "boundary", "invalid:<what>" (sampler) or "scenario" (LLM).
	Kind string `json:"kind"`
	// Scenario is the usage scenario an LLM-written request serves.
	Scenario string `json:"scenario,omitempty"`
	// Seq orders requests in the order they were generated.
	Seq int64 `json:"seq"`
	// Created is when the request was stored.
	Created time.Time `json:"created"`
}

// Attempt is one try of a call, kept in a pair's history.
type Attempt struct {
	At       time.Time      `json:"at"`
	Latency  time.Duration  `json:"latency_ns"`
	Status   toolenv.Status `json:"status"`
	Class    string         `json:"class,omitempty"`
	Error    string         `json:"error,omitempty"`
	Retrying bool           `json:"retrying,omitempty"`
}

// DocCheck is the documentation-following verdict of a pair (Table 8).
type DocCheck struct {
	// Eval is overall_eval: 1 follows, 0 does not, -1 the reply held no
	// verdict (Raw keeps it).
	Eval   int    `json:"eval"`
	Reason string `json:"reason,omitempty"`
	Raw    string `json:"raw,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Pair is one request and the answer to it, real or synthesized, with
// everything the later stages decided about it.
type Pair struct {
	Tool string `json:"tool"`
	Args string `json:"args"` // canonical JSON
	// Origin is OriginReal or OriginSynthesized.
	Origin string `json:"origin"`
	// Kind is the request's kind (Request.Kind), or "synthesized".
	Kind string `json:"kind,omitempty"`

	// The answer: the Result's status, payload and error message.
	Status toolenv.Status  `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`

	// Provenance of a real pair: who answered (Result.Source), the
	// Appendix D class and the rule that decided it, the HTTP status when
	// there was one, how many attempts were made, the last attempt's
	// latency and time, and every earlier attempt.
	Source     string        `json:"source,omitempty"`
	Class      string        `json:"class,omitempty"`
	Rule       string        `json:"rule,omitempty"`
	HTTPStatus int           `json:"http_status,omitempty"`
	Attempts   int           `json:"attempts,omitempty"`
	Latency    time.Duration `json:"latency_ns,omitempty"`
	CalledAt   time.Time     `json:"called_at"`
	History    []Attempt     `json:"history,omitempty"`
	// Provenance of a synthesized pair (model, seed, temperature, the
	// examples it was written from), as JSON.
	Provenance json.RawMessage `json:"provenance,omitempty"`

	// Filter is "" before the filter stage, then FilterKept or why the
	// pair was dropped; FilterDetail says more (the classifier's rule).
	Filter       string `json:"filter,omitempty"`
	FilterDetail string `json:"filter_detail,omitempty"`
	// Doc is the documentation-following verdict, when one was asked.
	Doc *DocCheck `json:"doc,omitempty"`
	// Split is "" before the split stage, then the split the pair went to.
	Split string `json:"split,omitempty"`

	// Rationale is the pair's kept rationale, filled only by queries that
	// ask for it (PairQuery.WithRationale).
	Rationale string `json:"rationale,omitempty"`
}

// OK reports whether the pair is a successful call.
func (p *Pair) OK() bool { return p.Status == toolenv.StatusOK }

// Key returns the pair's identity.
func (p *Pair) Key() PairKey { return PairKey{Tool: p.Tool, Args: p.Args} }

// PairKey identifies a request, and so a pair, within a dataset.
type PairKey struct {
	Tool string `json:"tool"`
	Args string `json:"args"`
}

// Hash is a 62-bit hash of a pair's identity. Stores keep it so that an
// order derived from it (MixOrder) needs no sort in memory; 62 bits keep
// the XOR of two hashes, written (a|b)-(a&b), inside a signed 64-bit
// integer in every SQL dialect.
func Hash(tool, args string) int64 {
	h := fnv.New64a()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(args))
	return int64(mix64(h.Sum64()) >> 2)
}

// mix64 is MurmurHash3's finalizer: every input bit changes every output
// bit with probability one half (FNV alone leaves inputs that differ in
// their last byte close together, which would not shuffle).
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// seedHash derives the 62-bit mixing constant of a seed and a purpose.
func seedHash(seed int64, purpose string) int64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(purpose))
	return int64(mix64(h.Sum64()) >> 2)
}

// Rationale is a CoT rationale for a pair (Table 9's prompt).
type Rationale struct {
	Tool string `json:"tool"`
	Args string `json:"args"`
	// Text is the rationale as the model wrote it (trimmed).
	Text string `json:"text"`
	// Tokens is the approximate token count of the CoT sample's final
	// output (ApproxTokens).
	Tokens int `json:"tokens"`
	// Verdict is FilterKept or why the rationale was dropped
	// (RationaleTooLong, RationaleLeak, RationaleEmpty, RationaleRefused).
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
	Model   string `json:"model,omitempty"`
	Created time.Time
}

// Why a rationale is dropped.
const (
	RationaleTooLong = "too_long" // the CoT output is over the token limit
	RationaleLeak    = "leak"     // it repeats the real response verbatim
	RationaleEmpty   = "empty"    // the model wrote nothing
	RationaleRefused = "refused"  // the model refused
)

// Reject is something a stage made and dropped before it became a pair:
// a model answer that could not be read, a synthesized pair that
// duplicates or contradicts another. It keeps the text and the reason.
type Reject struct {
	Stage  string `json:"stage"` // "generate", "synthesize"
	Tool   string `json:"tool"`
	Args   string `json:"args,omitempty"`
	Body   string `json:"body,omitempty"`
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	// Created is when it was stored.
	Created time.Time `json:"created"`
}

// Why a stage rejects what a model wrote.
const (
	RejectUnparseable = "unparseable"        // no JSON of the expected shape
	RejectWrongAPI    = "wrong_api"          // a call of another API
	RejectDuplicate   = "duplicate"          // the same request and answer exist
	RejectConflict    = "conflicting_answer" // the same request has another answer
	RejectDocMismatch = "doc_mismatch"       // the documentation check said no
	RejectRefused     = "refused"            // the model refused
)
