package simulate

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// Meta keys of synthesized results.
const (
	// MetaSynthRule says how a synthesized answer was made: "example"
	// (a documented or recorded call with the same arguments),
	// "template" (the documented response shape filled in), "nearest"
	// (the most similar recorded call's response) or "generic".
	MetaSynthRule = "synth_rule"
	// MetaSynthFrom is, for the "nearest" rule, the canonical arguments
	// of the recorded call whose response was adapted (its argument
	// values replaced by this call's wherever they appear).
	MetaSynthFrom = "synth_from"
	// MetaCacheable is the Result.Meta key that keeps a result out of
	// the cache when "false" (the key invoke's cache middleware reads).
	MetaCacheable = "cacheable"
)

// SynthWarning is the warning every synthesized result carries.
const SynthWarning = "synthesized offline by toolenv (no LLM simulator is configured): the response has the documented shape but its values are made up"

// SynthOptions configure a Synthesizer.
type SynthOptions struct {
	// Examples gives recorded calls of the same tool; their values fill
	// the documented shape, and without a shape the most similar one is
	// answered. Nil means documented examples only.
	Examples ExampleSource
	// ExamplePool is how many recorded calls are read; default 200.
	ExamplePool int
	// MaxList caps the length of synthesized lists; default 20.
	MaxList int
	// Logger logs example-source failures; nil discards.
	Logger *slog.Logger
}

// Synthesizer answers calls offline and deterministically, from the API's
// documented examples, its response template (ToolBench template_response)
// or output schema, and recorded calls of the same API: the same call and
// the same records always give the same bytes. It is a toolenv.Handler,
// safe for concurrent use.
type Synthesizer struct {
	opts SynthOptions
	log  *slog.Logger
}

var _ toolenv.Handler = (*Synthesizer)(nil)

// NewSynthesizer returns a Synthesizer.
func NewSynthesizer(opts SynthOptions) *Synthesizer {
	if opts.ExamplePool <= 0 {
		opts.ExamplePool = 200
	}
	if opts.MaxList <= 0 {
		opts.MaxList = 20
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Synthesizer{opts: opts, log: log}
}

// Invoke answers call. The result is marked: Source is
// toolenv.SourceSynthesizer, it carries SynthWarning, and it is never
// cached.
func (s *Synthesizer) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "resolve the tool before calling the synthesizer", "synthesizer: call has no tool")
	}
	doc := call.Doc
	if doc == nil {
		doc = call.Tool
	}
	body, rule, from := s.synthesize(ctx, call.Tool.ID, doc, call.Args)
	r := &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSynthesizer, Warnings: []string{SynthWarning}}
	r.SetMeta(MetaSynthRule, rule)
	if from != "" {
		r.SetMeta(MetaSynthFrom, from)
	}
	r.SetMeta(MetaCacheable, "false")
	return r
}

// synthesize makes the answer and says which rule made it (and, for
// "nearest", the arguments of the recorded call it adapted).
func (s *Synthesizer) synthesize(ctx context.Context, toolID string, doc *toolenv.Tool, args map[string]any) (body json.RawMessage, rule, from string) {
	canon, err := toolenv.Canonical(args)
	if err != nil {
		canon = []byte("{}")
	}
	exs, err := gatherExamples(ctx, doc, toolID, s.opts.Examples, s.opts.ExamplePool)
	if err != nil {
		s.log.Warn("synthesizer: recorded examples unavailable; using the documentation only", "tool", toolID, "err", err)
	}
	for _, e := range exs {
		if e.canon == string(canon) && len(e.body) > 0 {
			return e.body, "example", ""
		}
	}
	g := &generator{seed: toolID + "\x00" + string(canon), args: argIndex(args), title: doc.TitleOrName(), maxList: s.opts.MaxList, pools: valuePools(exs)}
	if sh := toolShape(doc); informative(sh) {
		return encodeJSON(g.value(sh, "", "")), "template", ""
	}
	if len(exs) > 0 {
		rankExamples(exs, args)
		for _, e := range exs {
			if len(e.body) > 0 {
				// Another call's answer, with its argument values
				// replaced by this call's wherever they appear.
				body, _ := adaptBody(e.body, substitutions(e.args, args))
				return body, "nearest", e.canon
			}
		}
	}
	return encodeJSON(pyfmt.Dict{
		{Key: "status", Value: "ok"},
		{Key: "api", Value: doc.TitleOrName()},
		{Key: "input", Value: argsObject(doc, args)},
		{Key: "note", Value: "offline synthesized placeholder: no response format is documented for this API"},
	}), "generic", ""
}

// informative reports whether a documented shape says anything about the
// response: an empty object or list template (ToolBench writes "{}" where
// it knows nothing) does not.
func informative(sh *shape) bool {
	if sh == nil {
		return false
	}
	switch sh.kind {
	case kindObject:
		return len(sh.fields) > 0
	case kindArray:
		return sh.length > 0 || informative(sh.elem)
	case kindAny, kindNull:
		return false
	}
	return true
}

// argIndex maps normalised argument names to their values, so that a
// response member named like an argument echoes it.
func argIndex(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[normName(k)] = v
	}
	return out
}

// normName lower-cases a name and drops '_' and '-'.
func normName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' {
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// valuePools collects, per member path ("data.movies[].title"), the
// scalar values recorded responses hold there, sorted for determinism.
func valuePools(exs []example) map[string][]any {
	pools := map[string][]any{}
	seen := map[string]map[string]bool{}
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		if depth > 32 {
			return
		}
		switch x := v.(type) {
		case pyfmt.Dict:
			for _, m := range x {
				walk(m.Value, joinPath(path, m.Key), depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]", depth+1)
			}
		case string, json.Number, bool:
			k := string(encodeJSON(x))
			if seen[path] == nil {
				seen[path] = map[string]bool{}
			}
			if !seen[path][k] && len(pools[path]) < 64 {
				seen[path][k] = true
				pools[path] = append(pools[path], x)
			}
		}
	}
	for _, e := range exs {
		if v := structured(e.body); v != nil {
			walk(v, "", 0)
		}
	}
	for _, p := range pools {
		sort.Slice(p, func(i, j int) bool { return string(encodeJSON(p[i])) < string(encodeJSON(p[j])) })
	}
	return pools
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// hash64 is the 64-bit FNV-1a hash of the parts, each followed by a 0
// byte.
func hash64(parts ...string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= prime
		}
		h *= prime // the 0 separator: h ^= 0 leaves h unchanged
	}
	return h
}
