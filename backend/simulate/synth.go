package simulate

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/internal/schemacheck"
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
	opts     SynthOptions
	log      *slog.Logger
	checkers sync.Map // *toolenv.Schema → *schemacheck.Checker (nil: does not compile)
	docs     sync.Map // *toolenv.Schema → *schemaDoc
}

// schemaDoc returns what generation reads from s, worked out once.
func (s *Synthesizer) schemaDoc(root *toolenv.Schema) *schemaDoc {
	if d, ok := s.docs.Load(root); ok {
		return d.(*schemaDoc)
	}
	d, _ := s.docs.LoadOrStore(root, newSchemaDoc(root))
	return d.(*schemaDoc)
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
	body, rule, from, problems := s.synthesize(ctx, call.Tool.ID, doc, call.Args)
	r := &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourceSynthesizer, Warnings: []string{SynthWarning}}
	if len(problems) > 0 {
		r.Warnings = append(r.Warnings, "toolenv's offline synthesizer could not make an answer that matches the tool's output schema: "+strings.Join(problems, "; "))
	}
	r.SetMeta(MetaSynthRule, rule)
	if from != "" {
		r.SetMeta(MetaSynthFrom, from)
	}
	r.SetMeta(MetaCacheable, "false")
	return r
}

// synthesize makes the answer and says which rule made it (and, for
// "nearest", the arguments of the recorded call it adapted). Against an
// output schema, the answer conforms; problems says how it does not where
// no answer the synthesizer could make did.
func (s *Synthesizer) synthesize(ctx context.Context, toolID string, doc *toolenv.Tool, args map[string]any) (body json.RawMessage, rule, from string, problems []string) {
	canon, err := toolenv.Canonical(args)
	if err != nil {
		canon = []byte("{}")
	}
	exs, err := gatherExamples(ctx, doc, toolID, s.opts.Examples, s.opts.ExamplePool)
	if err != nil {
		s.log.Warn("synthesizer: recorded examples unavailable; using the documentation only", "tool", toolID, "err", err)
	}
	full := withDefaults(doc.Input, args)
	g := &generator{seed: toolID + "\x00" + string(canon), args: argIndex(full), title: doc.TitleOrName(), maxList: s.opts.MaxList, pools: valuePools(exs)}
	tmpl := parseTemplate(doc.OutputExample)
	for _, e := range exs {
		if e.canon == string(canon) && len(e.body) > 0 {
			if c := s.checker(doc); c != nil && tmpl == nil && !c.Valid(e.body) {
				// A recorded answer that breaks the documented schema
				// is made to keep it (from itself, as the base).
				body, problems := s.fromSchema(doc, g, exs, full)
				return body, "template", "", problems
			}
			return e.body, "example", "", nil
		}
	}
	switch {
	case tmpl != nil && informative(tmpl):
		return encodeJSON(g.value(tmpl, "", "")), "template", "", nil
	case tmpl == nil && doc.Output != nil && informativeSchema(s.schemaDoc(doc.Output)):
		body, problems := s.fromSchema(doc, g, exs, full)
		return body, "template", "", problems
	}
	if len(exs) > 0 {
		rankForSynth(exs, doc, full)
		for _, e := range exs {
			if len(e.body) > 0 {
				// Another call's answer, with its argument values
				// replaced by this call's wherever they appear.
				body, _ := adaptBody(e.body, substitutions(e.args, args))
				if c := s.checker(doc); c == nil || tmpl != nil || c.Valid(body) {
					return body, "nearest", e.canon, nil
				}
				break
			}
		}
	}
	body = encodeJSON(pyfmt.Dict{
		{Key: "status", Value: "ok"},
		{Key: "api", Value: doc.TitleOrName()},
		{Key: "input", Value: argsObject(doc, args)},
		{Key: "note", Value: "offline synthesized placeholder: no response format is documented for this API"},
	})
	if c := s.checker(doc); c != nil && tmpl == nil && !c.Valid(body) {
		// The placeholder breaks the output schema: make one that keeps it.
		body, problems := s.fromSchema(doc, g, exs, full)
		return body, "template", "", problems
	}
	return body, "generic", "", nil
}

// checker returns doc's output schema compiled, or nil when it has none
// or it does not compile.
func (s *Synthesizer) checker(doc *toolenv.Tool) *schemacheck.Checker {
	if doc.Output == nil {
		return nil
	}
	if c, ok := s.checkers.Load(doc.Output); ok {
		return c.(*schemacheck.Checker)
	}
	c, err := schemacheck.Compile(doc.Output)
	if err != nil {
		c = nil
	}
	s.checkers.Store(doc.Output, c)
	return c
}

