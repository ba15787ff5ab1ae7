package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// LargeKeyBytes is the size above which a key (an entry's canonical
// arguments, its exact key, a claim's arguments) is stored by its
// SHA-256 rather than as itself, its full text kept compressed beside it
// (see digestKey). Writing a megabyte of arguments into the cache's key
// cost about as much CPU as everything else a call does with them
// (SQLite writes the key into the table's B-tree, and an exact key into
// its index too); a digest key costs 71 bytes. The size is part of the
// store's format, not a setting: every process sharing a store must
// compute the same key for the same arguments, so changing it needs a
// schema migration.
const LargeKeyBytes = 64 << 10

// KeyDigestPrefix starts the stored form of a large key: "sha256:" and
// the hex digest of the full text. Canonical arguments (a JSON object)
// start with "{", so a digest key is never mistaken for arguments; a
// key that itself starts with the prefix is stored by its digest too,
// so that no two texts share a stored key.
const KeyDigestPrefix = "sha256:"

// maxKeyText bounds the decompressed full text of a key read back (a
// damaged row must not make the store allocate without bound).
const maxKeyText = 1 << 30

// digestKey returns the form key is stored under and, for a large key,
// its full text compressed (nil for a key stored as itself): key itself
// when it is at most LargeKeyBytes long and does not start with
// KeyDigestPrefix, else KeyDigestPrefix + hex(SHA-256(key)).
//
// The full text is compressed with S2 (github.com/klauspost/compress/s2,
// Snappy's faster successor): on a megabyte of canonical arguments it
// costs 0.1–2.4 µs of CPU per KB and leaves 1/2.4 (natural-language
// text) to 1/6000 of the bytes to write. zstd at its fastest level
// leaves less of many small keys (1/60 against 1/2.6) but costs twice
// as much per KB on text: storing a megabyte of StableToolBench-like
// arguments with an exact key cost 27–30 µs/KB of the writer's CPU with
// zstd, 11 with S2; S2's worst shape (many small keys, 18 µs/KB) costs
// less than zstd's (BenchmarkLargeKeyCodec, BenchmarkPutLargeArgs).
func digestKey(key string) (stored string, z []byte) {
	if !isDigested(key) {
		return key, nil
	}
	return keyDigest(key), s2.Encode(nil, readOnlyBytes(key))
}

// digestMemo remembers the digest of the last large key it computed:
// a cache miss looks its key up (Get) and then stores it (Put), the same
// string both times, and hashing a megabyte key twice cost 3 % of the
// call. A key is recognised by its bytes' address and length, which
// name one immutable string's contents (the memo holds the address, so
// that string stays alive and no other takes its place): a hit is never
// another key's.
type digestMemo struct {
	mu     sync.Mutex
	at     *byte
	n      int
	digest string
}

// stored returns storedKey(key), from the memo when key is the last
// large key hashed.
func (d *digestMemo) stored(key string) string {
	if !isDigested(key) {
		return key
	}
	p := unsafe.StringData(key)
	d.mu.Lock()
	if d.at == p && d.n == len(key) {
		digest := d.digest
		d.mu.Unlock()
		return digest
	}
	d.mu.Unlock()
	digest := keyDigest(key)
	d.mu.Lock()
	d.at, d.n, d.digest = p, len(key), digest
	d.mu.Unlock()
	return digest
}

// digestKey is the package's digestKey, the digest from the memo.
func (d *digestMemo) digestKey(key string) (stored string, z []byte) {
	if !isDigested(key) {
		return key, nil
	}
	return d.stored(key), s2.Encode(nil, readOnlyBytes(key))
}

// readOnlyBytes returns s's bytes without copying them, for the readers
// that never write to their input (hashing, compressing): a copy of a
// megabyte key cost more than hashing it.
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// storedKey is digestKey without the compressed text, for lookups.
func storedKey(key string) string {
	if !isDigested(key) {
		return key
	}
	return keyDigest(key)
}

// isDigested reports whether key is stored by its digest.
func isDigested(key string) bool {
	return len(key) > LargeKeyBytes || strings.HasPrefix(key, KeyDigestPrefix)
}

// keyDigest is a large key's stored form. The key is hashed in place
// (readOnlyBytes): converting a megabyte string to a slice cost four
// times the hashing itself.
func keyDigest(key string) string {
	sum := sha256.Sum256(readOnlyBytes(key))
	return KeyDigestPrefix + hex.EncodeToString(sum[:])
}

