package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// Claims is what a fleet needs of a store shared by several processes:
// claims on missing keys (store.Store implements it).
type Claims interface {
	Claim(ctx context.Context, tool, args, owner string, lease time.Duration) (*store.Claim, bool, error)
	RenewClaim(ctx context.Context, c *store.Claim, lease time.Duration) error
	ReleaseClaim(ctx context.Context, c *store.Claim, result []byte) error
	ReadClaim(ctx context.Context, tool, args string) (*store.Claim, bool, error)
}

var _ Claims = (store.Store)(nil)

// Fleet makes the processes sharing a store (replicas on one PostgreSQL)
// answer each missing key once, as single-flight does within a process:
// the first process to claim the key calls the backend, renewing its
// claim while the call runs; the others wait, looking in the store until
// the answer is there (or the holder released the claim with a failure,
// which they share). A holder that dies stops renewing: once its lease
// runs out, a waiter takes the claim over and answers.
type Fleet struct {
	// Claims is the shared store.
	Claims Claims
	// Owner names this process in claims (for messages); default
	// host:pid.
	Owner string
	// Lease is how long a claim lives without renewal, i.e. how long the
	// fleet waits for a killed holder; default 15s. Holders renew every
	// Lease/3.
	Lease time.Duration
	// Poll is the longest wait between two looks at the store while
	// waiting; default 250ms (the first looks come sooner).
	Poll time.Duration
}

func (f *Fleet) withDefaults() *Fleet {
	if f == nil || f.Claims == nil {
		return nil
	}
	cp := *f
	if cp.Owner == "" {
		host, _ := os.Hostname()
		cp.Owner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if cp.Lease <= 0 {
		cp.Lease = 15 * time.Second
	}
	if cp.Poll <= 0 {
		cp.Poll = 250 * time.Millisecond
	}
	return &cp
}

// fleetAnswer answers a missing key for the fleet: claim it and answer,
// or wait for the holder's answer.
func (m *cacheMW) fleetAnswer(ctx context.Context, call *toolenv.Call, k cacheKey, next toolenv.Handler) *toolenv.Result {
	f := m.fleet
	for {
		c, won, err := f.Claims.Claim(ctx, k.tool, k.args, f.Owner, f.Lease)
		if err != nil {
			if ctx.Err() != nil {
				return toolenv.ResultOf(ctx.Err())
			}
			m.log.Warn("claiming a cache miss failed; the call fails fast", "tool", k.tool, "err", err)
			return storeFailure("claim", err)
		}
		if won {
			return m.holdAndAnswer(ctx, call, k, next, c)
		}
		m.log.Debug("waiting for another replica answering the same call", "tool", k.tool, "holder", c.Owner)
		if m.waiting != nil {
			m.waiting()
		}
		res, retry := m.waitFor(ctx, k, c)
		if !retry {
			return res
		}
	}
}

// holdAndAnswer answers a key this process claimed, keeping the claim
// alive meanwhile, and releases it: without a result when the answer is
// in the store, else with the result for the processes that waited.
func (m *cacheMW) holdAndAnswer(ctx context.Context, call *toolenv.Call, k cacheKey, next toolenv.Handler, c *store.Claim) *toolenv.Result {
	f := m.fleet
	release := func(result []byte) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := f.Claims.ReleaseClaim(rctx, c, result); err != nil && !errors.Is(err, store.ErrClaimLost) {
			m.log.Warn("releasing a claim failed; the fleet waits for its lease to run out", "tool", k.tool, "err", err)
		}
	}
	// The previous holder may have stored the answer just before this
	// process took the claim (even a call that skipped the lookup, such
	// as a lenient call looked up already, must not pay for it twice).
	if res, ok := m.lookup(ctx, k); ok {
		release(nil)
		return res
	}
	stop := m.renew(ctx, k, c)
	res, inStore := m.answer(ctx, call, k, next)
	stop()
	switch {
	case inStore:
		release(nil)
	case ctx.Err() != nil:
		release(nil) // this caller went away; let a waiter answer for itself
	default:
		b, err := json.Marshal(res)
		if err != nil {
			b = nil
		}
		release(b)
	}
	return res
}

// renew keeps a held claim alive until the returned stop is called.
func (m *cacheMW) renew(ctx context.Context, k cacheKey, c *store.Claim) (stop func()) {
	f := m.fleet
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(f.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
			}
			if err := f.Claims.RenewClaim(rctx, c, f.Lease); err != nil {
				if rctx.Err() != nil {
					return
				}
				m.log.Warn("renewing a claim failed", "tool", k.tool, "err", err)
				if errors.Is(err, store.ErrClaimLost) {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// waitFor waits for the answer of the process holding c. It returns that
// answer, or retry when the claim is free again (released without an
// answer, or its holder died).
func (m *cacheMW) waitFor(ctx context.Context, k cacheKey, c *store.Claim) (res *toolenv.Result, retry bool) {
	f := m.fleet
	delay := 5 * time.Millisecond
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return toolenv.Errorf(toolenv.StatusOf(ctx.Err()), "", "gave up waiting for another replica answering the same call (%s): %v", c.Owner, ctx.Err()), false
		case <-timer.C:
		}
		delay = min(2*delay, f.Poll)
		timer.Reset(delay)
		if e, ok, err := m.c.GetExact(ctx, k.tool, k.exact, k.args); err != nil {
			return storeFailure("read", err), false
		} else if ok {
			return fromEntry(e), false
		}
		cur, ok, err := f.Claims.ReadClaim(ctx, k.tool, k.args)
		switch {
		case err != nil:
			return storeFailure("claim", err), false
		case !ok:
			return nil, true // released; the answer was not stored after all
		case cur.Token == c.Token && cur.Done:
			var out toolenv.Result
			if err := json.Unmarshal(cur.Result, &out); err != nil || out.Status == "" {
				return nil, true
			}
			return &out, false
		case cur.Token != c.Token:
			if cur.Done || time.Now().After(cur.Expires) {
				return nil, true
			}
			c = cur // a new holder took over; wait for it instead
		case time.Now().After(cur.Expires):
			return nil, true // the holder stopped renewing: take over
		}
	}
}
