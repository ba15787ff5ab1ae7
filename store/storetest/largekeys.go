package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// LargeArgs returns the canonical JSON of a random arguments object of
// exactly n bytes (n ≥ 64): members of random shapes (small keys with
// numbers, objects up to 64 deep, strings with escapes and multi-byte
// characters, arrays of numbers), then a member "~pad" whose string of
// ASCII letters brings the text to n bytes. Two calls with generators in
// the same state return the same text.
func LargeArgs(r *rand.Rand, n int) string {
	m := map[string]any{}
	size := 2
	for i := 0; ; i++ {
		key := fmt.Sprintf("k%d", i)
		var v any
		switch r.IntN(4) {
		case 0:
			v = r.IntN(1000)
		case 1:
			var deep any = []any{1.5, "x", true, nil}
			for j := r.IntN(64); j >= 0; j-- {
				deep = map[string]any{fmt.Sprintf("n%d", j%10): deep}
			}
			v = deep
		case 2:
			var b strings.Builder
			for range 1 + r.IntN(200) {
				b.WriteString([]string{"lorem ", "é日本", `"q"`, "\n\t", "\x01", "🎉"}[r.IntN(6)])
			}
			v = b.String()
		case 3:
			arr := make([]any, 1+r.IntN(300))
			for j := range arr {
				arr[j] = float64(r.IntN(100000)) / 8
			}
			v = arr
		}
		c, _ := toolenv.Canonical(map[string]any{key: v})
		if size+len(c) > n-64 {
			break
		}
		m[key] = v
		size += len(c) - 1
	}
	base, err := toolenv.Canonical(m)
	if err != nil {
		panic(err) // the values above are all canonical JSON's
	}
	// {…,"~pad":"…"}: the member adds len(`,"~pad":""`) and its string.
	pad := n - len(base) - len(`,"~pad":""`)
	if len(m) == 0 {
		pad++ // no comma before the only member
	}
	if pad < 0 {
		panic(fmt.Sprintf("LargeArgs: %d bytes of members leave no room for %d", len(base), n))
	}
	p := make([]byte, pad)
	for i := range p {
		p[i] = 'a' + byte(r.IntN(26))
	}
	m["~pad"] = string(p)
	out, err := toolenv.Canonical(m)
	if err != nil || len(out) != n {
		panic(fmt.Sprintf("LargeArgs: %d bytes, want %d (%v)", len(out), n, err))
	}
	return string(out)
}

// lastByteChanged returns s with its last letter before the closing
// `"}` changed: arguments that differ from s only at their end.
func lastByteChanged(s string) string {
	b := []byte(s)
	i := len(b) - 3
	b[i] = 'a' + (b[i]-'a'+1)%26
	return string(b)
}

