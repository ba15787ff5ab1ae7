package invoke

import (
	"context"
	"fmt"
	"sort"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// Registry holds the collections a server offers and the backend of each.
// It is a toolenv.Handler: invoking it routes the call to its collection's
// backend. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	colls map[string]*registered

	subMu  sync.Mutex // held while listeners run, so they see changes in order
	subs   map[int]func(name string)
	nextID int
}

type registered struct {
	c       *toolenv.Collection
	backend toolenv.Handler
}

var _ toolenv.Handler = (*Registry)(nil)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{colls: map[string]*registered{}}
}

// Add registers a collection and the backend that executes its tools.
func (r *Registry) Add(c *toolenv.Collection, backend toolenv.Handler) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("add collection: %w", err)
	}
	if backend == nil {
		return fmt.Errorf("add collection %s: no backend", c.Name)
	}
	r.mu.Lock()
	if _, dup := r.colls[c.Name]; dup {
		r.mu.Unlock()
		return fmt.Errorf("add collection %s: a collection of that name is already loaded (collection names must be unique; rename one in its collection.json, or hot-load a new version with Replace)", c.Name)
	}
	c.Reindex()
	r.colls[c.Name] = &registered{c: c, backend: backend}
	r.mu.Unlock()
	r.notify(c.Name)
	return nil
}

// Replace hot-loads c: it takes the place of the loaded collection of the
// same name (a new version of it, a drifted one) with its backend, or is
// added when none is loaded. The swap is atomic: a call resolved before
// it finishes on the old version, every later one meets the new. Replace
// returns the old backend, which the caller closes once calls in flight
// are done (nil when c was not loaded). Subscribers are told when the
// swap is done, before Replace returns.
func (r *Registry) Replace(c *toolenv.Collection, backend toolenv.Handler) (old toolenv.Handler, err error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("replace collection: %w", err)
	}
	if backend == nil {
		return nil, fmt.Errorf("replace collection %s: no backend", c.Name)
	}
	c.Reindex()
	r.mu.Lock()
	if prev := r.colls[c.Name]; prev != nil {
		old = prev.backend
	}
	r.colls[c.Name] = &registered{c: c, backend: backend}
	r.mu.Unlock()
	r.notify(c.Name)
	return old, nil
}

// Subscribe calls fn with a collection's name after every Add and Replace, so
// that views built from the registry (indexes, listings, MCP tool lists)
// follow a hot-loaded version. Calls are made one at a time, in the order
// of the changes; fn must not call Subscribe or the function it returns.
// The returned function ends the subscription.
func (r *Registry) Subscribe(fn func(name string)) (cancel func()) {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	if r.subs == nil {
		r.subs = map[int]func(string){}
	}
	id := r.nextID
	r.nextID++
	r.subs[id] = fn
	return func() {
		r.subMu.Lock()
		delete(r.subs, id)
		r.subMu.Unlock()
	}
}

func (r *Registry) notify(name string) {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	ids := make([]int, 0, len(r.subs))
	for id := range r.subs {
		ids = append(ids, id)
	}
	sort.Ints(ids) // in subscription order
	for _, id := range ids {
		r.subs[id](name)
	}
}

// Collection returns the named collection, or nil.
func (r *Registry) Collection(name string) *toolenv.Collection {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.colls[name]; e != nil {
		return e.c
	}
	return nil
}

// Collections returns the collections sorted by name.
func (r *Registry) Collections() []*toolenv.Collection {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*toolenv.Collection, 0, len(r.colls))
	for _, e := range r.colls {
		out = append(out, e.c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Backend returns the backend of the named collection, or nil.
func (r *Registry) Backend(name string) toolenv.Handler {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.colls[name]; e != nil {
		return e.backend
	}
	return nil
}

// Tool returns the tool with the given ID ("collection/name"), or nil.
// (It looks in the collection's own name index: the registry keeps no
// second index of every tool.)
func (r *Registry) Tool(id string) *toolenv.Tool {
	coll, name, ok := toolenv.SplitToolID(id)
	if !ok {
		return nil
	}
	r.mu.RLock()
	e := r.colls[coll]
	r.mu.RUnlock()
	if e == nil {
		return nil
	}
	return e.c.Tool(name)
}

// Resolve finds a tool by collection and name. On failure it returns an
// error Result that names what exists (the collections, or the closest
// tool names) so the caller can fix the call.
func (r *Registry) Resolve(collection, name string) (*toolenv.Tool, *toolenv.Collection, *toolenv.Result) {
	r.mu.RLock()
	e := r.colls[collection]
	r.mu.RUnlock()
	if e == nil {
		names := make([]string, 0)
		for _, c := range r.Collections() {
			names = append(names, c.Name)
		}
		return nil, nil, toolenv.Errorf(toolenv.StatusUnknownTool, fmt.Sprintf("loaded collections: %v", names), "unknown collection %q", collection)
	}
	t := e.c.Tool(name)
	if t == nil {
		return nil, e.c, UnknownTool(e.c, name)
	}
	return t, e.c, nil
}

// UnknownTool is the Result for a call to a tool c does not have, with the
// closest names as a hint.
func UnknownTool(c *toolenv.Collection, name string) *toolenv.Result {
	names := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		names[i] = t.Name
	}
	hint := fmt.Sprintf("collection %s has %d tools; list them at /collections/%s/tools", c.Name, len(names), c.Name)
	if s := validate.Suggest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean %q? ", s) + hint
	}
	return toolenv.Errorf(toolenv.StatusUnknownTool, hint, "no tool %q in collection %s", name, c.Name)
}

// Invoke routes call to its collection's backend.
func (r *Registry) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "resolve the tool before invoking", "call names no tool")
	}
	coll := call.Tool.Collection
	r.mu.RLock()
	e := r.colls[coll]
	r.mu.RUnlock()
	if e == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "", "tool %s belongs to collection %q, which is not loaded", call.Tool.ID, coll)
	}
	if call.Collection == nil {
		call.Collection = e.c
	}
	return e.backend.Invoke(ctx, call)
}

// NewCall resolves collection/name and returns a Call with args, or the
// error Result of a failed resolution.
func (r *Registry) NewCall(collection, name string, args map[string]any) (*toolenv.Call, *toolenv.Result) {
	t, c, res := r.Resolve(collection, name)
	if res != nil {
		return nil, res
	}
	return &toolenv.Call{Tool: t, Collection: c, Args: args, Frontend: "go"}, nil
}
