package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/validate"
)

// LenientCache serves calls to lenient, cacheable collections (ToolBench
// documentation) from c before their arguments are validated, as
// StableToolBench's server looks its cache up before anything else: a
// recorded answer is found even when the call lacks a required argument
// or names a parameter as the documentation does rather than by its
// standardized name. It tries, in order, the canonical key of the
// arguments as sent, of the arguments as lenient validation coerces them,
// each of those with the parameters under their documented names (a
// property's "x-name"), and the arguments sent under documented names
// moved to the standardized ones (as sent and coerced). On a miss the
// call goes on down the pipeline with its lookup done (the cache below
// still stores the answer). Strict collections, collections that do not
// cache, and calls that ask for no cache pass through untouched.
func LenientCache(c Cache, v *validate.Validator, log *slog.Logger) toolenv.Middleware {
	if c == nil {
		return nil
	}
	if v == nil {
		v = &validate.Validator{}
	}
	mem, _ := c.(exactMemory)
	search, _ := c.(searchMemory)
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Tool == nil || call.Options.NoCache || call.Tool.Meta[toolenv.MetaState] != "" && call.Tool.State() != toolenv.StateStateless {
				// A tool whose answers depend on state is keyed by its
				// session's history (Episodes), never by its arguments alone.
				return next.Invoke(ctx, call)
			}
			policy := policyOf(call)
			if !policy.Cache || policy.Validation != toolenv.ValidationLenient {
				return next.Invoke(ctx, call)
			}
			tool := call.Tool.ID
			// The first lookup tries the client's exact key (see
			// CallMetaExactKey) before the canonical one: in memory
			// first, where a hit needs no canonical key.
			exact := call.Meta[CallMetaExactKey]
			if mem != nil && exact != "" {
				if e, ok := mem.CachedExact(tool, exact); ok {
					return fromEntry(e)
				}
			}
			var tried []string // at most six keys
			var writes uint64
			if search != nil && exact != "" {
				writes = search.Writes() // before the first lookup
			}
			exactKey := exact
			lookup := func(args map[string]any) *toolenv.Result {
				canon, err := call.CanonicalOf(args)
				if err != nil || slices.Contains(tried, canon) {
					return nil
				}
				tried = append(tried, canon)
				e, ok, err := c.GetExact(ctx, tool, exact, canon)
				exact = ""
				if err != nil {
					if ctx.Err() != nil {
						return toolenv.ResultOf(ctx.Err())
					}
					log.Warn("cache read failed; the call fails fast", "tool", tool, "err", err)
					return storeFailure("read", err)
				}
				if !ok {
					return nil
				}
				if len(tried) > 1 && search != nil && exactKey != "" {
					// Found past the first keys: the next identical call
					// finds it with its first lookup.
					search.Searched(tool, exactKey, tried[0], e, writes)
				}
				return fromEntry(e)
			}
			sent := call.Args
			if sent == nil {
				sent = map[string]any{}
			}
			if res := lookup(sent); res != nil {
				return res
			}
			coerce := func(args map[string]any) map[string]any {
				return validateMemo(call, v, args, true).Args
			}
			// Each renaming is recorded as derived from the map it
			// renames: its cache key is written from that map's.
			derived := func(base map[string]any) func(map[string]any, []string) map[string]any {
				return func(m map[string]any, changed []string) map[string]any {
					call.ArgsDerived(m, base, changed)
					return m
				}
			}
			coerced := coerce(sent)
			std := derived(sent)(standardNames(call.Tool.Input, sent))
			candidates := []map[string]any{
				coerced,
				derived(sent)(documentedNames(call.Tool.Input, sent)),
				derived(coerced)(documentedNames(call.Tool.Input, coerced)),
				std,
			}
			if std != nil {
				candidates = append(candidates, coerce(std))
			}
			for _, args := range candidates {
				if args == nil { // no such renaming
					continue
				}
				if res := lookup(args); res != nil {
					return res
				}
			}
			// Looked up under every key: the cache below only stores.
			// (A copy sharing the arguments: nothing below changes them in
			// place, and copying tens of thousands of keys is a pass of
			// its own.)
			looked := *call
			looked.Options.NoCache = true
			return next.Invoke(ctx, &looked)
		})
	}
}

// exactMemory is what a Cache with an in-memory layer offers (the
// stores' CachedExact): the entry recorded under an exact key, when
// memory holds it.
type exactMemory interface {
	CachedExact(tool, exact string) (*store.Entry, bool)
}