// testLargeKeys stores entries whose arguments and exact keys are just
// under, at and just over store.LargeKeyBytes (and far over), pairs that
// differ only at their end, exact keys that look like a digest key, and
// checks every way an entry is read back: Get, GetExact, Each, Examples,
// a reopened store, a batch through PutMany (new and overwritten), and
// claims. The store keeps a large key as its digest (the rows' key
// columns hold no key longer than LargeKeyBytes), but no reader sees a
// difference.
func testLargeKeys(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	// Without the in-memory LRU, every lookup reads the database.
	st := open(t, loc, store.Options{MemoryBytes: -1})
	r := rand.New(rand.NewPCG(29, 6))
	L := store.LargeKeyBytes
	type item struct {
		tool, args, exact, body string
	}
	var items []item
	n := 0
	add := func(tool, args, exact string) {
		n++
		items = append(items, item{tool, args, exact, fmt.Sprintf(`{"n":%d}`, n)})
	}
	for _, size := range []int{L - 1, L, L + 1, L + 2, 2 * L, 1 << 20} {
		a := LargeArgs(r, size)
		add("c/plain", a, "")
		add("c/plain", lastByteChanged(a), "") // differs only at its end
		// An exact key of the same size (the client's own spelling).
		ex := "{'q': '" + LargeArgs(r, size-9)[2:] + "'}"
		add("c/exact", a, ex)
		add("c/exact", lastByteChanged(a), lastByteChanged(ex))
		// A second exact key of the same arguments: kept only under it.
		add("c/exact", a, ex+" ")
	}
	// Keys that look like digest keys: one of another key's digest form
	// (it must not find that key's entry), one of an arbitrary digest.
	big := items[len(items)-1]
	add("c/exact", `{"a":1}`, "sha256:"+strings.Repeat("0", 64))
	add("c/exact", `{"a":2}`, fmt.Sprintf("sha256:%s", digestHex(big.exact)))
	add("c/exact", `{"a":3}`, "sha256:")
	for _, it := range items {
		if !mustPut(t, st, entry(it.tool, it.args, it.exact, it.body)) {
			t.Fatalf("put %s args of %d bytes, exact of %d: not stored", it.tool, len(it.args), len(it.exact))
		}
	}
	check := func(what string, st store.Store) {
		t.Helper()
		for _, it := range items {
			e, ok, err := st.GetExact(ctx, it.tool, it.exact, it.args)
			wantBody(t, fmt.Sprintf("%s: GetExact args %d bytes exact %d bytes", what, len(it.args), len(it.exact)), e, ok, err, it.body)
			if e.Args != it.args || e.Exact != it.exact {
				t.Fatalf("%s: GetExact of args %d bytes returned args %d bytes (equal %v), exact %d bytes (equal %v)",
					what, len(it.args), len(e.Args), e.Args == it.args, len(e.Exact), e.Exact == it.exact)
			}
		}
		// The canonical slot of each args: the first entry put with them.
		first := map[string]item{}
		for _, it := range items {
			if _, ok := first[it.tool+"\x00"+it.args]; !ok {
				first[it.tool+"\x00"+it.args] = it
			}
		}
		for _, it := range first {
			e, ok, err := st.Get(ctx, it.tool, it.args)
			wantBody(t, fmt.Sprintf("%s: Get args %d bytes", what, len(it.args)), e, ok, err, it.body)
			if e.Args != it.args || e.Exact != it.exact {
				t.Fatalf("%s: Get of args %d bytes: keys not read back whole", what, len(it.args))
			}
		}
		// An exact key no entry has, over large arguments: the canonical
		// entry answers, with its own exact key.
		for _, it := range first {
			e, ok, err := st.GetExact(ctx, it.tool, it.exact+"  ", it.args)
			wantBody(t, what+": GetExact of an unknown exact key", e, ok, err, it.body)
			if e.Exact != it.exact || e.Args != it.args {
				t.Fatalf("%s: the canonical entry's keys not read back whole", what)
			}
		}
		var got []string
		if err := st.Each(ctx, func(e *store.Entry) error {
			got = append(got, e.Tool+"\x00"+e.Args+"\x00"+e.Exact+"\x00"+string(e.Body))
			return nil
		}); err != nil {
			t.Fatalf("%s: Each: %v", what, err)
		}
		var want []string
		for _, it := range items {
			want = append(want, it.tool+"\x00"+it.args+"\x00"+it.exact+"\x00"+it.body)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Each returned %d entries, want %d, or their keys or bodies differ", what, len(got), len(want))
		}
		ex, err := st.Examples(ctx, "c/plain", 100)
		if err != nil || len(ex) != 12 {
			t.Fatalf("%s: Examples: %d %v", what, len(ex), err)
		}
		for _, e := range ex {
			if it := first["c/plain\x00"+e.Args]; it.body != string(e.Body) {
				t.Fatalf("%s: an example's args (%d bytes) are not those of its entry", what, len(e.Args))
			}
		}
	}
	check("stored", st)
	// The first answer wins for large keys too.
	for _, it := range items {
		if mustPut(t, st, entry(it.tool, it.args, it.exact, `"again"`)) {
			t.Fatalf("a second answer for args of %d bytes, exact %d bytes was stored", len(it.args), len(it.exact))
		}
	}
	// No key column holds a key longer than LargeKeyBytes.
	db := st.SQL()
	for _, q := range []string{`SELECT count(*) FROM cache WHERE octet_length(args) > ? OR octet_length(exact) > ?`} {
		var k int
		if err := db.Read.QueryRowContext(ctx, db.Rebind(q), L, L).Scan(&k); err != nil || k != 0 {
			t.Fatalf("%d rows keep a key longer than %d bytes (%v)", k, L, err)
		}
	}
	st.Close()
	check("reopened", open(t, loc, store.Options{MemoryBytes: -1}))

	// A batch of new entries (the chunked path) and the same batch
	// overwritten.
	st2 := open(t, fresh(t), store.Options{MemoryBytes: -1})
	var batch []*store.Entry
	for i := range 40 {
		size := []int{L - 1, L, L + 1, 300}[i%4]
		a := LargeArgs(r, size)
		exact := ""
		if i%3 == 0 {
			exact = "{'k': '" + a + "'}"
		}
		batch = append(batch, entry("c/batch", a, exact, fmt.Sprintf("%d", i)))
	}
	if k, err := st2.PutMany(ctx, batch, false); err != nil || k != len(batch) {
		t.Fatalf("PutMany: %d of %d stored (%v)", k, len(batch), err)
	}
	// Second answers under other exact keys, then everything replaced.
	for i := range 10 {
		e := *batch[i]
		e.Exact = "{'other': '" + e.Args + "'}"
		batch = append(batch, &e)
	}
	for i, e := range batch {
		e.Body = []byte(fmt.Sprintf(`"new %d"`, i))
	}
	if k, err := st2.PutMany(ctx, batch, true); err != nil || k != len(batch) {
		t.Fatalf("PutMany overwriting: %d of %d stored (%v)", k, len(batch), err)
	}
	for _, e := range batch {
		got, ok, err := st2.GetExact(ctx, e.Tool, e.Exact, e.Args)
		wantBody(t, "after overwrite", got, ok, err, string(e.Body))
		if got.Args != e.Args || got.Exact != e.Exact {
			t.Fatalf("after overwrite: keys of %d bytes not read back whole", len(e.Args))
		}
	}

	// Claims on large arguments that differ only at their end are two.
	a := LargeArgs(r, L+1)
	b := lastByteChanged(a)
	ca, won, err := st2.Claim(ctx, "c/t", a, "one", time.Minute)
	if err != nil || !won {
		t.Fatalf("claim a: %v %v", won, err)
	}
	cb, won, err := st2.Claim(ctx, "c/t", b, "two", time.Minute)
	if err != nil || !won {
		t.Fatalf("claim b (differs from a at its end): won=%v %v", won, err)
	}
	if _, won, _ := st2.Claim(ctx, "c/t", a, "three", time.Minute); won {
		t.Fatal("a held claim on large arguments was taken again")
	}
	for _, c := range []*store.Claim{ca, cb} {
		cur, ok, err := st2.ReadClaim(ctx, "c/t", c.Args)
		if err != nil || !ok || cur.Token != c.Token || cur.Args != c.Args {
			t.Fatalf("read claim: %+v %v %v", cur, ok, err)
		}
		if err := st2.RenewClaim(ctx, c, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := st2.ReleaseClaim(ctx, ca, []byte(`"done"`)); err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := st2.ReadClaim(ctx, "c/t", a); cur == nil || !cur.Done || string(cur.Result) != `"done"` {
		t.Fatalf("released claim: %+v", cur)
	}
	if cur, _, _ := st2.ReadClaim(ctx, "c/t", b); cur == nil || cur.Done {
		t.Fatalf("the other claim after releasing one: %+v", cur)
	}
}

func digestHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
