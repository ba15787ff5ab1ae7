package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/server"
	"golang.org/x/time/rate"
)

// CollectOptions configure the collect stage.
type CollectOptions struct {
	// Workers is how many calls are in flight at once; default 32.
	Workers int
	// Attempts is how many times a call that failed for a passing reason
	// (timeout, rate limit, connection, 5xx) is tried; default 3, as the
	// paper.
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// later one (a Retry-After the API sends wins, up to MaxBackoff);
	// default 500ms.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Rate is the most calls per second made to one tool (API); 0 means
	// no limit. Burst is the bucket's size; default 1.
	Rate  float64
	Burst int
	// BreakAfter is how many calls of one tool in a row may fail to
	// connect before its breaker opens; default 5. While it is open the
	// tool's requests are deferred (left for a later run), for
	// BreakFor (default 30s), then one call tries again.
	BreakAfter int
	BreakFor   time.Duration
	// CallTimeout bounds one attempt; default 30s.
	CallTimeout time.Duration
	// Batch is how many pairs one store transaction writes; default 256.
	// FlushEvery bounds how long a finished pair waits; default 250ms.
	Batch      int
	FlushEvery time.Duration
	// Limit stops after this many calls; 0 means all pending requests.
	Limit int
	// Now returns the time stamps of pairs; default time.Now.
	Now func() time.Time `json:"-"`
}

