package server

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// virtualPlan is what a /virtual body of the plain shape (see
// decodeVirtualPlain) comes to before its call: the request's fields, the
// tool and collection its names resolve to and the client's exact key.
// All of it depends on the body's bytes and the registry's collections
// alone, so a plan is kept per body in the views it was resolved in (which
// a change of the registry replaces whole): a repeated call, what a cache
// hit is, then skips decoding, resolving and keying. A plan is never
// changed once kept.
//
// What a replay reads comes first, on the plan's first cache line: with
// thousands of plans, each hit finds its plan out of the CPU's caches.
type virtualPlan struct {
	// hit is the cache's answer, which it serves again while it holds
	// (see invoke.ExactHit).
	hit atomic.Pointer[planHit]
	// cached reports that the plan's call may be answered from memory
	// without a session (see serveVirtualHit): the pipeline serves
	// in-memory hits, the collection caches, and the tool is not a
	// session's own. It depends on the tool and collection alone.
	cached bool
	meta   bool // req.Meta
	req    VirtualRequest
	tool   *toolenv.Tool
	coll   *toolenv.Collection
	exact  string
}

// planHit is a plan's cache hit and its /virtual answer, rendered once
// (without VirtualMetaField, which is rendered for each call that asks):
// the body and the headers setResultHeaders gives its result. The hit is
// a copy of the one the pipeline returned, so that a replay reads one
// object (the answer's bytes aside), and the headers are shared by every
// hit with the same ones (see planMemo.headerFields).
type planHit struct {
	hit    invoke.ExactHit
	header []headerField
	answer []byte
}

// newPlan returns the plan of a /virtual request resolved to tool of
// coll, whose exact key is exact.
func (s *Server) newPlan(req *VirtualRequest, tool *toolenv.Tool, coll *toolenv.Collection, exact string) *virtualPlan {
	cached := s.cached != nil && coll != nil && coll.Policy.Cache &&
		!(coll.Policy.Sessions && tool.Hidden()) // callSession's cases with a session
	return &virtualPlan{req: *req, tool: tool, coll: coll, exact: exact, cached: cached, meta: req.Meta}
}

// headerField is a response header and its values, shared by every
// response that sends them (see writeKept).
type headerField struct {
	key    string
	values []string
}

func (h *planHit) size() int { return h.hit.Size() + len(h.answer) }

// exact returns the hit h holds (nil for nil).
func (h *planHit) exact() *invoke.ExactHit {
	if h == nil {
		return nil
	}
	return &h.hit
}

// planMemo holds plans by their body. Reads take no lock and write no
// shared memory: they look in read, an immutable map, and only a body
// not found there takes mu, to look in dirty (every plan kept, read's
// included), promoted to read once it has been missed as many times as
// it holds plans (so that promoting costs O(1) per miss). It holds up to
// maxPlanBytes of bodies and starts over when full; a body over
// maxPlanBody is not kept.
type planMemo struct {
	read   atomic.Pointer[map[string]*virtualPlan]
	mu     sync.Mutex
	dirty  map[string]*virtualPlan
	misses int
	fresh  int // plans in dirty but not in read
	bytes  int
	// hitBytes is the memory the plans' hits hold, up to maxHitBytes
	// (hits of over maxHitSize are not kept).
	hitBytes atomic.Int64
	// headers holds the hits' header lists, one per distinct list (up to
	// maxHeaderLists), under hmu.
	hmu     sync.Mutex
	headers map[string][]headerField
}

const (
	maxPlanBody  = 2 << 10
	maxPlanBytes = 8 << 20
	maxHitSize   = 64 << 10
	maxHitBytes  = 32 << 20
	// maxHeaderLists bounds the distinct header lists kept for sharing:
	// a hit's headers are its status, source and origin (few distinct
	// ones) unless it has warnings or faults.
	maxHeaderLists = 256
)