// fullKey returns the full text of a key read from the store: stored
// itself, or the decompressed z of a digest key. known, when the caller
// looked the row up by a key whose stored form (knownStored) is stored,
// is that key and spares the decompression. A key without z is itself
// (PostgreSQL keeps the rows written before digest keys as they were,
// one of whose exact keys may start with the prefix). A z that is not
// S2 data, or does not hash to the digest, is an error (a damaged
// row), never a wrong key.
func fullKey(stored string, z []byte, known, knownStored string) (string, error) {
	if z == nil || !strings.HasPrefix(stored, KeyDigestPrefix) {
		return stored, nil
	}
	if knownStored == stored && known != "" {
		return known, nil
	}
	if n, err := s2.DecodedLen(z); err != nil || n > maxKeyText {
		return "", fmt.Errorf("the full text of key %s cannot be decompressed (%d bytes, %v): a damaged row", stored, n, err)
	}
	b, err := s2.Decode(nil, z)
	if err != nil {
		return "", fmt.Errorf("the full text of key %s cannot be decompressed (%v): a damaged row", stored, err)
	}
	full := string(b)
	if keyDigest(full) != stored {
		return "", fmt.Errorf("the full text stored beside key %s does not hash to it: a damaged row", stored)
	}
	return full, nil
}

// fullKeys replaces e's stored keys by their full text (see fullKey),
// given the compressed texts read beside them and the keys of the lookup
// that found the row.
func fullKeys(e *Entry, argz, exactz []byte, k lookupKeys) error {
	var err error
	if e.Args, err = fullKey(e.Args, argz, k.args, k.argsKey); err != nil {
		return fmt.Errorf("entry of %s: arguments: %w", e.Tool, err)
	}
	if e.Exact, err = fullKey(e.Exact, exactz, k.exact, k.exactKey); err != nil {
		return fmt.Errorf("entry of %s: exact key: %w", e.Tool, err)
	}
	return nil
}

// digestLargeKeysSQLite is the data step of the cache's third migration
// in SQLite: every row whose arguments or exact key would now be stored
// by its digest (see digestKey) is rewritten so, its full text moved,
// compressed, to argz or exactz. It reads the tables in key order a few
// rows at a time, resuming after the last key read, so that memory stays
// bounded by a few keys, and runs in the migration's transaction: a
// store is migrated whole or not at all.
func digestLargeKeysSQLite(ctx context.Context, tx *sql.Tx) error {
	// A row needs rewriting when a key is long, or starts with the
	// digest prefix without a full text beside it.
	const need = `(octet_length(args) > ?1 OR octet_length(exact) > ?1 OR (args GLOB 'sha256:*' AND argz IS NULL) OR (exact GLOB 'sha256:*' AND exactz IS NULL))`
	for _, t := range []struct{ table, key, update string }{
		{"cache", "args", `UPDATE cache SET args = ?, argz = ?, exact = ?, exactz = ? WHERE tool = ? AND args = ?`},
		{"cache_exact", "exact", `UPDATE cache_exact SET args = ?, argz = ?, exact = ?, exactz = ? WHERE tool = ? AND exact = ?`},
	} {
		q := `SELECT tool, args, exact FROM ` + t.table + ` WHERE (tool, ` + t.key + `) > (?2, ?3) AND ` + need + ` ORDER BY tool, ` + t.key + ` LIMIT 16`
		afterTool, afterKey := "", ""
		for {
			type row struct{ tool, args, exact string }
			var rows []row
			rs, err := tx.QueryContext(ctx, q, LargeKeyBytes, afterTool, afterKey)
			if err != nil {
				return fmt.Errorf("find large keys in %s: %w", t.table, err)
			}
			for rs.Next() {
				var r row
				if err := rs.Scan(&r.tool, &r.args, &r.exact); err != nil {
					rs.Close()
					return err
				}
				rows = append(rows, r)
			}
			rs.Close()
			if err := rs.Err(); err != nil {
				return err
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				args, argz := digestKey(r.args)
				exact, exactz := digestKey(r.exact)
				key := r.args
				if t.key == "exact" {
					key = r.exact
				}
				if _, err := tx.ExecContext(ctx, t.update, args, argz, exact, exactz, r.tool, key); err != nil {
					return fmt.Errorf("store the large keys of a row of %s by their digest: %w", t.table, err)
				}
			}
			last := rows[len(rows)-1]
			afterTool, afterKey = last.tool, last.args
			if t.key == "exact" {
				afterKey = last.exact
			}
		}
	}
	return nil
}
