package mirror

import (
	"context"
	"errors"
)

// Store keeps one or more datasets: their requests, pairs, rationales,
// rejects, stage state, and the records of the model requests made for
// them. Every method is safe for concurrent use. A write that returned
// nil survives a crash of the process (kill -9); a write interrupted by
// one leaves the store as it was before it.
//
// mirror/sqlitestore implements it on SQLite; mirror/mirrortest holds
// the conformance suite every implementation must pass.
type Store interface {
	// PutRequests adds requests, ignoring those whose (tool, args) the
	// dataset holds already, and returns how many were new. Seq and
	// Created are set by the store when zero.
	PutRequests(ctx context.Context, dataset string, reqs []*Request) (added int, err error)
	// RequestCounts returns how many requests each tool has.
	RequestCounts(ctx context.Context, dataset string) (map[string]int, error)
	// EachRequest calls fn for each request q selects, in Seq order.
	EachRequest(ctx context.Context, dataset string, q RequestQuery, fn func(*Request) error) error

	// PutPairs inserts pairs, replacing any of the same (tool, args).
	PutPairs(ctx context.Context, dataset string, pairs []*Pair) error
	// AddPairs inserts pairs whose (tool, args) is not taken and returns
	// the keys that were taken (they are not written).
	AddPairs(ctx context.Context, dataset string, pairs []*Pair) (taken []PairKey, err error)
	// GetPair returns the pair of (tool, args), if any.
	GetPair(ctx context.Context, dataset, tool, args string) (*Pair, bool, error)
	// EachPair calls fn for each pair q selects, in q's order.
	EachPair(ctx context.Context, dataset string, q PairQuery, fn func(*Pair) error) error
	// UpdatePairs changes fields of existing pairs; an update of a pair
	// that does not exist is ignored.
	UpdatePairs(ctx context.Context, dataset string, ups []PairUpdate) error
	// ResetPairs clears the given derived columns ("filter", "split") of
	// every pair of the given origin ("" for all).
	ResetPairs(ctx context.Context, dataset, origin string, columns ...string) error
	// PairStats counts pairs by (tool, origin, status, class, rule,
	// filter, split, doc eval, has rationale).
	PairStats(ctx context.Context, dataset string) ([]PairStat, error)

	// PutRationales inserts or replaces rationales.
	PutRationales(ctx context.Context, dataset string, rs []*Rationale) error
	// HasRationale reports which of keys have a rationale row (of any
	// verdict).
	HasRationale(ctx context.Context, dataset string, keys []PairKey) (map[PairKey]bool, error)
	// EachRationale calls fn for each rationale, in (tool, args) order.
	EachRationale(ctx context.Context, dataset string, fn func(*Rationale) error) error

	// PutRejects appends rejects.
	PutRejects(ctx context.Context, dataset string, rs []*Reject) error
	// RejectStats counts rejects by (stage, tool, reason).
	RejectStats(ctx context.Context, dataset string) ([]RejectStat, error)

	// Meta returns a dataset's value of key.
	Meta(ctx context.Context, dataset, key string) (string, bool, error)
	// SetMeta sets a dataset's value of key.
	SetMeta(ctx context.Context, dataset, key, value string) error

	// Lookup and Record keep model requests and responses for replay
	// (llm.Recorder).
	Lookup(ctx context.Context, key string) (resp []byte, ok bool, err error)
	Record(ctx context.Context, key string, req, resp []byte) error

	// Close releases the store.
	Close() error
}

// RequestQuery selects requests.
type RequestQuery struct {
	// Tool selects one tool's requests.
	Tool string
	// Pending selects the requests no pair answers yet.
	Pending bool
}

// Orders of EachPair.
const (
	// OrderKey orders by (tool, args).
	OrderKey = ""
	// OrderMix orders by the pair's hash mixed with PairQuery.Seed: a
	// seeded shuffle that needs no memory.
	OrderMix = "mix"
)

// PairQuery selects pairs. Empty fields select everything.
type PairQuery struct {
	// Origin is OriginReal, OriginSynthesized or "" for both.
	Origin string
	// Tool selects one tool's pairs.
	Tool string
	// Filters, when not nil, selects pairs whose Filter is one of them
	// ("" selects unfiltered pairs).
	Filters []string
	// Splits, when not nil, selects pairs whose Split is one of them.
	Splits []string
	// OK selects successful pairs (true) or failed ones (false); nil both.
	OK *bool
	// NoDoc selects pairs with no documentation verdict yet.
	NoDoc bool
	// WithRationale selects pairs with a kept rationale and fills
	// Pair.Rationale.
	WithRationale bool
	// NoBody leaves Body empty (for stages that do not read it).
	NoBody bool
	// Order is OrderKey or OrderMix; Seed seeds OrderMix.
	Order string
	Seed  int64
	// Limit bounds how many pairs are returned; 0 means no bound.
	Limit int
}

// MixKey is the constant OrderMix mixes pair hashes with for seed: the
// order is by (hash XOR MixKey(seed)), then (tool, args).
func MixKey(seed int64) int64 { return seedHash(seed, "mix") }

// PairUpdate changes fields of one pair; nil fields are left alone.
type PairUpdate struct {
	Tool, Args   string
	Filter       *string
	FilterDetail *string
	Doc          *DocCheck
	Split        *string
}

// PairStat is a count of pairs sharing these values.
type PairStat struct {
	Tool      string
	Origin    string
	OK        bool
	Class     string
	Rule      string // the classifier rule that decided the class
	Filter    string
	Split     string
	DocEval   *int // nil: not checked
	Rationale bool // has a kept rationale
	Count     int
}

// RejectStat is a count of rejects sharing these values.
type RejectStat struct {
	Stage, Tool, Reason string
	Count               int
}

// ErrNoDataset is returned by stages that need a dataset that holds
// nothing yet.
var ErrNoDataset = errors.New("the dataset holds no requests yet (run \"toolenv mirror generate\" first)")

// Ptr returns a pointer to v, for PairUpdate and PairQuery fields.
func Ptr[T any](v T) *T { return &v }