// get returns the plan kept for body, or nil.
func (m *planMemo) get(body []byte) *virtualPlan {
	if r := m.read.Load(); r != nil {
		if p := (*r)[string(body)]; p != nil {
			return p
		}
	}
	if len(body) > maxPlanBody {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.dirty[string(body)]
	if m.misses++; m.fresh > 0 && m.misses >= len(m.dirty) {
		m.promote()
	}
	return p
}

// promote makes read a copy of dirty; m.mu is held.
func (m *planMemo) promote() {
	r := make(map[string]*virtualPlan, len(m.dirty))
	for k, v := range m.dirty {
		r[k] = v
	}
	m.read.Store(&r)
	m.misses, m.fresh = 0, 0
}

// put keeps p for body.
func (m *planMemo) put(body []byte, p *virtualPlan) {
	if len(body) > maxPlanBody {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirty == nil || m.bytes+len(body) > maxPlanBytes {
		m.dirty, m.bytes, m.misses, m.fresh = map[string]*virtualPlan{}, 0, 0, 0
		m.read.Store(nil)
		m.hitBytes.Store(0)
	}
	if _, ok := m.dirty[string(body)]; !ok {
		m.dirty[string(body)] = p
		m.bytes += len(body)
		m.fresh++
	}
}

// keepHit keeps hit, which res is, in p in place of old, within the
// memo's budget.
func (m *planMemo) keepHit(p *virtualPlan, old *planHit, hit *invoke.ExactHit, res *toolenv.Result) {
	if hit == nil || hit == old.exact() || hit.Size() > maxHitSize {
		return
	}
	h := &planHit{hit: *hit, answer: appendVirtualResponse(nil, res), header: m.headerFields(res)}
	grow := int64(h.size())
	if old != nil {
		grow -= int64(old.size())
	}
	if m.hitBytes.Load()+grow > maxHitBytes {
		return
	}
	if p.hit.CompareAndSwap(old, h) {
		m.hitBytes.Add(grow)
	}
}

// headerFields returns the headers setResultHeaders gives res, as a list
// shared with every hit given the same ones. Lists are shared up to
// maxHeaderLists; a list past that is the hit's own. A list is never
// changed.
func (m *planMemo) headerFields(res *toolenv.Result) []headerField {
	hdr := http.Header{}
	setResultHeaders(hdr, res)
	var fields []headerField
	var key strings.Builder
	for k, vs := range hdr {
		fields = append(fields, headerField{k, vs[:len(vs):len(vs)]})
	}
	slices.SortFunc(fields, func(a, b headerField) int { return strings.Compare(a.key, b.key) })
	for _, f := range fields {
		key.WriteString(f.key)
		for _, v := range f.values {
			key.WriteByte(0)
			key.WriteString(v)
		}
		key.WriteByte('\n')
	}
	m.hmu.Lock()
	defer m.hmu.Unlock()
	if shared, ok := m.headers[key.String()]; ok {
		return shared
	}
	if len(m.headers) < maxHeaderLists {
		if m.headers == nil {
			m.headers = map[string][]headerField{}
		}
		m.headers[key.String()] = fields
	}
	return fields
}

// serveVirtualHit answers a /virtual request whose body has a plan from
// memory, when the answer is the entry recorded under the plan's exact
// key and memory holds it: what handleVirtual would answer, without the
// steps a plan stands for. It reports false, having written nothing, for
// anything else (a session to issue or check, a collection that does not
// cache, a miss), which handleVirtual then serves the ordinary way.
func (s *Server) serveVirtualHit(w http.ResponseWriter, r *http.Request, m *planMemo, p *virtualPlan) bool {
	if !p.cached || len(r.Header[SessionHeader]) > 0 {
		return false
	}
	kept := p.hit.Load()
	// A kept hit is replayed without a Call when nothing needs one (see
	// invoke.CachedInvoker.ReplayPrepared): every call of the plan is
	// the same call but for its request ID, which only a log shows.
	if kept != nil && !p.meta && s.cached.ReplayPrepared(r.Context(), &kept.hit) {
		kept.write(w)
		return true
	}
	call := &toolenv.Call{Tool: p.tool, Collection: p.coll, Frontend: "virtual", RequestID: s.newRequestID()}
	if p.req.ToolbenchKey != "" {
		call.Meta = map[string]string{"toolbench_key": p.req.ToolbenchKey}
	}
	if kept != nil && !p.meta && s.cached.ReplayHit(r.Context(), call, p.exact, &kept.hit) {
		kept.write(w)
		return true
	}
	res, hit, ok := s.cached.InvokeCachedHit(r.Context(), call, p.exact, kept.exact())
	if !ok {
		return false
	}
	if p.meta {
		writeVirtualMeta(w, res)
	} else {
		writeVirtual(w, http.StatusOK, res)
	}
	m.keepHit(p, kept, hit, res)
	return true
}

// write answers with the hit as writeVirtual answers with its result.
func (h *planHit) write(w http.ResponseWriter) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	for _, f := range h.header {
		hdr[f.key] = f.values
	}
	w.WriteHeader(http.StatusOK)
	w.Write(h.answer)
}

// jsonContentType is the Content-Type header's value, shared by every
// answer: net/http copies a header before it writes it, and nothing
// changes a value slice in place.
var jsonContentType = []string{"application/json"}

// resultHeaderValues holds a one-element value slice for every status and
// source, which responses share (see jsonContentType), so that setting
// the X-Toolenv-Status and -Source headers allocates nothing. Each slice
// has no spare capacity (an Add to its header copies it first). It is
// never changed.
var resultHeaderValues = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range []string{
		string(toolenv.StatusOK), string(toolenv.StatusInvalidArguments), string(toolenv.StatusUnknownTool), string(toolenv.StatusNotFound),
		string(toolenv.StatusUnauthorized), string(toolenv.StatusRateLimited), string(toolenv.StatusTimeout), string(toolenv.StatusUpstreamError),
		string(toolenv.StatusUnavailable), string(toolenv.StatusGone), string(toolenv.StatusBadRequest), string(toolenv.StatusTooLarge),
		string(toolenv.StatusCanceled), string(toolenv.StatusInternal),
		string(toolenv.SourceCache), string(toolenv.SourceUpstream), string(toolenv.SourceSimulator), string(toolenv.SourceSynthesizer),
		string(toolenv.SourceLive), string(toolenv.SourcePipeline),
	} {
		m[v] = []string{v}
	}
	return m
}()

// headerValue returns a header value slice holding v: a shared one for
// a status or source, else a new one.
func headerValue(v string) []string {
	if vs, ok := resultHeaderValues[v]; ok {
		return vs
	}
	return []string{v}
}
