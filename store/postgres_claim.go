package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Claim takes the claim on (tool, args); see Store.Claim. Leases run on
// the server's clock, so replicas' clocks need not agree.
func (s *Postgres) Claim(ctx context.Context, tool, args, owner string, lease time.Duration) (*Claim, bool, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	s.pruneClaims(octx)
	for range 3 {
		c := &Claim{Tool: tool, Args: args, Token: newToken(), Owner: owner}
		err := s.pool.QueryRow(octx, `INSERT INTO claims(tool, akey, args, token, owner, expires)
			VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond')
			ON CONFLICT (tool, akey) DO UPDATE SET args = excluded.args, token = excluded.token, owner = excluded.owner,
				expires = excluded.expires, done = false, result = NULL
			WHERE claims.expires < clock_timestamp() OR claims.done
			RETURNING expires`, tool, digest(args), []byte(storedKey(args)), c.Token, owner, leaseOf(lease).Milliseconds()).Scan(&c.Expires)
		switch {
		case err == nil:
			c.Expires = c.Expires.UTC()
			return c, true, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, false, s.fail(ctx, "claim "+tool, err)
		}
		cur, ok, err := s.ReadClaim(ctx, tool, args)
		if err != nil || ok {
			return cur, false, err
		}
		// released between the two statements: try again
	}
	cur, _, err := s.ReadClaim(ctx, tool, args)
	return cur, false, err
}

// RenewClaim extends a claim the caller holds.
func (s *Postgres) RenewClaim(ctx context.Context, c *Claim, lease time.Duration) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	var exp time.Time
	err := s.pool.QueryRow(octx, `UPDATE claims SET expires = clock_timestamp() + $4 * interval '1 millisecond'
		WHERE tool = $1 AND akey = $2 AND token = $3 AND NOT done RETURNING expires`,
		c.Tool, digest(c.Args), c.Token, leaseOf(lease).Milliseconds()).Scan(&exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrClaimLost
	}
	if err != nil {
		return s.fail(ctx, "renew claim "+c.Tool, err)
	}
	c.Expires = exp.UTC()
	return nil
}

// ReleaseClaim gives a claim up; see Store.ReleaseClaim.
func (s *Postgres) ReleaseClaim(ctx context.Context, c *Claim, result []byte) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	var err error
	var n int64
	if result == nil {
		tag, e := s.pool.Exec(octx, `DELETE FROM claims WHERE tool = $1 AND akey = $2 AND token = $3`, c.Tool, digest(c.Args), c.Token)
		err, n = e, tag.RowsAffected()
	} else {
		tag, e := s.pool.Exec(octx, `UPDATE claims SET done = true, result = $4, expires = clock_timestamp() + $5 * interval '1 millisecond'
			WHERE tool = $1 AND akey = $2 AND token = $3`, c.Tool, digest(c.Args), c.Token, result, claimGrace.Milliseconds())
		err, n = e, tag.RowsAffected()
	}
	if err != nil {
		return s.fail(ctx, "release claim "+c.Tool, err)
	}
	if n == 0 {
		return ErrClaimLost
	}
	return nil
}

// ReadClaim returns the current claim on (tool, args).
func (s *Postgres) ReadClaim(ctx context.Context, tool, args string) (*Claim, bool, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	c := &Claim{Tool: tool, Args: args}
	err := s.pool.QueryRow(octx, `SELECT token, owner, expires, done, result FROM claims WHERE tool = $1 AND akey = $2`, tool, digest(args)).
		Scan(&c.Token, &c.Owner, &c.Expires, &c.Done, &c.Result)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail(ctx, "read claim "+tool, err)
	}
	c.Expires = c.Expires.UTC()
	return c, true, nil
}

// pruneClaims removes claims expired long ago, at most once per
// pruneEvery per process.
func (s *Postgres) pruneClaims(ctx context.Context) {
	now := time.Now().UnixMilli()
	last := s.prune.Load()
	if now-last < pruneEvery.Milliseconds() || !s.prune.CompareAndSwap(last, now) {
		return
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM claims WHERE expires < clock_timestamp() - $1 * interval '1 millisecond'`, pruneEvery.Milliseconds()); err != nil {
		s.log.Warn("pruning expired claims failed", "store", s.path, "err", err)
	}
}
