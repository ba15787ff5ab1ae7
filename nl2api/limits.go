package nl2api

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// DefaultCallTimeout and DefaultMaxCallTimeout are a build's time limits
// when Options leave them zero: a gold query or a verification that runs
// longer than the first is run again under the second.
const (
	DefaultCallTimeout    = 10 * time.Second
	DefaultMaxCallTimeout = 5 * time.Minute
)

// Limits are the time limits a build ran under (Report.Limits), and the
// work that needed the longer one: a build's tasks never depend on the
// speed of the machine that made them, and this says what the speed cost.
type Limits struct {
	// CallTimeout is the limit of a gold query or a verification;
	// MaxCallTimeout the limit it runs again under when it runs out of
	// time. One that runs out of both fails the build, naming it.
	CallTimeout    string `json:"call_timeout"`
	MaxCallTimeout string `json:"max_call_timeout"`
	// Retried lists the work run again under MaxCallTimeout.
	Retried []Retried `json:"retried,omitempty"`
}

// Retried is one query or verification run again under the longer
// limit.
type Retried struct {
	// Stage is "gold", "ties", "nested ties" or "verify <collection>".
	Stage string `json:"stage"`
	// What names the question ("question 717 (superhero)") or the task.
	What string `json:"what"`
}

// TimeoutError is a gold query or a verification that ran out of time
// under MaxCallTimeout: the build fails rather than drop the question on
// a slow machine (or keep it on a fast one).
type TimeoutError struct {
	Stage, What string
	Limit       time.Duration
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: the %s ran out of time under --max-call-timeout %s (and under --call-timeout before it)", e.What, stageNoun(e.Stage), e.Limit)
}

func stageNoun(stage string) string {
	switch stage {
	case "gold":
		return "gold SQL"
	case "ties", "nested ties":
		return "query of the gold answer's " + stage
	}
	return "verification (" + stage + ")"
}

// timeLimits applies a build's two time limits and keeps what they did.
// It is safe for concurrent use.
type timeLimits struct {
	first, last time.Duration
	mu          sync.Mutex
	retried     []Retried
	failed      []*TimeoutError
}

func newTimeLimits(first, last time.Duration) *timeLimits {
	if last < first {
		last = first
	}
	return &timeLimits{first: first, last: last}
}

// steps returns the limits to try, in order.
func (t *timeLimits) steps() []time.Duration {
	if t.last > t.first {
		return []time.Duration{t.first, t.last}
	}
	return []time.Duration{t.first}
}

// query runs a read-only query under the limits: when it runs out of
// time under the first it runs again under the second; when it runs out
// of that too, the build fails (Err) naming what. Errors that are not
// timeouts are returned as they are.
func (t *timeLimits) query(ctx context.Context, db *rodb.DB, sql string, max int, stage, what string) (*rodb.Rows, error) {
	steps := t.steps()
	for i, limit := range steps {
		qctx, cancel := context.WithTimeout(ctx, limit)
		rows, err := db.Query(qctx, sql, nil, max)
		out := err != nil && ctx.Err() == nil && errors.Is(qctx.Err(), context.DeadlineExceeded)
		cancel()
		if !out {
			return rows, err
		}
		if i == len(steps)-1 {
			t.fail(stage, what)
			return nil, err
		}
		t.retry(stage, what)
	}
	panic("unreachable")
}

func (t *timeLimits) retry(stage, what string) {
	t.mu.Lock()
	t.retried = append(t.retried, Retried{Stage: stage, What: what})
	t.mu.Unlock()
}

func (t *timeLimits) fail(stage, what string) {
	t.mu.Lock()
	t.failed = append(t.failed, &TimeoutError{Stage: stage, What: what, Limit: t.last})
	t.mu.Unlock()
}

// Err returns the build's failure when something ran out of both limits:
// a StatusTimeout error naming every question or task that did, or nil.
func (t *timeLimits) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.failed) == 0 {
		return nil
	}
	sort.Slice(t.failed, func(i, j int) bool { return t.failed[i].Error() < t.failed[j].Error() })
	var msgs []string
	for i, f := range t.failed {
		if i == 5 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(t.failed)-i))
			break
		}
		msgs = append(msgs, f.Error())
	}
	return &toolenv.Error{Status: toolenv.StatusTimeout, Message: "build: " + strings.Join(msgs, "; "),
		Hint: "no task is dropped for running out of time, so that a build does not depend on the machine's speed: raise --max-call-timeout, or leave the database out (--db)"}
}

// report returns the limits and what needed the longer one, sorted so
// that the report does not depend on the order the workers finished in.
func (t *timeLimits) report() *Limits {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Limits{CallTimeout: t.first.String(), MaxCallTimeout: t.last.String(), Retried: append([]Retried(nil), t.retried...)}
	sort.Slice(r.Retried, func(i, j int) bool {
		a, b := r.Retried[i], r.Retried[j]
		return a.Stage < b.Stage || a.Stage == b.Stage && a.What < b.What
	})
	return r
}
