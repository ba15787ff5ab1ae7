package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// Store is toolenv's persistent state: the response cache, the records of
// LLM exchanges, the claims that make a fleet of replicas answer each new
// call once, and the schema versions of every component's tables.
//
// Two implementations pass one conformance suite (store/storetest):
// *SQLite, the embedded default, and *Postgres, for several replicas.
// Open picks one from a DSN.
type Store interface {
	// Get returns the canonical entry for tool and canonical args.
	Get(ctx context.Context, tool, args string) (*Entry, bool, error)
	// GetExact returns the entry recorded under the exact key (see
	// Entry.Exact) when exact is not empty and one exists, else the
	// canonical entry for args. The returned entry's Exact says which one
	// was found: it equals exact only for an exact hit.
	GetExact(ctx context.Context, tool, exact, args string) (*Entry, bool, error)
	// Put stores e unless its key is taken (the first answer wins, so a
	// cached call keeps its answer) and reports whether e was stored. An
	// entry with an exact key is stored under it even when another exact
	// key took its canonical slot first; it loses only to an entry with
	// the same exact key (or, without one, to any canonical entry).
	Put(ctx context.Context, e *Entry) (bool, error)
	// PutMany stores entries in one transaction, as Put does each; with
	// overwrite, an entry replaces the one stored under its key. It
	// returns how many entries were written.
	PutMany(ctx context.Context, entries []*Entry, overwrite bool) (int, error)
	// Delete removes the entries of a tool (all tools when tool is "") and
	// returns how many were removed.
	Delete(ctx context.Context, tool string) (int64, error)
	// Examples returns up to limit successful canonical entries of tool,
	// oldest first: the pool a simulator picks its few-shot examples from.
	Examples(ctx context.Context, tool string, limit int) ([]*Entry, error)
	// Each calls fn for every entry, stopping at the first error: the
	// canonical entries ordered by tool and arguments, then the entries
	// kept only under their exact key, ordered by tool and exact key (a
	// key over LargeKeyBytes sorts as its stored digest form). Every
	// entry carries its full keys.
	Each(ctx context.Context, fn func(*Entry) error) error

	// Lookup returns the recorded LLM response for key (llm.Recorder).
	Lookup(ctx context.Context, key string) ([]byte, bool, error)
	// Record stores an LLM request and its response under key, keeping
	// the first record of a key (llm.Recorder).
	Record(ctx context.Context, key string, req, resp []byte) error

	// Claim takes the right to answer the key (tool, args) for lease, for
	// the processes sharing the store. It wins when nobody holds the key,
	// its holder's lease ran out (the holder died) or the holder released
	// it. It returns the claim as it now stands: the caller's own when
	// won, else the holder's (whose Token a waiter watches).
	Claim(ctx context.Context, tool, args, owner string, lease time.Duration) (c *Claim, won bool, err error)
	// RenewClaim extends a claim the caller holds; ErrClaimLost when
	// another process took it over.
	RenewClaim(ctx context.Context, c *Claim, lease time.Duration) error
	// ReleaseClaim gives a claim up. With a nil result the claim is
	// removed (the answer is in the cache); otherwise it is kept, marked
	// done, holding result for the processes that waited on it.
	ReleaseClaim(ctx context.Context, c *Claim, result []byte) error
	// ReadClaim returns the current claim on (tool, args), if any.
	ReadClaim(ctx context.Context, tool, args string) (*Claim, bool, error)

	// Stats counts the store's contents.
	Stats(ctx context.Context) (*Stats, error)
	// Check verifies the database's integrity and returns an error
	// describing any damage.
	Check(ctx context.Context) error
	// Schema returns the schema version of every component recorded in
	// the store, with the version this program knows.
	Schema(ctx context.Context) ([]SchemaVersion, error)
	// SQL is the database behind the store, for subsystems that keep
	// tables of their own (see Migration).
	SQL() *DB
	// Kind is "sqlite" or "postgres".
	Kind() string
	// Path names the store for messages: a file path, or a DSN with its
	// password removed.
	Path() string
	// Close closes the store.
	Close() error
}

// Entry is one cached response.
type Entry struct {
	// Tool is the tool ID ("collection/name").
	Tool string `json:"tool"`
	// Args is the canonical JSON of the arguments (toolenv.Canonical).
	Args string `json:"args"`
	// Exact is the arguments exactly as the client or the recorded cache
	// wrote them, order and value types included; empty when unknown. For
	// StableToolBench it is the Python repr of the client's arguments
	// ("{'length': '7'}"), the key its cache files use. Answers recorded
	// under different exact keys of one canonical key are all kept; the
	// first one stored is also the canonical answer.
	Exact string `json:"exact,omitempty"`
	// Status is the cached result's status (normally ok).
	Status toolenv.Status `json:"status"`
	// Body is the response payload.
	Body json.RawMessage `json:"response"`
	// Error is the response's error message, usually empty.
	Error string `json:"error,omitempty"`
	// Origin is where the response first came from (upstream, simulator,
	// synthesizer) or "import" for entries read from another cache.
	Origin string `json:"origin"`
	// Created is when the entry was stored.
	Created time.Time `json:"created"`
}

