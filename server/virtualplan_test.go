package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// planRig is a server over one lenient, cacheable ToolBench-style tool
// whose backend counts its calls and answers with its arguments and a
// version, over a real SQLite store of memBytes of memory (0: default).
type planRig struct {
	srv     *httptest.Server
	s       *Server
	reg     *invoke.Registry
	st      store.Store
	calls   atomic.Int64
	version atomic.Int64
}

func newPlanRig(t *testing.T, memBytes int) *planRig {
	t.Helper()
	rig := &planRig{reg: invoke.NewRegistry()}
	if err := rig.reg.Add(planCollection("search", true), toolenv.HandlerFunc(rig.backend)); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir()+"/s.db", store.Options{MemoryBytes: memBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rig.st = st
	m := NewMetrics()
	rig.s = New(Options{Pipeline: invoke.New(rig.reg, invoke.Options{Cache: st, Observer: m}), Registry: rig.reg, Metrics: m})
	rig.srv = httptest.NewServer(rig.s)
	t.Cleanup(rig.srv.Close)
	return rig
}

// planCollection is the collection "toolbench" with one tool, api_name api.
func planCollection(api string, cache bool) *toolenv.Collection {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	c := toolenv.NewCollection("toolbench", "toolbench", []*toolenv.Tool{{
		Name: api + "_for_newsapi", Title: api, Category: "News_Media", Group: "NewsAPI", Input: in,
		Meta: map[string]string{"std_category": "News_Media", "std_tool": "newsapi", "api_name": api},
	}})
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: cache}
	return c
}

func (rig *planRig) backend(_ context.Context, call *toolenv.Call) *toolenv.Result {
	rig.calls.Add(1)
	body, _ := json.Marshal(map[string]any{"q": call.Args["q"], "version": rig.version.Load()})
	return &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSimulator}
}

// planBody is a /virtual body as StableToolBench's client sends it.
func planBody(api, q string, extra string) string {
	ti, _ := json.Marshal(map[string]string{"q": q})
	tis, _ := json.Marshal(string(ti))
	return `{"category": "News_Media", "tool_name": "newsapi", "api_name": "` + api + `", "tool_input": ` + string(tis) + `, "strip": "", "toolbench_key": ""` + extra + `}`
}

// call posts body and returns the answer, its source header and its
// origin header.
func (rig *planRig) call(t *testing.T, body string, hdr ...string) (virtualAnswer, http.Header) {
	t.Helper()
	resp, b := post(t, rig.srv.URL+"/virtual", "application/json", body, hdr...)
	var a virtualAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return a, resp.Header
}

