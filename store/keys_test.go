package store

import (
	"strings"
	"testing"
)

// FuzzStoredKey checks the stored form of keys: two different keys
// never share a stored form (a key stored as itself is short and never
// starts with the digest prefix; any other is stored by its digest), a
// stored key is never longer than LargeKeyBytes, the full text comes
// back from it, and a damaged full text (any bytes as z) is an error or
// a text that hashes to the digest, never a panic or another key.
func FuzzStoredKey(f *testing.F) {
	for _, s := range []string{"", "{}", `{"a":1}`, "sha256:", "sha256:" + strings.Repeat("0", 64), "{'a': 1}"} {
		f.Add(s, "{}", []byte{0xff, 0x06, 0x00, 0x00, 0x53, 0x32})
	}
	f.Fuzz(func(t *testing.T, a, b string, junk []byte) {
		for _, k := range []string{a, b, a + strings.Repeat(b+"x", LargeKeyBytes/(len(b)+1)+1)} {
			stored, z := digestKey(k)
			if len(stored) > LargeKeyBytes {
				t.Fatalf("a key of %d bytes stored under %d bytes", len(k), len(stored))
			}
			if (stored == k) != (z == nil) || (stored == k) == isDigested(k) || storedKey(k) != stored {
				t.Fatalf("key %.40q: stored %.80q, z %d bytes", k, stored, len(z))
			}
			full, err := fullKey(stored, z, "", "")
			if err != nil || full != k {
				t.Fatalf("key %.40q read back as %.40q: %v", k, full, err)
			}
			if got, err := fullKey(stored, junk, "", ""); err == nil && got != k && z != nil {
				t.Fatalf("junk beside the digest of %.40q read as another key %.40q", k, got)
			}
		}
		if a != b && storedKey(a) == storedKey(b) {
			t.Fatalf("%.40q and %.40q share a stored key", a, b)
		}
	})
}

// TestDigestMemo: the memo's stored form is storedKey's for every key,
// whether it is the last key hashed (the same string again), a copy of
// it at another address, another key of the same length, or a short key;
// and its compressed text is digestKey's.
func TestDigestMemo(t *testing.T) {
	large := strings.Repeat("a", LargeKeyBytes+1)
	other := strings.Repeat("b", LargeKeyBytes+1)
	var d digestMemo
	for _, tc := range []struct {
		name, key string
	}{
		{"first", large},
		{"the same string again", large},
		{"a copy elsewhere", strings.Clone(large)},
		{"another key of the same length", other},
		{"the first again", large},
		{"a short key", `{"a":1}`},
		{"a key with the digest prefix", KeyDigestPrefix + "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := d.stored(tc.key), storedKey(tc.key); got != want {
				t.Fatalf("stored = %.80q, want %.80q", got, want)
			}
			gotKey, gotZ := d.digestKey(tc.key)
			wantKey, wantZ := digestKey(tc.key)
			if gotKey != wantKey || string(gotZ) != string(wantZ) {
				t.Fatalf("digestKey = %.80q (%d bytes), want %.80q (%d bytes)", gotKey, len(gotZ), wantKey, len(wantZ))
			}
		})
	}
}