// fromSchema makes an answer that conforms to doc's output schema, as
// close to the nearest recorded answer (adapted to the call) as the
// schema allows, and keeping the relations between members the recorded
// answers keep. It checks the answer with a JSON Schema validator (as
// MCP clients check it) and, while it does not conform, tries other
// branches of anyOf/oneOf, then values made from the constraints alone;
// problems says how the first answer breaks the schema when none
// conforms.
func (s *Synthesizer) fromSchema(doc *toolenv.Tool, g *generator, exs []example, args map[string]any) (json.RawMessage, []string) {
	rankForSynth(exs, doc, args)
	var base any
	has := false
	var bodies []any
	for _, e := range exs {
		if e.err != "" || len(e.body) == 0 {
			continue
		}
		v, err := pyfmt.DecodeOrdered(e.body)
		if err != nil {
			continue
		}
		bodies = append(bodies, v)
		if !has {
			adapted, _ := adaptBody(e.body, substitutions(e.args, args))
			if b, err := pyfmt.DecodeOrdered(adapted); err == nil {
				base, has = b, true
			}
		}
	}
	g.relations = learnRelations(bodies)
	g.lists = recordedLists(bodies)
	c := s.checker(doc)
	var first json.RawMessage
	for attempt := range 7 {
		sg := newSchemaGen(g, s.schemaDoc(doc.Output))
		sg.strict = attempt >= 4
		sg.alt = attempt % 4
		body := encodeJSON(sg.value(doc.Output, "", "", base, has && !sg.strict, 0))
		if c == nil || c.Valid(body) {
			return body, nil
		}
		if first == nil {
			first = body
		}
	}
	return first, c.Check(first)
}

// informativeSchema reports whether an output schema says anything about
// the answer: not an empty schema, nor an object with no member named.
func informativeSchema(d *schemaDoc) bool {
	sg := newSchemaGen(&generator{}, d)
	n := sg.build(d.root)
	switch {
	case len(n.groups) > 0 || len(n.consts) > 0 || n.hasEnum:
		return true
	case n.kindOf(nil, false) == "object":
		return len(n.s.Properties) > 0 || len(n.s.Required) > 0 || len(n.patternProps) > 0 || n.addl != nil || n.minProps > 0
	}
	return n.s.Type != "" || n.types != nil || n.s.Items != nil || len(n.patterns) > 0 || n.s.Format != ""
}

// withDefaults returns args with the documented default of every
// top-level parameter the call leaves out: an answer to a call without
// "units" is an answer in the default unit.
func withDefaults(in *toolenv.Schema, args map[string]any) map[string]any {
	if in == nil {
		return args
	}
	var out map[string]any
	for _, name := range in.Names() {
		p := in.Properties[name]
		if p == nil || p.Default == nil {
			continue
		}
		if _, ok := args[name]; ok {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(args)+1)
			for k, v := range args {
				out[k] = v
			}
		}
		out[name] = p.Default
	}
	if out == nil {
		return args
	}
	return out
}

// rankForSynth ranks recorded calls for the synthesizer, most similar to
// args first: as rankExamples, with defaults filled in on both sides, and
// an argument whose documented values are a closed list (a unit, a
// currency: an enum) weighing three times as much as another, since an
// answer in another unit is further from the call than one for another
// city.
func rankForSynth(cands []example, doc *toolenv.Tool, args map[string]any) {
	weight := func(name string) float64 {
		if p := doc.Input.Prop(name); p != nil && len(p.Enum) > 0 {
			return 3
		}
		return 1
	}
	for i := range cands {
		b := withDefaults(doc.Input, cands[i].args)
		shared, union := 0, len(args)
		var vals, weights float64
		for k, va := range args {
			vb, ok := b[k]
			if !ok {
				continue
			}
			shared++
			w := weight(k)
			vals += w * valueSimilarity(va, vb)
			weights += w
		}
		for k := range b {
			if _, ok := args[k]; !ok {
				union++
			}
		}
		switch {
		case len(args) == 0 && len(b) == 0:
			cands[i].score = 1
		case shared == 0:
			cands[i].score = 0
		default:
			cands[i].score = 0.4*float64(shared)/float64(union) + 0.6*vals/weights
		}
	}
	// Among equally near calls, the one whose arguments other than the
	// closed lists come first, so that calls differing only in a unit
	// are answered from recorded calls of one subject (an unseen city in
	// both units gets one city's weather in both).
	open := make([]string, len(cands))
	for i := range cands {
		rest := map[string]any{}
		for k, v := range cands[i].args {
			if weight(k) == 1 {
				rest[k] = v
			}
		}
		c, _ := toolenv.Canonical(rest)
		open[i] = string(c)
	}
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := cands[idx[i]], cands[idx[j]]
		if a.score != b.score {
			return a.score > b.score
		}
		if open[idx[i]] != open[idx[j]] {
			return open[idx[i]] < open[idx[j]]
		}
		if len(a.body) != len(b.body) {
			return len(a.body) < len(b.body)
		}
		return a.canon < b.canon
	})
	sorted := make([]example, len(cands))
	for i, k := range idx {
		sorted[i] = cands[k]
	}
	copy(cands, sorted)
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