// genQuery is an argument value of the kinds agents send: words, unicode,
// quotes and backslashes (escaped twice in a tool_input string), long.
func genQuery(r *rand.Rand) string {
	parts := []string{"news", "café", `"quoted"`, `back\slash`, "日本", "😀", " ", "O'Brien", "\t", strings.Repeat("x", r.IntN(300))}
	var b strings.Builder
	for range 1 + r.IntN(5) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// TestVirtualPlanHitsAnswerAsFirst: calls repeated with generated
// arguments are answered from the cache through their plans with the
// answer the first call got, the backend runs once per distinct call,
// and /metrics counts every hit.
func TestVirtualPlanHitsAnswerAsFirst(t *testing.T) {
	rig := newPlanRig(t, 0)
	r := rand.New(rand.NewPCG(29, 6))
	seen := map[string]string{}
	var bodies []string
	for range 60 {
		q := genQuery(r)
		body := planBody("search", q, "")
		if _, ok := seen[body]; ok {
			continue
		}
		a, _ := rig.call(t, body)
		if a.Error != "" {
			t.Fatalf("%s: %+v", body, a)
		}
		seen[body] = string(a.Response)
		bodies = append(bodies, body)
	}
	first := rig.calls.Load()
	hits := 0
	raw := map[string]string{}  // each answer's bytes, the same whichever way the hit was served
	hdrs := map[string]string{} // and its headers
	toolenvHeaders := func(h http.Header) string {
		var out []string
		for k, vs := range h {
			if strings.HasPrefix(k, "X-Toolenv-") || k == "Content-Type" || k == "Content-Length" {
				out = append(out, k+": "+strings.Join(vs, ", "))
			}
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	for round := range 4 {
		for _, body := range bodies {
			resp, b := post(t, rig.srv.URL+"/virtual", "application/json", body)
			if raw[body] == "" {
				raw[body], hdrs[body] = string(b), toolenvHeaders(resp.Header)
			} else if string(b) != raw[body] || toolenvHeaders(resp.Header) != hdrs[body] {
				t.Fatalf("round %d: %s answered %s\n%s\nbefore %s\n%s", round, body, b, toolenvHeaders(resp.Header), raw[body], hdrs[body])
			}
			a, h := rig.call(t, body)
			hits += 2
			if resp.Header.Get("X-Toolenv-Origin") != h.Get("X-Toolenv-Origin") {
				t.Fatalf("round %d: origin %q then %q", round, resp.Header.Get("X-Toolenv-Origin"), h.Get("X-Toolenv-Origin"))
			}
			if string(a.Response) != seen[body] || a.Error != "" {
				t.Fatalf("round %d: %s answered %s %q, first %s", round, body, a.Response, a.Error, seen[body])
			}
			if h.Get("X-Toolenv-Source") != "cache" || h.Get("X-Toolenv-Status") != "ok" || h.Get("Content-Type") != "application/json" {
				t.Fatalf("round %d: headers %v", round, h)
			}
		}
	}
	if n := rig.calls.Load(); n != first {
		t.Fatalf("the backend ran %d more times for repeated calls", n-first)
	}
	for _, body := range bodies {
		if p := rig.s.views.Load().plans.get([]byte(body)); p == nil || p.hit.Load() == nil {
			t.Fatalf("no plan, or no hit in it, kept for %s", body)
		}
	}
	got := metricValue(t, rig.srv.URL, `toolenv_calls_total{collection="toolbench",frontend="virtual",source="cache",status="ok"}`)
	if got != strconv.Itoa(hits) {
		t.Fatalf("/metrics counts %s cache hits, want %d", got, hits)
	}
	if got := metricValue(t, rig.srv.URL, `toolenv_cache_lookups_total{result="hit"}`); got != strconv.Itoa(hits) {
		t.Fatalf("/metrics counts %s cache lookups that hit, want %d", got, hits)
	}
	// Asked for toolenv's account, a planned hit gives it.
	resp, b := post(t, rig.srv.URL+"/virtual", "application/json", strings.TrimSuffix(bodies[0], "}")+`, "toolenv_meta": true}`)
	resp2, b2 := post(t, rig.srv.URL+"/virtual", "application/json", strings.TrimSuffix(bodies[0], "}")+`, "toolenv_meta": true}`)
	for _, x := range [][]byte{b, b2} {
		var meta struct {
			Toolenv struct {
				Source string `json:"source"`
			} `json:"toolenv"`
		}
		if err := json.Unmarshal(x, &meta); err != nil || meta.Toolenv.Source != "cache" {
			t.Fatalf("toolenv_meta answer %s (%v)", x, err)
		}
	}
	if string(b) != string(b2) || resp.Header.Get("X-Toolenv-Source") != resp2.Header.Get("X-Toolenv-Source") {
		t.Fatalf("the planned answer %s differs from the first %s", b2, b)
	}
}

// TestVirtualPlanNeverStale: a plan keeps no answer: an entry replaced in
// the store, deleted, or evicted from memory is never served from before.
func TestVirtualPlanNeverStale(t *testing.T) {
	ctx := context.Background()
	rig := newPlanRig(t, 0)
	body := planBody("search", "stale?", "")
	for range 3 {
		rig.call(t, body) // recorded, read into memory, served by its plan
	}
	tool := rig.reg.Collection("toolbench").Tools[0].ID
	var e *store.Entry
	if err := rig.st.Each(ctx, func(x *store.Entry) error {
		if x.Tool == tool && x.Exact != "" {
			e = x
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatal("the call was not recorded under its exact key")
	}
	// Replaced: the next hit is the new answer.
	repl := *e
	repl.Body = json.RawMessage(`{"replaced":true}`)
	if _, err := rig.st.PutMany(ctx, []*store.Entry{&repl}, true); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if a, h := rig.call(t, body); string(a.Response) != `{"replaced":true}` || h.Get("X-Toolenv-Source") != "cache" {
			t.Fatalf("after a replacement: %s from %s", a.Response, h.Get("X-Toolenv-Source"))
		}
	}
	// Deleted: the backend answers again.
	if _, err := rig.st.Delete(ctx, tool); err != nil {
		t.Fatal(err)
	}
	rig.version.Store(2)
	before := rig.calls.Load()
	if a, _ := rig.call(t, body); !strings.Contains(string(a.Response), `"version":2`) || rig.calls.Load() != before+1 {
		t.Fatalf("after a delete: %s (backend calls %d → %d)", a.Response, before, rig.calls.Load())
	}
}

// TestVirtualPlanEvicted: with memory for a few entries only, calls cycled
// over many more are each answered as first (from the store when memory
// no longer holds them).
func TestVirtualPlanEvicted(t *testing.T) {
	rig := newPlanRig(t, 32*1024) // the LRU's 32 shards hold an entry or two each
	r := rand.New(rand.NewPCG(29, 7))
	first := map[string]string{}
	var bodies []string
	for i := range 200 {
		body := planBody("search", fmt.Sprintf("%d %s", i, genQuery(r)), "")
		a, _ := rig.call(t, body)
		first[body] = string(a.Response)
		bodies = append(bodies, body)
	}
	calls := rig.calls.Load()
	for round := range 3 {
		for _, body := range bodies {
			a, h := rig.call(t, body)
			if string(a.Response) != first[body] || h.Get("X-Toolenv-Source") != "cache" {
				t.Fatalf("round %d: %s answered %s from %s, first %s", round, body, a.Response, h.Get("X-Toolenv-Source"), first[body])
			}
		}
	}
	if rig.calls.Load() != calls {
		t.Fatalf("the backend ran again for recorded calls")
	}
}

// TestVirtualPlanFollowsRegistry: plans belong to the collections they
// were resolved in: a collection replaced (hot-loaded) without the tool,
// or with a policy that does not cache, is served as it now is.
func TestVirtualPlanFollowsRegistry(t *testing.T) {
	rig := newPlanRig(t, 0)
	body := planBody("search", "hot", "")
	for range 3 {
		if _, h := rig.call(t, body); h.Get("X-Toolenv-Source") == "" {
			t.Fatal("no source header")
		}
	}
	// The same tool in a collection that no longer caches: the backend
	// answers.
	if _, err := rig.reg.Replace(planCollection("search", false), toolenv.HandlerFunc(rig.backend)); err != nil {
		t.Fatal(err)
	}
	before := rig.calls.Load()
	if _, h := rig.call(t, body); h.Get("X-Toolenv-Source") != "simulator" || rig.calls.Load() != before+1 {
		t.Fatalf("after a replacement that does not cache: source %q, backend calls %d → %d", h.Get("X-Toolenv-Source"), before, rig.calls.Load())
	}
	// The tool renamed away: the old name is unknown.
	if _, err := rig.reg.Replace(planCollection("find", true), toolenv.HandlerFunc(rig.backend)); err != nil {
		t.Fatal(err)
	}
	if a, _ := rig.call(t, body); a.Error == "" {
		t.Fatalf("a tool no longer served answered %s", a.Response)
	}
}

// TestVirtualPlanSessions: a planned call that names a session is checked
// as any other: an id never issued is refused, not answered from memory.
func TestVirtualPlanSessions(t *testing.T) {
	rig := newPlanRig(t, 0)
	body := planBody("search", "session", "")
	for range 3 {
		rig.call(t, body)
	}
	a, h := rig.call(t, body, SessionHeader, "never-issued")
	if a.Error == "" || h.Get("X-Toolenv-Source") == "cache" {
		t.Fatalf("an unknown session was answered %s %q from %q", a.Response, a.Error, h.Get("X-Toolenv-Source"))
	}
}

// TestPlanMemo: plans are found after they are kept, from any goroutine,
// and the memo starts over at its bound without losing a plan it keeps
// afterwards.
func TestPlanMemo(t *testing.T) {
	var m planMemo
	body := func(i int) []byte { return []byte(fmt.Sprintf(`{"n": %d}`, i)) }
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				b := body(g*2000 + i)
				p := &virtualPlan{exact: string(b)}
				m.put(b, p)
				for j := range 3 {
					if got := m.get(body(g*2000 + i - j)); i >= j && (got == nil || got.exact != string(body(g*2000+i-j))) {
						t.Errorf("plan %d: got %v", g*2000+i-j, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if m.get([]byte(`{"n": -1}`)) != nil {
		t.Fatal("a plan for a body never kept")
	}
	if m.get(make([]byte, maxPlanBody+1)) != nil {
		t.Fatal("a plan for a body over the bound")
	}
	// At the bound the memo starts over.
	big := make([]byte, maxPlanBody)
	for i := range maxPlanBytes/maxPlanBody + 1 {
		copy(big, strconv.Itoa(i))
		m.put(big, &virtualPlan{exact: strconv.Itoa(i)})
	}
	if m.bytes > maxPlanBytes {
		t.Fatalf("the memo holds %d bytes of bodies, over %d", m.bytes, maxPlanBytes)
	}
	if got := m.get(big); got == nil || got.exact != strconv.Itoa(maxPlanBytes/maxPlanBody) {
		t.Fatalf("the last plan kept: %v", got)
	}
}

// TestSharedHeaderValues: a header holding a shared value can be added to
// and set without changing what other responses send, and a value that is
// no status or source is never shared.
func TestSharedHeaderValues(t *testing.T) {
	h1, h2 := http.Header{}, http.Header{}
	h1["X-Toolenv-Source"] = headerValue("cache")
	h2["X-Toolenv-Source"] = headerValue("cache")
	if &h1["X-Toolenv-Source"][0] != &h2["X-Toolenv-Source"][0] {
		t.Fatal("a source's value slice is not shared")
	}
	h1.Add("X-Toolenv-Source", "other")
	h2.Set("X-Toolenv-Status", "ok")
	if got := h2.Values("X-Toolenv-Source"); len(got) != 1 || got[0] != "cache" {
		t.Fatalf("an Add to one header changed another: %v", got)
	}
	if got := headerValue("cache"); len(got) != 1 || got[0] != "cache" || cap(got) != 1 {
		t.Fatalf("the shared value is now %v (cap %d)", got, cap(got))
	}
	if a, b := headerValue("an origin"), headerValue("an origin"); &a[0] == &b[0] {
		t.Fatal("a value that is no status or source was shared")
	}
}

// TestPlanHitHeadersShared: hits answered with the same headers share one
// header list, which holds what setResultHeaders gives their result, and
// no more than maxHeaderLists distinct lists are kept for sharing: a hit
// past them gets its own, with the same headers.
func TestPlanHitHeadersShared(t *testing.T) {
	rig := newPlanRig(t, 0)
	var bodies []string
	for i := range 5 {
		body := planBody("search", fmt.Sprintf("shared %d", i), "")
		for range 3 { // a hit is kept once memory holds the entry
			if a, _ := rig.call(t, body); a.Error != "" {
				t.Fatalf("%s: %+v", body, a)
			}
		}
		bodies = append(bodies, body)
	}
	var first []headerField
	for _, body := range bodies {
		p := rig.s.views.Load().plans.get([]byte(body))
		if p == nil || p.hit.Load() == nil {
			t.Fatalf("no hit kept for %s", body)
		}
		h := p.hit.Load().header
		if first == nil {
			first = h
		} else if &h[0] != &first[0] {
			t.Fatalf("two hits with the same headers keep two lists: %v and %v", h, first)
		}
	}
	got := map[string]string{}
	for _, f := range first {
		got[f.key] = strings.Join(f.values, ",")
	}
	if want := map[string]string{"X-Toolenv-Status": "ok", "X-Toolenv-Source": "cache", "X-Toolenv-Origin": "simulator"}; !maps.Equal(got, want) {
		t.Fatalf("the shared list is %v, want %v", got, want)
	}

	var m planMemo
	for i := range maxHeaderLists + 10 {
		res := &toolenv.Result{Status: toolenv.StatusOK, Source: toolenv.SourceCache, Meta: map[string]string{invoke.MetaOrigin: "origin " + strconv.Itoa(i)}}
		a, b := m.headerFields(res), m.headerFields(res)
		shared := &a[0] == &b[0]
		if shared != (i < maxHeaderLists) {
			t.Fatalf("list %d shared: %v", i, shared)
		}
		for _, l := range [][]headerField{a, b} {
			h := http.Header{}
			for _, f := range l {
				h[f.key] = f.values
			}
			if h.Get("X-Toolenv-Origin") != "origin "+strconv.Itoa(i) || h.Get("X-Toolenv-Source") != "cache" || len(h) != 3 {
				t.Fatalf("list %d: %v", i, h)
			}
		}
	}
	if len(m.headers) != maxHeaderLists {
		t.Fatalf("%d lists kept, want %d", len(m.headers), maxHeaderLists)
	}
}

// TestVirtualPlanReplaysLogged: with calls logged at debug level, every
// replayed hit is still logged, each with its own request ID (a replay
// without a Call is for servers that log no calls).
func TestVirtualPlanReplaysLogged(t *testing.T) {
	var buf logtest.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := invoke.NewRegistry()
	if err := reg.Add(planCollection("search", true), toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result {
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"live"`), Source: toolenv.SourceSimulator}
	})); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir()+"/s.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := NewMetrics()
	s := New(Options{Pipeline: invoke.New(reg, invoke.Options{Cache: st, Observer: m, Logger: log}), Registry: reg, Metrics: m})
	srv := httptest.NewServer(s)
	defer srv.Close()
	body := planBody("search", "logged", "")
	const n = 6
	for range n {
		post(t, srv.URL+"/virtual", "application/json", body)
	}
	ids := map[string]bool{}
	sources := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct{ Msg, Request, Source string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg == "call" {
			ids[rec.Request] = true
			sources[rec.Source]++
		}
	}
	if len(ids) != n || ids[""] || sources["cache"] != n-1 {
		t.Fatalf("%d calls logged with %d distinct request IDs (sources %v), want %d, %d from the cache", len(ids), len(ids), sources, n, n-1)
	}
}
