// Package storetest is the conformance suite every store.Store passes:
// the embedded SQLite store and PostgreSQL run the same tests (store's
// own tests call Run for each). A new implementation, or a subsystem that
// adds tables, proves itself here.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// Run runs the suite. fresh returns the location (file path or DSN) of a
// new, empty store; each test opens it through store.Open, some of them
// more than once at a time (two handles stand for two processes).
func Run(t *testing.T, fresh func(t *testing.T) string) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fresh func(t *testing.T) string)
	}{
		{"FirstAnswerWins", testFirstAnswerWins},
		{"ExactKeysKeepEveryRecordedAnswer", testExactKeys},
		{"ExactKeyConflicts", testExactKeyConflicts},
		{"Overwrite", testOverwrite},
		{"ExactKeyResolvedToCanonicalFollowsWrites", testResolvedExactKeys},
		{"PutManyCountsAndBatchDuplicates", testPutMany},
		{"PutManyStoresAsPutDoesOneByOne", testPutManyAsPut},
		{"EachOrderAndExport", testEach},
		{"ExamplesStatsDelete", testExamplesStatsDelete},
		{"KeysAndBodiesSurviveExactly", testAwkwardBytes},
		{"LargeKeysByDigest", testLargeKeys},
		{"Records", testRecords},
		{"Claims", testClaims},
		{"ClaimTakeoverAfterLease", testClaimTakeover},
		{"OneAnswerPerKeyAcrossHandles", testOneAnswerAcrossHandles},
		{"ClaimsAcrossHandles", testClaimsAcrossHandles},
		{"PersistsAcrossReopen", testReopen},
		{"Migrations", testMigrations},
		{"SchemaSkewRefused", testSchemaSkew},
		{"SQLForSubsystems", testSQL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh) })
	}
}

func open(t *testing.T, loc string, opts store.Options) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func entry(tool, args, exact, body string) *store.Entry {
	return &store.Entry{Tool: tool, Args: args, Exact: exact, Status: toolenv.StatusOK, Body: json.RawMessage(body), Origin: "simulator"}
}

