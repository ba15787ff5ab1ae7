package world

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
)

// wconn is one writable connection of a base: a private copy of the
// database, which between calls may hold a world's state in an open
// transaction (owner at version), so that the next call of the same
// world finds it ready.
type wconn struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
	// owner's state at version is applied, in an open transaction; nil:
	// the connection holds the base, no transaction open.
	owner   *World
	version uint64
}

// pool holds a base's writable connections.
type pool struct {
	db   *sql.DB
	drop []string // statements run on every new connection
	sem  chan struct{}
	mu   sync.Mutex
	free []*wconn // least recently released first
}

func newPool(conn driver.Connector, n int, drop []string) *pool {
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return &pool{db: db, drop: drop, sem: make(chan struct{}, n)}
}

// acquire returns a connection for w: one that holds w's state already
// when there is one, else one holding the base, else the one released
// longest ago. It waits while all are in use.
func (p *pool) acquire(ctx context.Context, w *World) (*wconn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	pick := -1
	for i, c := range p.free {
		if c.owner == w && c.version == w.version {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, c := range p.free {
			if c.owner == nil {
				pick = i
				break
			}
		}
	}
	if pick < 0 && len(p.free) > 0 {
		pick = 0
	}
	if pick >= 0 {
		c := p.free[pick]
		p.free = append(p.free[:pick], p.free[pick+1:]...)
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := p.open(ctx)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return c, nil
}

// open makes a new connection: a fresh copy of the database, its own
// triggers dropped.
func (p *pool) open(ctx context.Context) (*wconn, error) {
	c, err := p.db.Conn(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("open a writable copy of the database: %w", err)
	}
	w := &wconn{c: c, stmts: map[string]*sql.Stmt{}}
	if err := noAttach(c); err != nil {
		w.discard()
		return nil, fmt.Errorf("forbid ATTACH on a writable copy: %w", err)
	}
	for _, s := range p.drop {
		if _, err := c.ExecContext(context.WithoutCancel(ctx), s); err != nil {
			w.discard()
			return nil, fmt.Errorf("prepare a writable copy (%s): %w", s, err)
		}
	}
	return w, nil
}

// release gives c back; broken connections are discarded.
func (p *pool) release(c *wconn, broken bool) {
	if broken {
		c.discard()
	} else {
		p.mu.Lock()
		p.free = append(p.free, c)
		p.mu.Unlock()
	}
	<-p.sem
}

// discard closes c for good: its copy may hold anything.
func (c *wconn) discard() {
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
	c.owner = nil
	// ErrBadConn makes database/sql close the driver connection instead
	// of keeping it idle with its transaction open.
	_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.c.Close()
}

// stmt returns c's prepared statement of query.
func (c *wconn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := c.stmts[query]; s != nil {
		return s, nil
	}
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// exec runs a statement that must not be interrupted (transaction
// control): it ignores ctx's cancellation.
func (c *wconn) exec(ctx context.Context, query string) error {
	s, err := c.stmt(context.WithoutCancel(ctx), query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(context.WithoutCancel(ctx))
	return err
}

// reset rolls back whatever c holds: it holds the base again.
func (c *wconn) reset(ctx context.Context) error {
	if c.owner == nil {
		return nil
	}
	c.owner = nil
	return c.exec(ctx, "ROLLBACK")
}

// close closes every connection of the pool.
func (p *pool) close() error {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	var errs []error
	for _, c := range free {
		for _, s := range c.stmts {
			s.Close()
		}
		c.owner = nil
		errs = append(errs, c.c.Close())
	}
	errs = append(errs, p.db.Close())
	return errors.Join(errs...)
}
