// Package mirrortest is the conformance suite of mirror.Store: every
// implementation (SQLite, PostgreSQL) runs Run against a fresh store.
package mirrortest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
)

// Open returns a fresh, empty store; the suite closes it.
type Open func(t *testing.T) mirror.Store

// Run runs every conformance test against stores open makes.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s mirror.Store)
	}{
		{"Requests", testRequests},
		{"Pairs", testPairs},
		{"Queries", testQueries},
		{"MixOrder", testMixOrder},
		{"Updates", testUpdates},
		{"Stats", testStats},
		{"Rationales", testRationales},
		{"Rejects", testRejects},
		{"Meta", testMeta},
		{"Records", testRecords},
		{"Datasets", testDatasets},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

const ds = "conformance"

func req(tool, args, kind string) *mirror.Request {
	return &mirror.Request{Tool: tool, Args: args, Origin: mirror.RequestSampler, Kind: kind}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testRequests(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	n, err := s.PutRequests(ctx, ds, []*mirror.Request{req("c/a", `{"x":1}`, "documented"), req("c/a", `{"x":2}`, "sampled"), req("c/b", `{}`, "documented")})
	must(t, err)
	if n != 3 {
		t.Fatalf("added %d, want 3", n)
	}
	n, err = s.PutRequests(ctx, ds, []*mirror.Request{req("c/a", `{"x":1}`, "other kind"), req("c/b", `{"y":"é"}`, "sampled")})
	must(t, err)
	if n != 1 {
		t.Fatalf("added %d, want 1 (the other is a duplicate)", n)
	}
	counts, err := s.RequestCounts(ctx, ds)
	must(t, err)
	if counts["c/a"] != 2 || counts["c/b"] != 2 || len(counts) != 2 {
		t.Fatalf("counts %v", counts)
	}
	var got []string
	var lastSeq int64
	must(t, s.EachRequest(ctx, ds, mirror.RequestQuery{}, func(r *mirror.Request) error {
		if r.Seq <= lastSeq {
			return fmt.Errorf("seq %d after %d: not in generation order", r.Seq, lastSeq)
		}
		lastSeq = r.Seq
		if r.Created.IsZero() {
			return fmt.Errorf("request %s has no creation time", r.Args)
		}
		got = append(got, r.Tool+" "+r.Args+" "+r.Kind)
		return nil
	}))
	want := []string{`c/a {"x":1} documented`, `c/a {"x":2} sampled`, `c/b {} documented`, `c/b {"y":"é"} sampled`}
	if !slices.Equal(got, want) {
		t.Fatalf("requests %q, want %q (first write of a duplicate wins)", got, want)
	}
	got = nil
	must(t, s.EachRequest(ctx, ds, mirror.RequestQuery{Tool: "c/b"}, func(r *mirror.Request) error { got = append(got, r.Args); return nil }))
	if !slices.Equal(got, []string{`{}`, `{"y":"é"}`}) {
		t.Fatalf("requests of c/b %q", got)
	}
	// Pending: those without a pair.
	must(t, s.PutPairs(ctx, ds, []*mirror.Pair{{Tool: "c/a", Args: `{"x":2}`, Origin: mirror.OriginReal, Status: toolenv.StatusOK, Body: json.RawMessage(`1`)}}))
	got = nil
	must(t, s.EachRequest(ctx, ds, mirror.RequestQuery{Pending: true}, func(r *mirror.Request) error { got = append(got, r.Tool+r.Args); return nil }))
	if !slices.Equal(got, []string{`c/a{"x":1}`, `c/b{}`, `c/b{"y":"é"}`}) {
		t.Fatalf("pending %q", got)
	}
}

func pair(tool, args string, ok bool) *mirror.Pair {
	p := &mirror.Pair{Tool: tool, Args: args, Origin: mirror.OriginReal, Kind: "sampled", Status: toolenv.StatusOK, Body: json.RawMessage(`{"v":` + args + `}`),
		Source: "live", Class: "success", Rule: "success", Attempts: 1, Latency: 3 * time.Millisecond, CalledAt: time.Unix(1700000000, 5).UTC()}
	if !ok {
		p.Status, p.Body, p.Error, p.Class, p.Rule = toolenv.StatusInvalidArguments, nil, "missing x", "parameter_change", "http_400_422"
	}
	return p
}

func testPairs(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	p := pair("c/a", `{"x":1}`, true)
	p.History = []mirror.Attempt{{At: time.Unix(1700000000, 0).UTC(), Latency: time.Second, Status: toolenv.StatusTimeout, Class: "not_connected", Error: "slow", Retrying: true}}
	p.Attempts = 2
	p.HTTPStatus = 200
	p.Provenance = json.RawMessage(`{"model":"m"}`)
	p.Doc = &mirror.DocCheck{Eval: 0, Reason: "no", Raw: "{...}", Model: "judge"}
	must(t, s.PutPairs(ctx, ds, []*mirror.Pair{p}))
	got, ok, err := s.GetPair(ctx, ds, "c/a", `{"x":1}`)
	must(t, err)
	if !ok {
		t.Fatal("GetPair: not found")
	}
	a, _ := json.Marshal(p)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("pair read back differs:\n put %s\n got %s", a, b)
	}
	if _, ok, err := s.GetPair(ctx, ds, "c/a", `{"x":9}`); err != nil || ok {
		t.Fatalf("GetPair of a missing pair: ok=%v err=%v", ok, err)
	}
	// PutPairs replaces; AddPairs does not.
	p2 := pair("c/a", `{"x":1}`, false)
	must(t, s.PutPairs(ctx, ds, []*mirror.Pair{p2}))
	got, _, _ = s.GetPair(ctx, ds, "c/a", `{"x":1}`)
	if got.Status != toolenv.StatusInvalidArguments || got.Doc != nil || len(got.Body) != 0 {
		t.Fatalf("PutPairs did not replace: %+v", got)
	}
	taken, err := s.AddPairs(ctx, ds, []*mirror.Pair{pair("c/a", `{"x":1}`, true), pair("c/a", `{"x":3}`, true)})
	must(t, err)
	if len(taken) != 1 || taken[0] != (mirror.PairKey{Tool: "c/a", Args: `{"x":1}`}) {
		t.Fatalf("taken %v, want the existing {\"x\":1}", taken)
	}
	got, _, _ = s.GetPair(ctx, ds, "c/a", `{"x":1}`)
	if got.Status != toolenv.StatusInvalidArguments {
		t.Fatal("AddPairs replaced an existing pair")
	}
	if _, ok, _ := s.GetPair(ctx, ds, "c/a", `{"x":3}`); !ok {
		t.Fatal("AddPairs did not add a new pair")
	}
	// A binary body, and text with NUL and bytes that are not UTF-8,
	// survive.
	bin := pair("c/bin", `{}`, true)
	bin.Body = json.RawMessage("\"\\u0000\\ufffd\xff\"")
	bin.Error = "nul \x00 and \xff"
	bin.FilterDetail = "\x00"
	must(t, s.PutPairs(ctx, ds, []*mirror.Pair{bin}))
	got, _, _ = s.GetPair(ctx, ds, "c/bin", `{}`)
	if string(got.Body) != string(bin.Body) || got.Error != bin.Error || got.FilterDetail != bin.FilterDetail {
		t.Fatalf("body %q error %q detail %q, want %q %q %q", got.Body, got.Error, got.FilterDetail, bin.Body, bin.Error, bin.FilterDetail)
	}
}

// fill puts pairs of tools t0..t(nt-1), per tool, half failures.
func fill(t *testing.T, s mirror.Store, nt, per int) []*mirror.Pair {
	t.Helper()
	var all []*mirror.Pair
	for i := range nt {
		for j := range per {
			all = append(all, pair(fmt.Sprintf("c/t%d", i), fmt.Sprintf(`{"x":%d}`, j), j%2 == 0))
		}
	}
	must(t, s.PutPairs(context.Background(), ds, all))
	return all
}

func keys(t *testing.T, s mirror.Store, q mirror.PairQuery) []string {
	t.Helper()
	var out []string
	must(t, s.EachPair(context.Background(), ds, q, func(p *mirror.Pair) error {
		if q.NoBody && len(p.Body) != 0 {
			return fmt.Errorf("NoBody query returned a body")
		}
		out = append(out, p.Tool+p.Args)
		return nil
	}))
	return out
}

func testQueries(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	fill(t, s, 3, 4)
	syn := pair("c/t1", `{"x":99}`, true)
	syn.Origin = mirror.OriginSynthesized
	must(t, s.PutPairs(ctx, ds, []*mirror.Pair{syn}))
	all := keys(t, s, mirror.PairQuery{})
	if len(all) != 13 || all[0] != `c/t0{"x":0}` || all[12] != `c/t2{"x":3}` {
		t.Fatalf("all pairs %q: want 13 in (tool, args) order", all)
	}
	if got := keys(t, s, mirror.PairQuery{Origin: mirror.OriginSynthesized}); !slices.Equal(got, []string{`c/t1{"x":99}`}) {
		t.Fatalf("synthesized %q", got)
	}
	if got := keys(t, s, mirror.PairQuery{Tool: "c/t2", OK: mirror.Ptr(false)}); !slices.Equal(got, []string{`c/t2{"x":1}`, `c/t2{"x":3}`}) {
		t.Fatalf("failures of t2 %q", got)
	}
	if got := keys(t, s, mirror.PairQuery{Tool: "c/t0", OK: mirror.Ptr(true), NoBody: true}); len(got) != 2 {
		t.Fatalf("successes of t0 %q", got)
	}
	if got := keys(t, s, mirror.PairQuery{Filters: []string{}}); len(got) != 0 {
		t.Fatalf("an empty filter list selected %d pairs", len(got))
	}
	if got := keys(t, s, mirror.PairQuery{Filters: []string{""}}); len(got) != 13 {
		t.Fatalf("unfiltered pairs: %d, want 13", len(got))
	}
	if got := keys(t, s, mirror.PairQuery{Limit: 5}); len(got) != 5 {
		t.Fatalf("limit 5 gave %d", len(got))
	}
	if got := keys(t, s, mirror.PairQuery{NoDoc: true}); len(got) != 13 {
		t.Fatalf("pairs without verdict: %d", len(got))
	}
}

func testMixOrder(t *testing.T, s mirror.Store) {
	fill(t, s, 20, 30)
	ordered := keys(t, s, mirror.PairQuery{})
	a := keys(t, s, mirror.PairQuery{Order: mirror.OrderMix, Seed: 1})
	b := keys(t, s, mirror.PairQuery{Order: mirror.OrderMix, Seed: 1})
	c := keys(t, s, mirror.PairQuery{Order: mirror.OrderMix, Seed: 2})
	if !slices.Equal(a, b) {
		t.Fatal("the mixed order differs between two reads with one seed")
	}
	if slices.Equal(a, c) || slices.Equal(a, ordered) {
		t.Fatal("the mixed order does not depend on the seed, or is the key order")
	}
	sorted := append([]string(nil), a...)
	sort.Strings(sorted)
	sort.Strings(ordered)
	if !slices.Equal(sorted, ordered) {
		t.Fatal("the mixed order is not a permutation of the pairs")
	}
	// It is mixed: the first 60 pairs come from many tools.
	tools := map[string]bool{}
	for _, k := range a[:60] {
		tools[k[:5]] = true
	}
	if len(tools) < 10 {
		t.Fatalf("the first 60 mixed pairs come from %d tools", len(tools))
	}
	if got := keys(t, s, mirror.PairQuery{Order: mirror.OrderMix, Seed: 1, Limit: 7}); !slices.Equal(got, a[:7]) {
		t.Fatalf("mixed with limit: %q, want %q", got, a[:7])
	}
	if err := s.EachPair(context.Background(), ds, mirror.PairQuery{Order: "sideways"}, func(*mirror.Pair) error { return nil }); err == nil {
		t.Fatal("an unknown order was accepted")
	}
}

func testUpdates(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	fill(t, s, 2, 3)
	must(t, s.UpdatePairs(ctx, ds, []mirror.PairUpdate{
		{Tool: "c/t0", Args: `{"x":0}`, Filter: mirror.Ptr(mirror.FilterKept), Split: mirror.Ptr(mirror.SplitTrain)},
		{Tool: "c/t0", Args: `{"x":1}`, Filter: mirror.Ptr("appendix_d:not_found"), FilterDetail: mirror.Ptr("http_404_410")},
		{Tool: "c/t1", Args: `{"x":2}`, Doc: &mirror.DocCheck{Eval: -1, Raw: "garbage"}},
		{Tool: "c/none", Args: `{}`, Filter: mirror.Ptr(mirror.FilterKept)},
	}))
	p, _, _ := s.GetPair(ctx, ds, "c/t0", `{"x":0}`)
	if p.Filter != mirror.FilterKept || p.Split != mirror.SplitTrain {
		t.Fatalf("update not applied: %+v", p)
	}
	p, _, _ = s.GetPair(ctx, ds, "c/t0", `{"x":1}`)
	if p.Filter != "appendix_d:not_found" || p.FilterDetail != "http_404_410" || p.Split != "" {
		t.Fatalf("update not applied: %+v", p)
	}
	p, _, _ = s.GetPair(ctx, ds, "c/t1", `{"x":2}`)
	if p.Doc == nil || p.Doc.Eval != -1 || p.Doc.Raw != "garbage" {
		t.Fatalf("doc verdict not applied: %+v", p.Doc)
	}
	if got := keys(t, s, mirror.PairQuery{Filters: []string{mirror.FilterKept}, Splits: []string{mirror.SplitTrain}}); len(got) != 1 {
		t.Fatalf("kept training pairs %q", got)
	}
	if got := keys(t, s, mirror.PairQuery{NoDoc: true}); len(got) != 5 {
		t.Fatalf("pairs without verdict: %d, want 5", len(got))
	}
	must(t, s.ResetPairs(ctx, ds, mirror.OriginReal, "filter", "split"))
	if got := keys(t, s, mirror.PairQuery{Filters: []string{""}, Splits: []string{""}}); len(got) != 6 {
		t.Fatalf("after reset %d pairs are unfiltered and unsplit, want 6", len(got))
	}
	p, _, _ = s.GetPair(ctx, ds, "c/t1", `{"x":2}`)
	if p.Doc == nil {
		t.Fatal("resetting filter and split cleared the doc verdict")
	}
	must(t, s.ResetPairs(ctx, ds, "", "doc"))
	if got := keys(t, s, mirror.PairQuery{NoDoc: true}); len(got) != 6 {
		t.Fatalf("after resetting doc %d pairs have no verdict, want 6", len(got))
	}
	if err := s.ResetPairs(ctx, ds, "", "body"); err == nil {
		t.Fatal("resetting an unknown column was accepted")
	}
}

func testStats(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	fill(t, s, 2, 4)
	must(t, s.UpdatePairs(ctx, ds, []mirror.PairUpdate{
		{Tool: "c/t0", Args: `{"x":0}`, Filter: mirror.Ptr(mirror.FilterKept), Split: mirror.Ptr(mirror.SplitTrain), Doc: &mirror.DocCheck{Eval: 1}},
		{Tool: "c/t0", Args: `{"x":2}`, Filter: mirror.Ptr(mirror.FilterKept), Split: mirror.Ptr(mirror.SplitTrain)},
	}))
	must(t, s.PutRationales(ctx, ds, []*mirror.Rationale{{Tool: "c/t0", Args: `{"x":0}`, Text: "why", Verdict: mirror.FilterKept}, {Tool: "c/t0", Args: `{"x":2}`, Text: "long", Verdict: mirror.RationaleTooLong}}))
	stats, err := s.PairStats(ctx, ds)
	must(t, err)
	total := 0
	var withR, kept, docs int
	for _, st := range stats {
		total += st.Count
		if st.Rationale {
			withR += st.Count
		}
		if st.Filter == mirror.FilterKept {
			kept += st.Count
		}
		if st.DocEval != nil && *st.DocEval == 1 {
			docs += st.Count
		}
	}
	if total != 8 || withR != 1 || kept != 2 || docs != 1 {
		t.Fatalf("stats total %d, with kept rationale %d, kept %d, doc 1: %d; want 8, 1, 2, 1 (%+v)", total, withR, kept, docs, stats)
	}
	// A pair with a rationale is selected and filled by WithRationale.
	var rs []string
	must(t, s.EachPair(ctx, ds, mirror.PairQuery{WithRationale: true}, func(p *mirror.Pair) error { rs = append(rs, p.Args+"="+p.Rationale); return nil }))
	if !slices.Equal(rs, []string{`{"x":0}=why`}) {
		t.Fatalf("pairs with a kept rationale %q", rs)
	}
	rs = nil
	must(t, s.EachPair(ctx, ds, mirror.PairQuery{WithRationale: true, Order: mirror.OrderMix, Seed: 3}, func(p *mirror.Pair) error { rs = append(rs, p.Args+"="+p.Rationale); return nil }))
	if !slices.Equal(rs, []string{`{"x":0}=why`}) {
		t.Fatalf("mixed pairs with a kept rationale %q", rs)
	}
}

func testRationales(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	must(t, s.PutRationales(ctx, ds, []*mirror.Rationale{{Tool: "c/a", Args: `{}`, Text: "first", Tokens: 3, Verdict: mirror.FilterKept, Model: "o1"}}))
	must(t, s.PutRationales(ctx, ds, []*mirror.Rationale{{Tool: "c/a", Args: `{}`, Text: "second", Tokens: 9000, Verdict: mirror.RationaleTooLong, Detail: "9000 tokens"}, {Tool: "c/b", Args: `{}`, Text: "b\x00\xfe", Verdict: mirror.RationaleLeak}}))
	var got []string
	must(t, s.EachRationale(ctx, ds, func(r *mirror.Rationale) error {
		got = append(got, fmt.Sprintf("%s %s %d %s", r.Tool, r.Text, r.Tokens, r.Verdict))
		return nil
	}))
	if !slices.Equal(got, []string{"c/a second 9000 too_long", "c/b b\x00\xfe 0 leak"}) {
		t.Fatalf("rationales %q", got)
	}
	has, err := s.HasRationale(ctx, ds, []mirror.PairKey{{Tool: "c/a", Args: `{}`}, {Tool: "c/c", Args: `{}`}})
	must(t, err)
	if !has[mirror.PairKey{Tool: "c/a", Args: `{}`}] || has[mirror.PairKey{Tool: "c/c", Args: `{}`}] {
		t.Fatalf("HasRationale %v", has)
	}
}

func testRejects(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	must(t, s.PutRejects(ctx, ds, []*mirror.Reject{
		{Stage: "synthesize", Tool: "c/a", Reason: mirror.RejectDuplicate, Body: "{}"},
		{Stage: "synthesize", Tool: "c/a", Reason: mirror.RejectDuplicate},
		{Stage: "generate", Tool: "c/b", Reason: mirror.RejectUnparseable, Body: "not json"},
	}))
	stats, err := s.RejectStats(ctx, ds)
	must(t, err)
	want := []mirror.RejectStat{{Stage: "generate", Tool: "c/b", Reason: "unparseable", Count: 1}, {Stage: "synthesize", Tool: "c/a", Reason: "duplicate", Count: 2}}
	if !slices.Equal(stats, want) {
		t.Fatalf("reject stats %+v, want %+v", stats, want)
	}
}

func testMeta(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	if _, ok, err := s.Meta(ctx, ds, "k"); ok || err != nil {
		t.Fatalf("missing key: ok=%v err=%v", ok, err)
	}
	must(t, s.SetMeta(ctx, ds, "k", "1"))
	must(t, s.SetMeta(ctx, ds, "k", "2"))
	if v, ok, err := s.Meta(ctx, ds, "k"); v != "2" || !ok || err != nil {
		t.Fatalf("meta k = %q %v %v", v, ok, err)
	}
	if _, ok, _ := s.Meta(ctx, "other", "k"); ok {
		t.Fatal("meta leaks between datasets")
	}
}

func testRecords(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	must(t, s.Record(ctx, "key1", []byte(`{"q":1}`), []byte(`{"a":1}`)))
	must(t, s.Record(ctx, "key1", []byte(`{"q":1}`), []byte(`{"a":2}`)))
	got, ok, err := s.Lookup(ctx, "key1")
	must(t, err)
	if !ok || string(got) != `{"a":1}` {
		t.Fatalf("record %q %v: the first record of a key must win", got, ok)
	}
	if _, ok, _ := s.Lookup(ctx, "key2"); ok {
		t.Fatal("lookup of a missing key found something")
	}
}

func testDatasets(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	_, err := s.PutRequests(ctx, "one", []*mirror.Request{req("c/a", `{}`, "documented")})
	must(t, err)
	must(t, s.PutPairs(ctx, "one", []*mirror.Pair{pair("c/a", `{}`, true)}))
	counts, err := s.RequestCounts(ctx, "two")
	must(t, err)
	stats, err := s.PairStats(ctx, "two")
	must(t, err)
	if len(counts) != 0 || len(stats) != 0 {
		t.Fatal("datasets share requests or pairs")
	}
	n, err := s.PutRequests(ctx, "two", []*mirror.Request{req("c/a", `{}`, "documented")})
	must(t, err)
	if n != 1 {
		t.Fatal("the same request in another dataset is not new")
	}
}

func testConcurrent(t *testing.T, s mirror.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				p := pair(fmt.Sprintf("c/w%d", w), fmt.Sprintf(`{"i":%d}`, i), true)
				if err := s.PutPairs(ctx, ds, []*mirror.Pair{p}); err != nil {
					errs <- err
					return
				}
				if _, err := s.PutRequests(ctx, ds, []*mirror.Request{req(p.Tool, p.Args, "sampled")}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// Read while they write.
	for range 5 {
		if err := s.EachPair(ctx, ds, mirror.PairQuery{NoBody: true}, func(*mirror.Pair) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := keys(t, s, mirror.PairQuery{}); len(got) != 200 {
		t.Fatalf("%d pairs after 8 concurrent writers of 25, want 200", len(got))
	}
}