func (o *CollectOptions) defaults() {
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Burst <= 0 {
		o.Burst = 1
	}
	if o.BreakAfter <= 0 {
		o.BreakAfter = 5
	}
	if o.BreakFor <= 0 {
		o.BreakFor = 30 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 250 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// CollectStats says what the collect stage did.
type CollectStats struct {
	// Called is how many requests got a pair in this run; OK how many
	// of those succeeded.
	Called int `json:"called"`
	OK     int `json:"ok"`
	// Retried is how many calls needed more than one attempt.
	Retried int `json:"retried"`
	// Deferred is how many requests were left for a later run because
	// their tool's breaker was open; Interrupted is true when the
	// context ended first.
	Deferred    int  `json:"deferred"`
	Interrupted bool `json:"interrupted"`
	// UnknownTool counts requests of tools not loaded (left pending).
	UnknownTool int `json:"unknown_tool,omitempty"`
	// Elapsed is the wall time; PerSecond the pairs per second.
	Elapsed   time.Duration `json:"elapsed_ns"`
	PerSecond float64       `json:"per_second"`
	// ByClass counts this run's pairs by Appendix D class.
	ByClass map[string]int `json:"by_class"`
}

// Collect calls the real API for every request no pair answers yet, and
// stores each answer with its provenance. It can be interrupted at any
// point (ctx, Ctrl-C, kill -9): the requests left are collected by the
// next run. A pair is stored only once its call ended on its own — a call
// cut short by the interrupt stays pending.
func (e *Engine) Collect(ctx context.Context, opts CollectOptions) (*CollectStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if e.Invoker == nil {
		return nil, errors.New("collect: no call path (Engine.Invoker)")
	}
	opts.defaults()
	started := time.Now()
	counts, err := e.Store.RequestCounts(ctx, e.Dataset)
	if err != nil {
		return nil, err
	}
	if len(counts) == 0 {
		return nil, ErrNoDataset
	}
	pending, err := e.countPending(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Limit > 0 && pending > opts.Limit {
		pending = opts.Limit
	}
	st := &CollectStats{ByClass: map[string]int{}}
	bar := e.bar(pending, "collect responses")
	defer bar.Finish()

	c := &collector{e: e, opts: opts, limiters: map[string]*rate.Limiter{}, breakers: map[string]*breaker{}}
	// The store is written by one goroutine in batches; it finishes
	// writing what it holds even when ctx ends.
	pairs := make(chan *Pair, opts.Batch)
	var wErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wErr = c.write(context.WithoutCancel(ctx), pairs)
	}()
	work := make(chan *Request, opts.Workers)
	var mu sync.Mutex
	var workers sync.WaitGroup
	for range opts.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for r := range work {
				p, outcome := c.call(ctx, r)
				mu.Lock()
				switch outcome {
				case outcomeDone:
					st.Called++
					if p.OK() {
						st.OK++
					}
					if p.Attempts > 1 {
						st.Retried++
					}
					st.ByClass[p.Class]++
				case outcomeDeferred:
					st.Deferred++
				case outcomeUnknown:
					st.UnknownTool++
				}
				mu.Unlock()
				if outcome == outcomeDone {
					pairs <- p
				}
				bar.Add(1)
			}
		}()
	}
	sent := 0
	rerr := e.Store.EachRequest(ctx, e.Dataset, RequestQuery{Pending: true}, func(r *Request) error {
		if opts.Limit > 0 && sent >= opts.Limit {
			return errStop
		}
		select {
		case work <- r:
			sent++
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(work)
	workers.Wait()
	close(pairs)
	wg.Wait()
	st.Elapsed = time.Since(started)
	if st.Elapsed > 0 {
		st.PerSecond = float64(st.Called) / st.Elapsed.Seconds()
	}
	if wErr != nil {
		return st, fmt.Errorf("collect: store the answers: %w", wErr)
	}
	if ctx.Err() != nil {
		st.Interrupted = true
		return st, nil
	}
	if rerr != nil && rerr != errStop {
		return st, fmt.Errorf("collect: read the pending requests: %w", rerr)
	}
	e.stageDone(ctx, "collect", started)
	return st, nil
}

// countPending counts the requests without a pair.
func (e *Engine) countPending(ctx context.Context) (int, error) {
	n := 0
	err := e.Store.EachRequest(ctx, e.Dataset, RequestQuery{Pending: true}, func(*Request) error {
		n++
		return nil
	})
	return n, err
}

type collector struct {
	e    *Engine
	opts CollectOptions

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	breakers map[string]*breaker
}

type outcome int

const (
	outcomeDone     outcome = iota // the pair is made
	outcomeDeferred                // the breaker is open; left pending
	outcomeCanceled                // the run was interrupted; left pending
	outcomeUnknown                 // the tool is not loaded; left pending
)

func (c *collector) coll(t *toolenv.Tool) *toolenv.Collection { return c.e.collection(t.Collection) }

func (c *collector) limiter(tool string) *rate.Limiter {
	if c.opts.Rate <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.limiters[tool]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(c.opts.Rate), c.opts.Burst)
		c.limiters[tool] = l
	}
	return l
}

func (c *collector) breaker(tool string) *breaker {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.breakers[tool]
	if b == nil {
		b = &breaker{after: c.opts.BreakAfter, cool: c.opts.BreakFor}
		c.breakers[tool] = b
	}
	return b
}

// call makes one request's call, with its attempts, and returns the pair.
func (c *collector) call(ctx context.Context, r *Request) (*Pair, outcome) {
	t := c.e.tool(r.Tool)
	if t == nil {
		return nil, outcomeUnknown
	}
	args, err := decodeArgs(r.Args)
	if err != nil {
		// Stored by this package, so this does not happen; if it did,
		// the request is reported rather than called.
		return &Pair{Tool: r.Tool, Args: r.Args, Origin: OriginReal, Kind: r.Kind, Status: toolenv.StatusBadRequest,
			Error: "the stored arguments are not JSON: " + err.Error(), Source: string(toolenv.SourcePipeline), Class: string(upstream.ClassParameterChange),
			Rule: "stored_args", CalledAt: c.opts.Now()}, outcomeDone
	}
	br := c.breaker(r.Tool)
	if !br.allow(c.opts.Now()) {
		return nil, outcomeDeferred
	}
	p := &Pair{Tool: r.Tool, Args: r.Args, Origin: OriginReal, Kind: r.Kind}
	for attempt := 1; ; attempt++ {
		if l := c.limiter(r.Tool); l != nil {
			if err := l.Wait(ctx); err != nil {
				return nil, outcomeCanceled
			}
		}
		at := c.opts.Now()
		actx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
		call := &toolenv.Call{Tool: t, Collection: c.coll(t), Args: cloneArgs(args), Frontend: "mirror", RequestID: "mirror-" + strconv.FormatInt(r.Seq, 10),
			Options: toolenv.CallOptions{NoCache: true}}
		start := time.Now()
		res := c.e.Invoker.Invoke(actx, call)
		latency := time.Since(start)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		if ctx.Err() != nil {
			return nil, outcomeCanceled // cut short: leave it pending
		}
		if res == nil {
			res = toolenv.Errorf(toolenv.StatusInternal, "", "the call path returned no result")
		}
		if timedOut && res.Status == toolenv.StatusCanceled {
			res = &toolenv.Result{Status: toolenv.StatusTimeout, Error: fmt.Sprintf("no answer within %s", c.opts.CallTimeout), Source: res.Source}
		}
		class, rule, httpStatus := Classify(res)
		p.Status, p.Body, p.Error = res.Status, res.Body, res.Error
		p.Source, p.Class, p.Rule, p.HTTPStatus = string(res.Source), class, rule, httpStatus
		p.Attempts, p.Latency, p.CalledAt = attempt, latency, at
		retry := transient(res, class) && attempt < c.opts.Attempts
		if retry {
			p.History = append(p.History, Attempt{At: at, Latency: latency, Status: res.Status, Class: class, Error: clip(res.Error, 300), Retrying: true})
			wait := c.opts.Backoff << (attempt - 1)
			if res.RetryAfter > 0 {
				wait = res.RetryAfter
			}
			wait = min(wait, c.opts.MaxBackoff)
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				return nil, outcomeCanceled
			}
		}
		br.record(c.opts.Now(), class == string(upstream.ClassNotConnected))
		return p, outcomeDone
	}
}

