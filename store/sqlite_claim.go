package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// claimGrace is how long a claim released with a result stays readable
// by the processes that waited on it.
const claimGrace = 30 * time.Second

// pruneEvery is how often a store removes long-expired claims.
const pruneEvery = time.Minute

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func nowMillis() int64   { return time.Now().UnixMilli() }
func timeNow() time.Time { return time.Now().UTC() }
func leaseOf(d time.Duration) time.Duration {
	if d <= 0 {
		return 15 * time.Second
	}
	return d
}

// Claim takes the claim on (tool, args); see Store.Claim. Large
// arguments are keyed by their digest (see LargeKeyBytes): a claim's
// arguments are never read back. SQLite's clock
// is the local one: the processes sharing an SQLite file share a host.
func (s *SQLite) Claim(ctx context.Context, tool, args, owner string, lease time.Duration) (*Claim, bool, error) {
	now := nowMillis()
	s.pruneClaims(ctx, now)
	c := &Claim{Tool: tool, Args: args, Token: newToken(), Owner: owner, Expires: time.UnixMilli(now + leaseOf(lease).Milliseconds()).UTC()}
	res, err := s.w.ExecContext(ctx, `INSERT INTO claims(tool, args, token, owner, expires, done, result) VALUES (?,?,?,?,?,0,NULL)
		ON CONFLICT(tool, args) DO UPDATE SET token=excluded.token, owner=excluded.owner, expires=excluded.expires, done=0, result=NULL
		WHERE claims.expires < ? OR claims.done != 0`,
		tool, storedKey(args), c.Token, owner, c.Expires.UnixMilli(), now)
	if err != nil {
		return nil, false, fmt.Errorf("claim %s: %w", tool, err)
	}
	if k, _ := res.RowsAffected(); k > 0 {
		return c, true, nil
	}
	cur, ok, err := s.ReadClaim(ctx, tool, args)
	if err != nil {
		return nil, false, err
	}
	if !ok { // released between the two statements: try once more
		return s.Claim(ctx, tool, args, owner, lease)
	}
	return cur, false, nil
}

// RenewClaim extends a claim the caller holds.
func (s *SQLite) RenewClaim(ctx context.Context, c *Claim, lease time.Duration) error {
	exp := time.UnixMilli(nowMillis() + leaseOf(lease).Milliseconds()).UTC()
	res, err := s.w.ExecContext(ctx, `UPDATE claims SET expires = ? WHERE tool = ? AND args = ? AND token = ? AND done = 0`,
		exp.UnixMilli(), c.Tool, storedKey(c.Args), c.Token)
	if err != nil {
		return fmt.Errorf("renew claim %s: %w", c.Tool, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return ErrClaimLost
	}
	c.Expires = exp
	return nil
}

// ReleaseClaim gives a claim up; see Store.ReleaseClaim.
func (s *SQLite) ReleaseClaim(ctx context.Context, c *Claim, result []byte) error {
	var res sql.Result
	var err error
	if result == nil {
		res, err = s.w.ExecContext(ctx, `DELETE FROM claims WHERE tool = ? AND args = ? AND token = ?`, c.Tool, storedKey(c.Args), c.Token)
	} else {
		res, err = s.w.ExecContext(ctx, `UPDATE claims SET done = 1, result = ?, expires = ? WHERE tool = ? AND args = ? AND token = ?`,
			result, nowMillis()+claimGrace.Milliseconds(), c.Tool, storedKey(c.Args), c.Token)
	}
	if err != nil {
		return fmt.Errorf("release claim %s: %w", c.Tool, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return ErrClaimLost
	}
	return nil
}

// ReadClaim returns the current claim on (tool, args).
func (s *SQLite) ReadClaim(ctx context.Context, tool, args string) (*Claim, bool, error) {
	c := &Claim{Tool: tool, Args: args}
	var exp int64
	var done int
	err := s.r.QueryRowContext(ctx, `SELECT token, owner, expires, done, result FROM claims WHERE tool = ? AND args = ?`, tool, storedKey(args)).
		Scan(&c.Token, &c.Owner, &exp, &done, &c.Result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read claim %s: %w", tool, err)
	}
	c.Expires, c.Done = time.UnixMilli(exp).UTC(), done != 0
	return c, true, nil
}

// pruneClaims removes claims expired long ago (released with a result,
// or left by a dead process), at most once per pruneEvery.
func (s *SQLite) pruneClaims(ctx context.Context, now int64) {
	last := s.prune.Load()
	if now-last < pruneEvery.Milliseconds() || !s.prune.CompareAndSwap(last, now) {
		return
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM claims WHERE expires < ?`, now-pruneEvery.Milliseconds()); err != nil {
		s.log.Warn("pruning expired claims failed", "store", s.path, "err", err)
	}
}
