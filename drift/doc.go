// Package drift makes new versions of tool collections by seeded,
// semantics-preserving schema changes, and enforces them at call time.
//
// A drift step turns version N of a collection into version N+1 with a
// fixed list of operators (endpoint evolution, parameter renames, type
// drift, required/optional swaps, default flips, nesting, response field
// renames, error-format drift, deprecation). Every change an operator
// makes is recorded in a Manifest as data, with the exact old→new mapping,
// so that any valid call written against an old version can be translated
// into the current one and back, and every response translated between
// their formats. Steps compose: a v3 manifest is the v1→v2 step followed by
// the v2→v3 step.
//
// On disk a drifted collection is a folder (see Write): collection.json,
// tools.json and tasks.jsonl of the new version, manifest.json,
// CHANGELOG.md, the oasdiff breaking-change report (breaking.md,
// breaking.json), openapi.json, and base/ — the collection the chain
// started from, whose backend executes every call. Its collection.json
// names the backend type "drift" (see BackendConfig).
//
// Enforcement is two middlewares of the call pipeline (see Enforcer): one
// before argument validation, which rejects old calls with precise
// problems (strict mode) or translates them (compat mode), and one after
// it, which translates each validated call to the base tool and arguments
// so that answers cached before the drift are still found, and translates
// the answer back into the new format.
package drift