// Claim is one process's right to answer a key the cache misses, on
// behalf of every process sharing the store.
type Claim struct {
	// Tool and Args are the key claimed (tool ID, canonical arguments).
	Tool string `json:"tool"`
	Args string `json:"args"`
	// Token identifies this holding: a claim taken over by another
	// process has a new token.
	Token string `json:"token"`
	// Owner names the holder for messages (host and process).
	Owner string `json:"owner"`
	// Expires is when the lease runs out unless renewed.
	Expires time.Time `json:"expires"`
	// Done says the holder released it with a result (Result) for the
	// processes that waited on it.
	Done bool `json:"done"`
	// Result is the released result, when Done.
	Result []byte `json:"result,omitempty"`
}

// ErrClaimLost is returned by RenewClaim and ReleaseClaim when the claim
// was taken over by another process (its lease ran out).
var ErrClaimLost = errors.New("the claim was taken over by another process (its lease ran out)")

// ErrUnavailable marks errors that mean the store cannot be reached (a
// database server down or unreachable): errors.Is(err, ErrUnavailable).
var ErrUnavailable = errors.New("the store is unavailable")

// Options configure a store.
type Options struct {
	// MemoryBytes bounds the in-memory LRU in front of the cache;
	// 0 means 256 MiB, negative disables it.
	MemoryBytes int
	// Logger logs maintenance and migrations; nil discards.
	Logger *slog.Logger
	// BusyTimeout is how long an SQLite writer waits for another
	// process's lock; default 10s.
	BusyTimeout time.Duration
	// Timeout bounds each PostgreSQL operation (and connecting), so that
	// calls fail fast when the server is gone; default 5s.
	Timeout time.Duration
	// MaxConns bounds PostgreSQL connections; 0 means 16.
	MaxConns int
	// Migrations are the schema steps of components outside this package
	// (see Migration); the store's own are always applied.
	Migrations []Migration
	// NoMigrate refuses to open a store whose schema is older than this
	// program's instead of migrating it (toolenv store migrate does it).
	NoMigrate bool
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// IsPostgres reports whether dsn names a PostgreSQL database
// (postgres:// or postgresql://, or a libpq keyword/value string:
// "host=db dbname=toolenv user=u password=…") rather than an SQLite
// file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || redact.IsKeywords(dsn)
}

// Open opens the store dsn names: a postgres:// or postgresql:// URL or
// a libpq keyword/value string opens PostgreSQL, anything else is an SQLite file path (":memory:" opens a
// private in-memory store, for tests). The schema is migrated to this
// program's version unless opts.NoMigrate; a store whose schema is newer
// than this program's is refused.
func Open(ctx context.Context, dsn string, opts Options) (Store, error) {
	if IsPostgres(dsn) {
		return OpenPostgres(ctx, dsn, opts)
	}
	return OpenSQLite(ctx, dsn, opts)
}

// DB is the SQL database behind a store, for subsystems with tables of
// their own: they declare them as Migrations and query them here.
type DB struct {
	// Write is where statements that change data run (for SQLite, one
	// connection: begin a transaction there for read-modify-write).
	Write *sql.DB
	// Read serves queries (for PostgreSQL the same pool as Write).
	Read *sql.DB
	// Dialect is "sqlite" or "postgres": placeholders are ? in SQLite
	// and $1, $2, … in PostgreSQL.
	Dialect string
}

// PrincipalDigest is what a subsystem's row keeps of the principal it
// was issued to (a task session's, an episode's): a digest, never the
// token itself; "" for no principal.
func PrincipalDigest(p string) string {
	if p == "" {
		return ""
	}
	h := sha256.Sum256([]byte(p))
	return hex.EncodeToString(h[:16])
}

// Rebind returns query, written with ? placeholders, in the dialect's:
// as it is for SQLite, with $1, $2, … for PostgreSQL.
func (db *DB) Rebind(query string) string {
	if db.Dialect != "postgres" {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Stats describes the store's contents.
type Stats struct {
	Path     string         `json:"path"`
	Kind     string         `json:"kind"`
	Entries  int64          `json:"entries"`
	Tools    int64          `json:"tools"`
	ByOrigin map[string]int `json:"by_origin"`
	ByStatus map[string]int `json:"by_status"`
	// ExactOnly counts the entries kept only under their exact key
	// (another exact key holds their canonical slot).
	ExactOnly int64 `json:"exact_only"`
	// TopTools are the tools with the most entries.
	TopTools []ToolCount `json:"top_tools"`
	Records  int64       `json:"records"`
	// Claims counts the claims on misses being answered (or released
	// with a failure) right now.
	Claims int64 `json:"claims"`
	Bytes  int64 `json:"bytes"`
}

// ToolCount is a tool and its number of cache entries.
type ToolCount struct {
	Tool    string `json:"tool"`
	Entries int    `json:"entries"`
}

// memKey is the in-memory LRU's key of a canonical entry.
func memKey(tool, args string) lruKey { return lruKey{tool: tool, args: args} }

func newMem(opts Options) *lru {
	if opts.MemoryBytes < 0 {
		return nil
	}
	n := opts.MemoryBytes
	if n == 0 {
		n = 256 << 20
	}
	return newLRU(n)
}

// normalize fills an entry's defaults before it is stored.
func normalize(e *Entry, now time.Time) error {
	if e.Tool == "" {
		return errors.New("cache put: entry has no tool")
	}
	if e.Created.IsZero() {
		e.Created = now
	}
	if e.Status == "" {
		e.Status = toolenv.StatusOK
	}
	return nil
}

func toolStatus(s string) toolenv.Status { return toolenv.Status(s) }