// transient reports whether a failed call may succeed when tried again:
// the API was not reached, timed out, was rate limited or failed on its
// side (Appendix D's "not connected" class).
func transient(res *toolenv.Result, class string) bool {
	if res.OK() {
		return false
	}
	switch res.Status {
	case toolenv.StatusTimeout, toolenv.StatusRateLimited, toolenv.StatusUnavailable:
		return true
	}
	return class == string(upstream.ClassNotConnected)
}

// write stores pairs in batches.
func (c *collector) write(ctx context.Context, in <-chan *Pair) error {
	batch := make([]*Pair, 0, c.opts.Batch)
	tick := time.NewTicker(c.opts.FlushEvery)
	defer tick.Stop()
	var firstErr error
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := c.e.Store.PutPairs(ctx, c.e.Dataset, batch); err != nil && firstErr == nil {
			firstErr = err
		}
		batch = batch[:0]
	}
	for {
		select {
		case p, ok := <-in:
			if !ok {
				flush()
				return firstErr
			}
			batch = append(batch, p)
			if len(batch) >= c.opts.Batch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// breaker is one tool's circuit breaker: after `after` connection
// failures in a row it opens for `cool`, then lets one call through.
type breaker struct {
	mu        sync.Mutex
	after     int
	cool      time.Duration
	fails     int
	openUntil time.Time
	probing   atomic.Bool
}

func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fails < b.after {
		return true
	}
	if now.Before(b.openUntil) {
		return false
	}
	// Half open: one call at a time finds out whether the tool is back.
	return b.probing.CompareAndSwap(false, true)
}

func (b *breaker) record(now time.Time, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing.Store(false)
	if !failed {
		b.fails = 0
		return
	}
	b.fails++
	if b.fails >= b.after {
		b.openUntil = now.Add(b.cool)
	}
}

// Classify returns the Appendix D class of a result, the rule of
// backend/upstream's classifier that decided it, and the HTTP status of
// the answer. A result from the upstream backend carries its class; any
// other (a live collection's answer, the pipeline's own rejection) is
// classified by the same rules from its status, error and body, as a
// client reaching it over HTTP would see them.
func Classify(res *toolenv.Result) (class, rule string, httpStatus int) {
	if c := res.Meta[upstream.MetaClass]; c != "" {
		n, _ := strconv.Atoi(res.Meta[upstream.MetaHTTPStatus])
		return c, res.Meta[upstream.MetaRule], n
	}
	obs := &upstream.Observation{Error: res.Error, Response: bodyText(res.Body)}
	switch res.Status {
	case toolenv.StatusTimeout:
		obs.Transport = context.DeadlineExceeded
	default:
		obs.HTTPStatus = server.HTTPStatus(res.Status)
	}
	if res.Status == toolenv.StatusTooLarge {
		obs.TooLarge = true
	}
	r := upstream.Classify(obs)
	return string(r.Class), r.Name, obs.HTTPStatus
}

// bodyText is a payload as text: a JSON string's content, else the JSON.
func bodyText(body json.RawMessage) string {
	b := strings.TrimSpace(string(body))
	if strings.HasPrefix(b, `"`) {
		var s string
		if json.Unmarshal([]byte(b), &s) == nil {
			return s
		}
	}
	return b
}

// binary reports whether a payload is not text: more than 1% of its
// characters (at least one) are NUL or other C0 controls but tab and
// newlines, or U+FFFD (the replacement of bytes that were not UTF-8).
func binary(body json.RawMessage) bool {
	s := bodyText(body)
	if !utf8.ValidString(s) {
		return true
	}
	bad, n := 0, 0
	for _, r := range s {
		n++
		if r == utf8.RuneError || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') {
			bad++
		}
	}
	return bad > 0 && bad*100 >= n
}

func cloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