func mustPut(t *testing.T, st store.Store, e *store.Entry) bool {
	t.Helper()
	ok, err := st.Put(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// wantBody checks that a lookup finds an entry with body.
func wantBody(t *testing.T, what string, e *store.Entry, ok bool, err error, body string) {
	t.Helper()
	if err != nil || !ok {
		t.Fatalf("%s: ok=%v err=%v, want %s", what, ok, err, body)
	}
	if string(e.Body) != body {
		t.Fatalf("%s: body %s, want %s", what, e.Body, body)
	}
}

func testFirstAnswerWins(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	if _, ok, err := st.Get(ctx, "c/t", `{"a":1}`); ok || err != nil {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	if !mustPut(t, st, entry("c/t", `{"a":1}`, "", `"first"`)) {
		t.Fatal("first put not stored")
	}
	if mustPut(t, st, entry("c/t", `{"a":1}`, "", `"second"`)) {
		t.Fatal("second put of the same key reported stored")
	}
	e, ok, err := st.Get(ctx, "c/t", `{"a":1}`)
	wantBody(t, "get", e, ok, err, `"first"`)
	if e.Tool != "c/t" || e.Args != `{"a":1}` || e.Status != toolenv.StatusOK || e.Origin != "simulator" || e.Created.IsZero() {
		t.Fatalf("entry = %+v", e)
	}
	if _, ok, _ := st.Get(ctx, "c/other", `{"a":1}`); ok {
		t.Fatal("another tool's key hit")
	}
	// An entry stored without an exact key answers exact lookups as the
	// canonical fallback.
	e, ok, err = st.GetExact(ctx, "c/t", "{'a': 1}", `{"a":1}`)
	wantBody(t, "exact lookup falling back", e, ok, err, `"first"`)
	if e.Exact != "" {
		t.Fatalf("fallback entry's Exact = %q, want empty", e.Exact)
	}
	// A failed status and an error message are kept.
	mustPut(t, st, &store.Entry{Tool: "c/t", Args: `{"a":2}`, Status: toolenv.StatusUpstreamError, Error: "boom", Body: json.RawMessage(`""`), Origin: "import"})
	e, ok, err = st.Get(ctx, "c/t", `{"a":2}`)
	wantBody(t, "error entry", e, ok, err, `""`)
	if e.Status != toolenv.StatusUpstreamError || e.Error != "boom" || e.Origin != "import" {
		t.Fatalf("error entry = %+v", e)
	}
}

// testExactKeys: answers recorded under distinct exact keys of one
// canonical key (StableToolBench's {'length': 7}, {'length': '7'} and the
// keys in another order) are all kept; each exact key finds its own, an
// unknown exact key or a canonical lookup finds the first stored.
func testExactKeys(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	canon := `{"length":7,"unit":"m"}`
	keys := []string{"{'length': 7, 'unit': 'm'}", "{'length': '7', 'unit': 'm'}", "{'unit': 'm', 'length': 7}"}
	for i, k := range keys {
		if !mustPut(t, st, entry("c/len", canon, k, fmt.Sprintf(`"answer %d"`, i))) {
			t.Fatalf("exact key %s not stored", k)
		}
	}
	for i, k := range keys {
		e, ok, err := st.GetExact(ctx, "c/len", k, canon)
		wantBody(t, "exact "+k, e, ok, err, fmt.Sprintf(`"answer %d"`, i))
		if e.Exact != k || e.Args != canon {
			t.Fatalf("exact %s: entry has exact %q args %q", k, e.Exact, e.Args)
		}
	}
	e, ok, err := st.GetExact(ctx, "c/len", "{'unit': 'm', 'length': '7'}", canon)
	wantBody(t, "unknown exact key", e, ok, err, `"answer 0"`)
	e, ok, err = st.Get(ctx, "c/len", canon)
	wantBody(t, "canonical", e, ok, err, `"answer 0"`)
	if e.Exact != keys[0] {
		t.Fatalf("canonical entry's exact key %q, want %q (the first recorded)", e.Exact, keys[0])
	}
	// The exact key is found even when the lookup's canonical arguments
	// differ (a call keyed before the arguments were coerced).
	e, ok, err = st.GetExact(ctx, "c/len", keys[1], `{"length":"7","unit":"m"}`)
	wantBody(t, "exact key with other canonical args", e, ok, err, `"answer 1"`)
	e, ok, err = st.GetExact(ctx, "c/len", keys[0], `{"length":"7","unit":"m"}`)
	wantBody(t, "canonical holder's exact key with other canonical args", e, ok, err, `"answer 0"`)
	if _, ok, _ := st.GetExact(ctx, "c/len", "{'x': 1}", `{"x":1}`); ok {
		t.Fatal("an unknown exact key and unknown args hit")
	}
	s, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 3 || s.ExactOnly != 2 || s.Tools != 1 {
		t.Fatalf("stats = %+v, want 3 entries, 2 exact-only, 1 tool", s)
	}
}

func testExactKeyConflicts(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	mustPut(t, st, entry("c/t", `{"a":1}`, "{'a': 1}", `"one"`))
	if mustPut(t, st, entry("c/t", `{"a":1}`, "{'a': 1}", `"again"`)) {
		t.Fatal("the same exact key stored twice")
	}
	// The same exact key with other canonical arguments (the tool's
	// schema changed how it coerces) still loses: one answer per key.
	if mustPut(t, st, entry("c/t", `{"a":"1"}`, "{'a': 1}", `"coerced"`)) {
		t.Fatal("an exact key held by another canonical entry stored again")
	}
	mustPut(t, st, entry("c/t", `{"a":1}`, "{ 'a' : 1 }", `"spaced"`))
	if mustPut(t, st, entry("c/t", `{"a":2}`, "{ 'a' : 1 }", `"spaced, other args"`)) {
		t.Fatal("an exact key kept only under its exact key stored again under other args")
	}
	// A canonical entry without an exact key loses to any canonical entry.
	if mustPut(t, st, entry("c/t", `{"a":1}`, "", `"plain"`)) {
		t.Fatal("a keyless entry replaced a canonical one")
	}
	e, ok, err := st.Get(ctx, "c/t", `{"a":"1"}`)
	if ok || err != nil {
		t.Fatalf("coerced args got an entry: %+v %v", e, err)
	}
	e, ok, err = st.Get(ctx, "c/t", `{"a":2}`)
	if ok || err != nil {
		t.Fatalf("args {a:2} got an entry: %+v %v", e, err)
	}
	for k, want := range map[string]string{"{'a': 1}": `"one"`, "{ 'a' : 1 }": `"spaced"`} {
		e, ok, err := st.GetExact(ctx, "c/t", k, `{"a":1}`)
		wantBody(t, "exact "+k, e, ok, err, want)
	}
}

func testOverwrite(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	mustPut(t, st, entry("c/t", `{"a":1}`, "{'a': 1}", `"old canonical"`))
	mustPut(t, st, entry("c/t", `{"a":1}`, "{'a': '1'}", `"old exact"`))
	mustPut(t, st, entry("c/t", `{"b":1}`, "", `"old plain"`))
	// Read everything once first, so that an in-memory cache in front of
	// the store holds the old answers.
	for _, k := range []struct{ exact, args string }{{"{'a': 1}", `{"a":1}`}, {"{'a': '1'}", `{"a":1}`}, {"", `{"a":1}`}, {"", `{"b":1}`}} {
		if _, ok, err := st.GetExact(ctx, "c/t", k.exact, k.args); !ok || err != nil {
			t.Fatalf("before overwrite %s %s: %v %v", k.exact, k.args, ok, err)
		}
	}
	n, err := st.PutMany(ctx, []*store.Entry{
		entry("c/t", `{"a":1}`, "{'a': 1}", `"new canonical"`),
		entry("c/t", `{"a":1}`, "{'a': '1'}", `"new exact"`),
		entry("c/t", `{"a":1}`, "{'a':1}", `"brand new exact"`),
		entry("c/t", `{"b":1}`, "", `"new plain"`),
		entry("c/t", `{"c":1}`, "", `"new key"`),
	}, true)
	if err != nil || n != 5 {
		t.Fatalf("overwrite: n=%d err=%v, want 5", n, err)
	}
	for _, c := range []struct{ exact, args, want string }{
		{"{'a': 1}", `{"a":1}`, `"new canonical"`},
		{"{'a': '1'}", `{"a":1}`, `"new exact"`},
		{"{'a':1}", `{"a":1}`, `"brand new exact"`},
		{"", `{"b":1}`, `"new plain"`},
		{"", `{"c":1}`, `"new key"`},
	} {
		e, ok, err := st.GetExact(ctx, "c/t", c.exact, c.args)
		wantBody(t, "after overwrite "+c.exact+c.args, e, ok, err, c.want)
	}
	e, ok, err := st.Get(ctx, "c/t", `{"a":1}`)
	wantBody(t, "canonical after overwrite", e, ok, err, `"new canonical"`)
	// Without overwrite nothing changes.
	n, err = st.PutMany(ctx, []*store.Entry{entry("c/t", `{"a":1}`, "{'a': 1}", `"ignored"`), entry("c/t", `{"b":1}`, "", `"ignored"`)}, false)
	if err != nil || n != 0 {
		t.Fatalf("put without overwrite: n=%d err=%v, want 0", n, err)
	}
}

// testResolvedExactKeys: an exact key the store holds no entry for finds
// the canonical entry of its arguments (the store may keep that
// resolution in memory), and every write through the handle that changes
// what the key finds is seen by the next lookup: the canonical entry
// replaced, an entry recorded under the exact key, the tool's entries
// deleted. Other arguments under the same exact key resolve on their own.
func testResolvedExactKeys(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	const tool, args, exact = "c/t", `{"a":1}`, "{'a': 1.0}"
	mustPut(t, st, entry(tool, args, "", `"canonical"`))
	mustPut(t, st, entry(tool, `{"a":2}`, "", `"two"`))
	for range 3 {
		e, ok, err := st.GetExact(ctx, tool, exact, args)
		wantBody(t, "resolved exact key", e, ok, err, `"canonical"`)
		if e.Exact != "" {
			t.Fatalf("a resolved exact key's entry has Exact %q, want empty", e.Exact)
		}
	}
	e, ok, err := st.GetExact(ctx, tool, exact, `{"a":2}`)
	wantBody(t, "the same exact key with other arguments", e, ok, err, `"two"`)
	if _, ok, err := st.GetExact(ctx, tool, exact, `{"a":3}`); ok || err != nil {
		t.Fatalf("the exact key with arguments nobody stored: ok=%v err=%v", ok, err)
	}

	if _, err := st.PutMany(ctx, []*store.Entry{entry(tool, args, "", `"replaced"`)}, true); err != nil {
		t.Fatal(err)
	}
	e, ok, err = st.GetExact(ctx, tool, exact, args)
	wantBody(t, "resolved exact key after its canonical entry was replaced", e, ok, err, `"replaced"`)

	// A live call of other arguments records its answer (and so voids
	// nothing it need not); then the exact key's own answer is recorded.
	mustPut(t, st, entry(tool, `{"a":4}`, "", `"four"`))
	e, ok, err = st.GetExact(ctx, tool, exact, args)
	wantBody(t, "resolved exact key after an unrelated write", e, ok, err, `"replaced"`)
	if !mustPut(t, st, entry(tool, args, exact, `"its own"`)) {
		t.Fatal("the exact key's own entry was not stored")
	}
	e, ok, err = st.GetExact(ctx, tool, exact, args)
	wantBody(t, "exact key after its own entry was recorded", e, ok, err, `"its own"`)
	if e.Exact != exact {
		t.Fatalf("exact key's own entry has Exact %q", e.Exact)
	}

	// Resolve another exact key, then delete the tool's entries.
	const other = "{'a': 2.0}"
	e, ok, err = st.GetExact(ctx, tool, other, `{"a":2}`)
	wantBody(t, "second resolved exact key", e, ok, err, `"two"`)
	if _, err := st.Delete(ctx, tool); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := st.GetExact(ctx, tool, other, `{"a":2}`); ok || err != nil {
		t.Fatalf("resolved exact key after delete: %+v ok=%v err=%v", e, ok, err)
	}
}

func testPutMany(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	var batch []*store.Entry
	for i := range 250 {
		batch = append(batch, entry("c/t", fmt.Sprintf(`{"i":%d}`, i), fmt.Sprintf("{'i': %d}", i), fmt.Sprintf(`%d`, i)))
	}
	// Repeats inside one batch: the first of each key wins.
	batch = append(batch, entry("c/t", `{"i":0}`, "{'i': 0}", `"repeat"`), entry("c/t", `{"i":1}`, "", `"repeat"`))
	n, err := st.PutMany(ctx, batch, false)
	if err != nil || n != 250 {
		t.Fatalf("n=%d err=%v, want 250", n, err)
	}
	for _, i := range []int{0, 1, 249} {
		e, ok, err := st.Get(ctx, "c/t", fmt.Sprintf(`{"i":%d}`, i))
		wantBody(t, "batch entry", e, ok, err, fmt.Sprint(i))
	}
	if n, err := st.PutMany(ctx, nil, false); n != 0 || err != nil {
		t.Fatalf("empty batch: %d %v", n, err)
	}
	if _, err := st.PutMany(ctx, []*store.Entry{{Args: "{}"}}, false); err == nil {
		t.Fatal("an entry without a tool was accepted")
	}
}

// testPutManyAsPut: a batch stores exactly what putting its entries one
// by one, in order, stores (a store may take shortcuts for big batches of
// new keys). Generated batches of hundreds of entries mix new keys, keys
// taken before the batch and repeats inside it: canonical and exact keys,
// one exact key under several canonical arguments, entries without an
// exact key, across two tools; without and with overwrite.
func testPutManyAsPut(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	many, one := open(t, fresh(t), store.Options{}), open(t, fresh(t), store.Options{})
	r := rand.New(rand.NewPCG(7, uint64(len(t.Name()))))
	seq := 0
	gen := func(fresh bool) *store.Entry {
		seq++
		tool := []string{"c/a", "c/b"}[r.IntN(2)]
		n := r.IntN(1500)
		if fresh {
			n = 100000 + seq // a key no batch used before
		}
		args := fmt.Sprintf(`{"n":%d}`, n)
		var exact string
		switch p := r.IntN(20); {
		case p < 2: // no exact key
		case p < 4 && !fresh: // one of a few exact keys, under any arguments
			exact = fmt.Sprintf("{'shared': %d}", r.IntN(30))
		case p < 7: // another spelling of the arguments
			exact = fmt.Sprintf("{'n': '%d'}", n)
		default:
			exact = fmt.Sprintf("{'n': %d}", n)
		}
		return entry(tool, args, exact, fmt.Sprintf(`"answer %d"`, seq))
	}
	dump := func(st store.Store) string {
		var b strings.Builder
		err := st.Each(ctx, func(e *store.Entry) error {
			fmt.Fprintf(&b, "%s %s %s %s %s\n", e.Tool, e.Args, e.Exact, e.Status, e.Body)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	batches := [][]*store.Entry{}
	for i, size := range []int{700, 600, 300, 1000, 17, 270} {
		var batch []*store.Entry
		for range size {
			// The first batch and one later are all new keys, apart
			// from the occasional repeat the generator makes.
			batch = append(batch, gen((i == 0 || i == 3) && r.IntN(50) != 0))
		}
		batches = append(batches, batch)
	}
	// One batch holds its keys twice (every second entry repeats an
	// earlier one of the batch, with another answer).
	var rep []*store.Entry
	for i := range 600 {
		if i%2 == 1 {
			e := *rep[r.IntN(len(rep))]
			e.Body = json.RawMessage(fmt.Sprintf(`"repeat %d"`, i))
			e.Created = time.Time{}
			rep = append(rep, &e)
			continue
		}
		rep = append(rep, gen(true))
	}
	batches = append(batches, rep)
	// Then batches that overwrite, with the same mix of keys.
	plain := len(batches)
	for _, size := range []int{400, 300} {
		var batch []*store.Entry
		for range size {
			batch = append(batch, gen(r.IntN(3) == 0))
		}
		batches = append(batches, batch)
	}
	for i, batch := range batches {
		overwrite := i >= plain
		n, err := many.PutMany(ctx, batch, overwrite)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		want := 0
		for _, e := range batch {
			c := *e
			c.Created = time.Time{}
			k, err := one.PutMany(ctx, []*store.Entry{&c}, overwrite)
			if err != nil {
				t.Fatal(err)
			}
			want += k
		}
		if n != want {
			t.Fatalf("batch %d of %d entries (overwrite %v): PutMany stored %d, one by one %d", i, len(batch), overwrite, n, want)
		}
		if got, want := dump(many), dump(one); got != want {
			t.Fatalf("batch %d: PutMany stored other entries than Put one by one:\n%s", i, firstDiff(got, want))
		}
	}
	if s, err := many.Stats(ctx); err != nil || s.Entries < 1000 || s.ExactOnly == 0 {
		t.Fatalf("the batches stored too little to test anything: %+v %v", s, err)
	}
}

// firstDiff shows the first line where two dumps differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, gl, wl)
		}
	}
	return "no difference"
}

func testEach(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	// Stored out of order; Each returns canonical entries by tool and
	// args, then exact-only ones by tool and exact key.
	mustPut(t, st, entry("c/b", `{"x":2}`, "{'x': 2}", `1`))
	mustPut(t, st, entry("c/a", `{"x":1}`, "", `2`))
	mustPut(t, st, entry("c/b", `{"x":2}`, "{'x': '2'}", `3`))
	mustPut(t, st, entry("c/a", `{"x":0}`, "{'x': 0}", `4`))
	mustPut(t, st, entry("c/a", `{"x":0}`, "{'x': 0.0}", `5`))
	var got []string
	err := st.Each(ctx, func(e *store.Entry) error {
		got = append(got, e.Tool+" "+e.Args+" "+e.Exact+" "+string(e.Body))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`c/a {"x":0} {'x': 0} 4`, `c/a {"x":1}  2`, `c/b {"x":2} {'x': 2} 1`,
		`c/a {"x":0} {'x': 0.0} 5`, `c/b {"x":2} {'x': '2'} 3`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Each:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	stop := errors.New("stop")
	calls := 0
	if err := st.Each(ctx, func(*store.Entry) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Each did not stop at the first error: %v after %d calls", err, calls)
	}
}

func testExamplesStatsDelete(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		e := entry("c/t", fmt.Sprintf(`{"i":%d}`, i), "", fmt.Sprint(i))
		e.Created = base.Add(time.Duration(5-i) * time.Minute) // newest first
		mustPut(t, st, e)
	}
	bad := entry("c/t", `{"i":9}`, "", `9`)
	bad.Status, bad.Origin = toolenv.StatusUpstreamError, "upstream"
	mustPut(t, st, bad)
	mustPut(t, st, entry("c/t", `{"i":0}`, "{'i': '0'}", `"exact only"`))
	mustPut(t, st, entry("c/u", `{}`, "", `"u"`))
	ex, err := st.Examples(ctx, "c/t", 3)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, e := range ex {
		bodies = append(bodies, string(e.Body))
	}
	if strings.Join(bodies, ",") != "4,3,2" {
		t.Fatalf("examples %v, want the three oldest ok canonical entries 4,3,2", bodies)
	}
	if ex[0].Created.Sub(base.Add(time.Minute)).Abs() > time.Millisecond {
		t.Fatalf("created %v, want %v", ex[0].Created, base.Add(time.Minute))
	}
	s, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 8 || s.Tools != 2 || s.ExactOnly != 1 || s.ByOrigin["upstream"] != 1 || s.ByOrigin["simulator"] != 7 ||
		s.ByStatus["ok"] != 7 || s.ByStatus["upstream_error"] != 1 || len(s.TopTools) != 2 || s.TopTools[0].Tool != "c/t" || s.TopTools[0].Entries != 7 {
		t.Fatalf("stats = %+v", s)
	}
	if s.Kind != st.Kind() || s.Path == "" {
		t.Fatalf("stats kind %q path %q", s.Kind, s.Path)
	}
	n, err := st.Delete(ctx, "c/t")
	if err != nil || n != 7 {
		t.Fatalf("delete c/t: n=%d err=%v, want 7", n, err)
	}
	if _, ok, _ := st.GetExact(ctx, "c/t", "{'i': '0'}", `{"i":0}`); ok {
		t.Fatal("a deleted exact entry is still served")
	}
	if _, ok, _ := st.Get(ctx, "c/u", `{}`); !ok {
		t.Fatal("delete of c/t removed c/u")
	}
	if n, err := st.Delete(ctx, ""); err != nil || n != 1 {
		t.Fatalf("delete all: n=%d err=%v, want 1", n, err)
	}
	if _, ok, _ := st.Get(ctx, "c/u", `{}`); ok {
		t.Fatal("delete all left c/u")
	}
}

// testAwkwardBytes: keys and texts that a text column could mangle
// (NUL, invalid UTF-8, long, non-ASCII) come back byte for byte.
func testAwkwardBytes(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	long := `{"q":"` + strings.Repeat("é", 5000) + `"}`
	cases := []*store.Entry{
		{Tool: "c/t", Args: long, Exact: "{'q': '" + strings.Repeat("é", 5000) + "'}", Body: json.RawMessage(`"long"`)},
		{Tool: "c/t", Args: "{\"q\":\"a\x00b\"}", Exact: "{'q': 'a\x00b'}", Error: "nul\x00here", Body: json.RawMessage(`"nul"`)},
		{Tool: "c/t", Args: "{\"q\":\"\xff\xfe\"}", Exact: "{'q': '\xff\xfe'}", Error: "bad \xff utf-8", Body: json.RawMessage(`"bad utf-8"`)},
		{Tool: "c/ünï", Args: `{"名前":"値"}`, Exact: "{'名前': '値'}", Body: json.RawMessage(`{"k":"😀"}`)},
		{Tool: "c/t", Args: `{}`, Body: nil},
	}
	for _, e := range cases {
		if !mustPut(t, st, e) {
			t.Fatalf("not stored: %q", e.Args)
		}
	}
	for _, want := range cases {
		for _, exact := range []string{"", want.Exact} {
			got, ok, err := st.GetExact(ctx, want.Tool, exact, want.Args)
			if err != nil || !ok {
				t.Fatalf("lookup %q: ok=%v err=%v", want.Args, ok, err)
			}
			if got.Args != want.Args || got.Exact != want.Exact || got.Error != want.Error || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("round trip of %q changed it: got %+v", want.Args, got)
			}
		}
	}
}

func testRecords(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	if _, ok, err := st.Lookup(ctx, "k"); ok || err != nil {
		t.Fatalf("empty: %v %v", ok, err)
	}
	if err := st.Record(ctx, "k", []byte(`{"req":1}`), []byte(`{"resp":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, "k", []byte(`{"req":2}`), []byte(`{"resp":2}`)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Lookup(ctx, "k")
	if err != nil || !ok || string(got) != `{"resp":1}` {
		t.Fatalf("lookup = %s %v %v, want the first record", got, ok, err)
	}
	if s, _ := st.Stats(ctx); s.Records != 1 {
		t.Fatalf("records = %d", s.Records)
	}
}

func testClaims(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	if _, ok, err := st.ReadClaim(ctx, "c/t", `{}`); ok || err != nil {
		t.Fatalf("no claim yet: %v %v", ok, err)
	}
	a, won, err := st.Claim(ctx, "c/t", `{}`, "a", time.Minute)
	if err != nil || !won || a.Token == "" || a.Owner != "a" || time.Until(a.Expires) < 30*time.Second {
		t.Fatalf("first claim: %+v won=%v err=%v", a, won, err)
	}
	b, won, err := st.Claim(ctx, "c/t", `{}`, "b", time.Minute)
	if err != nil || won || b.Token != a.Token || b.Owner != "a" {
		t.Fatalf("second claim: %+v won=%v err=%v, want a's claim", b, won, err)
	}
	other, won, err := st.Claim(ctx, "c/t", `{"x":1}`, "b", time.Minute)
	if err != nil || !won {
		t.Fatalf("claim of another key: %+v won=%v err=%v", other, won, err)
	}
	before := a.Expires
	if err := st.RenewClaim(ctx, a, 2*time.Minute); err != nil || !a.Expires.After(before) {
		t.Fatalf("renew: %v, expires %v (was %v)", err, a.Expires, before)
	}
	if err := st.ReleaseClaim(ctx, a, []byte(`{"status":"timeout"}`)); err != nil {
		t.Fatal(err)
	}
	done, ok, err := st.ReadClaim(ctx, "c/t", `{}`)
	if err != nil || !ok || !done.Done || done.Token != a.Token || string(done.Result) != `{"status":"timeout"}` {
		t.Fatalf("released with a result: %+v ok=%v err=%v", done, ok, err)
	}
	if err := st.RenewClaim(ctx, a, time.Minute); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("renew of a released claim: %v, want ErrClaimLost", err)
	}
	// A released claim is taken by the next caller.
	c, won, err := st.Claim(ctx, "c/t", `{}`, "c", time.Minute)
	if err != nil || !won || c.Token == a.Token || c.Done || c.Result != nil {
		t.Fatalf("claim after release: %+v won=%v err=%v", c, won, err)
	}
	if err := st.ReleaseClaim(ctx, a, nil); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("release by a former holder: %v, want ErrClaimLost", err)
	}
	if err := st.ReleaseClaim(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.ReadClaim(ctx, "c/t", `{}`); ok {
		t.Fatal("a claim released without a result is still there")
	}
	if s, _ := st.Stats(ctx); s.Claims != 1 {
		t.Fatalf("claims = %d, want 1 (the other key's)", s.Claims)
	}
}

// testClaimTakeover: a holder that stops renewing (killed) loses its
// claim once its lease runs out.
func testClaimTakeover(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	a, won, err := st.Claim(ctx, "c/t", `{}`, "a", 300*time.Millisecond)
	if err != nil || !won {
		t.Fatal(won, err)
	}
	if _, won, _ := st.Claim(ctx, "c/t", `{}`, "b", time.Minute); won {
		t.Fatal("took a live claim")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, won, err := st.Claim(ctx, "c/t", `{}`, "b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if won {
			if b.Token == a.Token {
				t.Fatal("takeover kept the old token")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired claim was never taken over")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := st.RenewClaim(ctx, a, time.Minute); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("renew by the old holder: %v, want ErrClaimLost", err)
	}
}

// testOneAnswerAcrossHandles: two handles on one store (two processes)
// race to store answers for the same new keys; exactly one Put of each
// key wins and every later lookup, through either handle, returns it.
func testOneAnswerAcrossHandles(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	handles := []store.Store{open(t, loc, store.Options{}), open(t, loc, store.Options{})}
	const keys, writers = 20, 8
	var mu sync.Mutex
	won := map[string][]string{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := handles[w%2]
			for k := range keys {
				args := fmt.Sprintf(`{"k":%d}`, k)
				exact := ""
				if k%2 == 0 {
					exact = fmt.Sprintf("{'k': %d}", k)
				}
				body := fmt.Sprintf(`"writer %d"`, w)
				ok, err := st.Put(ctx, entry("c/t", args, exact, body))
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					won[args] = append(won[args], body)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for k := range keys {
		args := fmt.Sprintf(`{"k":%d}`, k)
		if len(won[args]) != 1 {
			t.Fatalf("key %s: %d puts reported stored (%v), want 1", args, len(won[args]), won[args])
		}
		for _, st := range handles {
			e, ok, err := st.GetExact(ctx, "c/t", fmt.Sprintf("{'k': %d}", k), args)
			wantBody(t, "after the race", e, ok, err, won[args][0])
		}
	}
}

// testClaimsAcrossHandles: many claimants on two handles, one winner.
func testClaimsAcrossHandles(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	handles := []store.Store{open(t, loc, store.Options{}), open(t, loc, store.Options{})}
	var wins sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	tokens := map[string]bool{}
	for i := range 16 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			c, won, err := handles[i%2].Claim(ctx, "c/t", `{"race":1}`, fmt.Sprint(i), time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if won {
				winners++
			}
			tokens[c.Token] = true
		}()
	}
	wins.Wait()
	if winners != 1 || len(tokens) != 1 {
		t.Fatalf("%d winners, %d distinct tokens seen; want 1 and 1", winners, len(tokens))
	}
}

func testReopen(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	st, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, st, entry("c/t", `{"a":1}`, "{'a': 1}", `"kept"`))
	if err := st.Record(ctx, "r", []byte("q"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, loc, store.Options{})
	e, ok, err := st.GetExact(ctx, "c/t", "{'a': 1}", `{"a":1}`)
	wantBody(t, "after reopen", e, ok, err, `"kept"`)
	if _, ok, _ := st.Lookup(ctx, "r"); !ok {
		t.Fatal("record lost on reopen")
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// widgets is a subsystem's component with tables of its own.
func widgets(n int) []store.Migration {
	all := []store.Migration{
		{Component: "widgets", Version: 1, Name: "widgets table",
			SQLite:   `CREATE TABLE widgets (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
			Postgres: `CREATE TABLE widgets (id bigint PRIMARY KEY, name text NOT NULL)`},
		{Component: "widgets", Version: 2, Name: "widget colours",
			SQLite:   "ALTER TABLE widgets ADD COLUMN colour TEXT NOT NULL DEFAULT 'red';\nCREATE INDEX widgets_colour ON widgets (colour)",
			Postgres: "ALTER TABLE widgets ADD COLUMN colour text NOT NULL DEFAULT 'red';\nCREATE INDEX widgets_colour ON widgets (colour)"},
	}
	return all[:n]
}

func version(t *testing.T, st store.Store, component string) store.SchemaVersion {
	t.Helper()
	vs, err := st.Schema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Component == component {
			return v
		}
	}
	return store.SchemaVersion{Component: component}
}

func testMigrations(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	st := open(t, loc, store.Options{})
	for _, c := range []string{"cache", "records", "claims"} {
		if v := version(t, st, c); v.Version == 0 || v.Version != v.Known {
			t.Fatalf("component %s: %+v, want migrated to its newest version", c, v)
		}
	}
	if v := version(t, st, "widgets"); v.Version != 0 {
		t.Fatalf("widgets before they were declared: %+v", v)
	}
	st.Close()
	// A subsystem adds its component; later it adds a step.
	st = open(t, loc, store.Options{Migrations: widgets(1)})
	if v := version(t, st, "widgets"); v.Version != 1 || v.Known != 1 {
		t.Fatalf("widgets after v1: %+v", v)
	}
	db := st.SQL()
	ins := `INSERT INTO widgets(id, name) VALUES (?, ?)`
	if db.Dialect == "postgres" {
		ins = `INSERT INTO widgets(id, name) VALUES ($1, $2)`
	}
	if _, err := db.Write.ExecContext(ctx, ins, 1, "sprocket"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Refused without migration when told not to migrate.
	if _, err := store.Open(ctx, loc, store.Options{Migrations: widgets(2), NoMigrate: true}); !isSchemaErr(err) {
		t.Fatalf("pending migration with NoMigrate: err = %v, want a SchemaError", err)
	}
	st = open(t, loc, store.Options{Migrations: widgets(2)})
	if v := version(t, st, "widgets"); v.Version != 2 {
		t.Fatalf("widgets after v2: %+v", v)
	}
	var colour string
	if err := st.SQL().Read.QueryRowContext(ctx, `SELECT colour FROM widgets WHERE name = 'sprocket'`).Scan(&colour); err != nil || colour != "red" {
		t.Fatalf("v2 kept v1's rows? colour=%q err=%v", colour, err)
	}
	// A program that does not know widgets opens the store and ignores them.
	st2 := open(t, loc, store.Options{})
	if v := version(t, st2, "widgets"); v.Version != 2 || v.Known != 0 {
		t.Fatalf("widgets seen by a program without them: %+v", v)
	}
	// Malformed sets of migrations are refused.
	for _, bad := range [][]store.Migration{
		{{Component: "w", Version: 2, SQLite: "SELECT 1", Postgres: "SELECT 1"}},
		{{Component: "w", Version: 1}, {Component: "w", Version: 1}},
		{{Component: "", Version: 1}},
		{{Component: "cache", Version: 1}},
	} {
		if _, err := store.Open(ctx, loc, store.Options{Migrations: bad}); err == nil {
			t.Fatalf("migrations %+v accepted", bad)
		}
	}
	// A failing step changes nothing: the component stays where it was.
	broken := append(widgets(2), store.Migration{Component: "widgets", Version: 3, Name: "broken", SQLite: "CREATE TABLE nonsense (", Postgres: "CREATE TABLE nonsense ("})
	if _, err := store.Open(ctx, loc, store.Options{Migrations: broken}); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("a broken migration: err = %v, want it named", err)
	}
	if v := version(t, st2, "widgets"); v.Version != 2 {
		t.Fatalf("after a failed migration widgets are at %d, want 2", v.Version)
	}
}

func isSchemaErr(err error) bool {
	var se *store.SchemaError
	return errors.As(err, &se)
}

// testSchemaSkew: a store migrated by a newer program (a component at a
// version this one does not know) is refused with a message, and nothing
// is changed.
func testSchemaSkew(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	loc := fresh(t)
	newer := open(t, loc, store.Options{Migrations: widgets(2)})
	newer.Close()
	_, err := store.Open(ctx, loc, store.Options{Migrations: widgets(1)})
	var se *store.SchemaError
	if !errors.As(err, &se) || se.Component != "widgets" || se.Version != 2 || se.Known != 1 {
		t.Fatalf("older program on a newer store: err = %v, want a SchemaError for widgets 2 > 1", err)
	}
	if !strings.Contains(err.Error(), "upgrade") {
		t.Fatalf("message does not say what to do: %v", err)
	}
	// The store's own components too: pretend a newer toolenv moved cache on.
	st := open(t, loc, store.Options{Migrations: widgets(2)})
	db := st.SQL()
	q := `UPDATE toolenv_schema SET version = version + 1 WHERE component = 'cache'`
	if _, err := db.Write.ExecContext(ctx, q); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := store.Open(ctx, loc, store.Options{Migrations: widgets(2)}); !isSchemaErr(err) || !strings.Contains(err.Error(), "cache") {
		t.Fatalf("cache schema newer than the program: err = %v", err)
	}
}

// testSQL: the database handed to subsystems is the store's own.
func testSQL(t *testing.T, fresh func(*testing.T) string) {
	ctx := context.Background()
	st := open(t, fresh(t), store.Options{})
	mustPut(t, st, entry("c/t", `{}`, "", `1`))
	db := st.SQL()
	if db.Dialect != st.Kind() || db.Write == nil || db.Read == nil {
		t.Fatalf("SQL() = %+v for a %s store", db, st.Kind())
	}
	var n int
	if err := db.Read.QueryRowContext(ctx, `SELECT count(*) FROM cache`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("count through SQL(): %d %v", n, err)
	}
}