// searchMemory is what a Cache with an in-memory layer offers (the
// stores' Writes and Searched) to remember where a lenient search of an
// exact key ended.
type searchMemory interface {
	Writes() uint64
	Searched(tool, exact, args string, e *store.Entry, writes uint64)
}

// validateKind names a validation among a call's memos (MemoArgs).
type validateKind struct {
	schema  *toolenv.Schema
	lenient bool
}

// validateMemo validates args against the call's tool input once per call
// (LenientCache and Validate check the same arguments the same way).
func validateMemo(call *toolenv.Call, v *validate.Validator, args map[string]any, lenient bool) validate.Outcome {
	return call.MemoArgs(validateKind{call.Tool.Input, lenient}, args, func() any {
		var out validate.Outcome
		if keys, ok := call.SortedKeys(args); ok { // known from the cache key's writing
			out = v.ArgsSorted(call.Tool.Input, args, keys, lenient)
		} else {
			out = v.Args(call.Tool.Input, args, lenient)
		}
		if out.Changed != nil {
			// The coerced arguments' cache key is written from the
			// sent ones' (a few keys changed among perhaps thousands).
			call.ArgsDerived(out.Args, args, out.Changed)
		}
		return out
	}).(validate.Outcome)
}

// documentedName returns the name a property's documentation gave it
// ("x-name"), or "" when it has none.
func documentedName(p *toolenv.Schema) string {
	if p == nil {
		return ""
	}
	raw, ok := p.Extra["x-name"]
	if !ok {
		return ""
	}
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return ""
	}
	return name
}

// documentedNames returns args with every parameter that has a documented
// name under that name, or nil when none has (or the names would clash),
// and the keys it changed (see toolenv.Call.ArgsDerived).
func documentedNames(s *toolenv.Schema, args map[string]any) (map[string]any, []string) {
	if s == nil || len(args) == 0 {
		return nil, nil
	}
	// Only arguments of documented parameters are renamed: those (a
	// handful) are found, and args copied as a whole (a call may send
	// tens of thousands of keys).
	var renames map[string]string // sent name → documented name
	for name, p := range s.Properties {
		if _, sent := args[name]; sent {
			if doc := documentedName(p); doc != "" && doc != name {
				if renames == nil {
					renames = map[string]string{}
				}
				renames[name] = doc
			}
		}
	}
	return rename(args, renames)
}

// rename returns args with the keys of renames moved to their new names,
// and the keys it changed, or nil when there is nothing to rename or a
// new name is another argument's (renamed away or not, each argument
// keeps a name of its own).
func rename(args map[string]any, renames map[string]string) (map[string]any, []string) {
	if len(renames) == 0 {
		return nil, nil
	}
	out := maps.Clone(args)
	changed := make([]string, 0, 2*len(renames))
	for from := range renames {
		delete(out, from)
		changed = append(changed, from)
	}
	for from, to := range renames {
		if _, clash := out[to]; clash {
			return nil, nil
		}
		out[to] = args[from]
		changed = append(changed, to)
	}
	return out, changed
}

// standardNames returns args with every argument named as a parameter's
// documentation names it moved to the parameter's standardized name, or
// nil when none is (or the names would clash), and the keys it changed.
func standardNames(s *toolenv.Schema, args map[string]any) (map[string]any, []string) {
	if s == nil || len(args) == 0 {
		return nil, nil
	}
	var byDoc map[string]string
	for name, p := range s.Properties {
		if doc := documentedName(p); doc != "" && doc != name {
			if byDoc == nil {
				byDoc = map[string]string{}
			}
			byDoc[doc] = name
		}
	}
	// Only arguments sent under a documented name are moved: those are
	// looked up (a handful) rather than every argument walked.
	var renames map[string]string
	for doc, std := range byDoc {
		if _, ok := args[doc]; ok {
			if _, sent := args[std]; !sent {
				if renames == nil {
					renames = map[string]string{}
				}
				renames[doc] = std
			}
		}
	}
	return rename(args, renames)
}

// lenientMissing turns the missing required arguments validation found in
// a lenient call into warnings: StableToolBench passes such a call on (to
// the real API, then its simulator) rather than rejecting it.
func lenientMissing(problems []toolenv.Problem) (rest []toolenv.Problem, warnings []string) {
	for _, p := range problems {
		if p.Code == validate.CodeMissingRequired {
			warnings = append(warnings, fmt.Sprintf("%s: no recorded answer matched, so the call was passed on without it (answered by the API or simulated), as StableToolBench does", p.Message))
			continue
		}
		rest = append(rest, p)
	}
	return rest, warnings
}
