// Package tasksession keeps SLOT/SEL task sessions in the store, so that
// a session works whichever replica of a fleet a call reaches, survives a
// replica killed mid-session, and is never lost silently.
//
// # Design: a session is its call log
//
// A task session (package backend/sqltools) is a database and the
// labelled results of the calls made in it. Every result is a query
// derived from earlier ones over a read-only database, so a session's
// state is a pure function of its successful calls in order. Sessions
// therefore keep only that: one row per session (who it was issued to,
// whether it is live, when it was last used, how many calls it holds) and
// one row per successful call (the operation, its arguments, the label
// it got, the session's counters, a digest of the result). Before a call
// runs, a replica reads the calls appended since it last saw the session
// (none, usually: one indexed query) and replays them; a replica that has
// never seen the session replays all of them (about 40 µs a call, see
// BenchmarkColdReplay). A call is appended before it is acknowledged,
// and the append succeeds only as the session's next call (the row's
// call count is the optimistic check): two replicas racing on one
// session cannot both append call n, the loser replays the winner's call
// and runs again. Replay checks each rebuilt result against the logged
// digest, so replicas serving different databases or toolenv versions
// fail loudly instead of diverging.
//
// The alternative, storing each result's materialised state (its SQL and
// bound values), was rejected: the state holds references between
// results (filter lineages, getters, groupings) that would need a stable
// serialisation of the backend's internals, versioned with every change
// to them, while the call log is the protocol clients already speak and
// replay is cheap. Sticky routing at the load balancer (deploy/) keeps
// replays rare; correctness does not depend on it.
//
// # Issuing and ending sessions
//
// Sessions implements the session issuer of the HTTP server (ids made
// by the server, 128 random bits, bound to the caller's bearer token,
// stored as a digest) over the same rows, so an id issued by one replica
// is honoured by every other. The cap on live sessions (Options.Max) is
// the fleet's: a new session over it evicts the session idle longest
// that no call used within Options.Active, else it is refused. Sessions
// unused for Options.Idle expire. An evicted, expired or ended session
// keeps its row (without its calls) for Options.Retain, so that a late
// call gets an error saying what happened and what to do, rather than
// "unknown session".
//
// Its tables are the component "sessions" (Migrations); open the store
// with them (environment.Open and toolenv store migrate do).
package tasksession
