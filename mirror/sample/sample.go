// Package sample writes calls of a documented API without a language
// model: a deterministic, schema-driven sampler for toolenv mirror.
//
// For each parameter it gathers candidate values, documented ones first —
// the schema's default, examples, enum and const, the tool's documented
// example calls, ToolBench's example_value — then values the caller knows
// from elsewhere (Options.Known: the arguments of a collection's gold
// calls, values seen in real responses), then values made from the type:
// boundary values (minimum, maximum, minLength, maxLength, minItems,
// maxItems), typical values of the format (date, date-time, email, uri,
// uuid, ipv4), words of the documentation, and seeded random values.
//
// Calls come in this order: the documented call (required parameters with
// their first candidate), the full call (every parameter), one call per
// documented or known value, one per boundary value, then seeded random
// combinations (each optional parameter present with probability 1/2),
// until Options.N distinct calls exist or no new one turns up. Then come
// the deliberately invalid calls, for the failure set a simulator learns
// to refuse bad calls from: a missing required parameter, a wrong type, a
// value outside the enum, a value out of range or too long, an empty
// required string, an unknown parameter.
//
// The same tool and options always give the same calls, in the same
// order: the generator is seeded from Options.Seed and the tool ID.
package sample

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// The kinds of call.
const (
	KindDocumented = "documented" // documented defaults and examples
	KindKnown      = "known"      // values known from elsewhere (Options.Known)
	KindBoundary   = "boundary"   // a boundary value of a parameter
	KindSampled    = "sampled"    // a seeded random combination
	KindInvalid    = "invalid:"   // prefix of the deliberately invalid kinds
)

// The invalid kinds, after KindInvalid.
const (
	InvalidMissingRequired = "missing_required"
	InvalidWrongType       = "wrong_type"
	InvalidNotInEnum       = "not_in_enum"
	InvalidOutOfRange      = "out_of_range"
	InvalidEmpty           = "empty_value"
	InvalidUnknownParam    = "unknown_param"
)

// UnknownParam is the name of the parameter an unknown_param call adds.
const UnknownParam = "undocumented_param"

// Call is one sampled call.
type Call struct {
	Args map[string]any
	// Kind is KindDocumented, KindKnown, KindBoundary, KindSampled or
	// KindInvalid + what is wrong ("invalid:missing_required").
	Kind string
	// Canonical is the canonical JSON of Args.
	Canonical string
}

// Invalid reports whether the call is deliberately invalid.
func (c *Call) Invalid() bool { return strings.HasPrefix(c.Kind, KindInvalid) }

// Options configure Sample.
type Options struct {
	// N is how many distinct valid calls to write (toolenv mirror's
	// default is 200, the paper's calls per API).
	N int
	// Invalid is how many deliberately invalid calls to add.
	Invalid int
	// Seed seeds the generator (with the tool ID).
	Seed int64
	// Known returns values of a parameter known from elsewhere, in a
	// stable order; nil means none.
	Known func(param string) []any
	// Skip reports calls (canonical JSON) that exist already, so that a
	// second round adds only new ones; nil skips nothing. Skipped calls
	// do not count towards N.
	Skip func(canonical string) bool
	// MaxTries bounds the random combinations tried; default 20*N.
	MaxTries int
	// NoRandom stops after the documented, known and boundary calls (and
	// the invalid ones): the first round of a run that will learn more
	// values from the answers before it writes random combinations.
	NoRandom bool
}

// Sample writes the calls of t. It never fails: a schema it cannot read
// gives fewer calls.
func Sample(t *toolenv.Tool, opts Options) []Call {
	if opts.MaxTries <= 0 {
		opts.MaxTries = 20 * opts.N
	}
	s := newSampler(t, opts)
	if opts.N > 0 {
		s.valid()
	}
	if opts.Invalid > 0 {
		s.invalid(opts.Invalid)
	}
	return s.out
}

type param struct {
	name     string
	schema   *toolenv.Schema
	required bool
	// cands are the candidate values: documented first, then known,
	// then boundary values; kinds says which each is.
	cands []any
	kinds []string
}

type sampler struct {
	tool   *toolenv.Tool
	opts   Options
	rng    *rand.Rand
	params []*param
	words  []string
	seen   map[string]bool
	out    []Call
	nValid int
}

func newSampler(t *toolenv.Tool, opts Options) *sampler {
	h := fnv.New64a()
	h.Write([]byte(t.ID))
	s := &sampler{tool: t, opts: opts, rng: rand.New(rand.NewPCG(uint64(opts.Seed), h.Sum64())), seen: map[string]bool{}}
	s.words = docWords(t)
	if t.Input == nil {
		return s
	}
	for _, name := range t.Input.Names() {
		ps := t.Input.Prop(name)
		if ps == nil {
			continue
		}
		p := &param{name: name, schema: ps, required: t.Input.IsRequired(name)}
		have := map[string]bool{}
		add := func(v any, kind string) {
			if v == nil {
				return
			}
			v = normalize(v)
			c, err := toolenv.Canonical(v)
			if err != nil || have[string(c)] {
				return
			}
			have[string(c)] = true
			p.cands = append(p.cands, v)
			p.kinds = append(p.kinds, kind)
		}
		if ps.Const != nil {
			add(ps.Const, KindDocumented)
		}
		if ps.Default != nil {
			add(ps.Default, KindDocumented)
		}
		for _, e := range ps.Examples {
			add(e, KindDocumented)
		}
		if raw, ok := ps.Extra["example_value"]; ok {
			var v any
			if toolenv.DecodeJSON(raw, &v) == nil {
				if str, isStr := v.(string); !isStr || str != "" {
					add(coerce(v, ps), KindDocumented)
				}
			}
		}
		for _, e := range ps.Enum {
			add(e, KindDocumented)
		}
		for _, ex := range t.Examples {
			if v, ok := ex.Args[name]; ok {
				add(v, KindDocumented)
			}
		}
		if opts.Known != nil {
			for _, v := range opts.Known(name) {
				if v = coerce(v, ps); v != nil && fits(v, ps) {
					add(v, KindKnown)
				}
			}
		}
		for _, v := range boundaries(ps) {
			add(v, KindBoundary)
		}
		s.params = append(s.params, p)
	}
	return s
}

// emit records a call unless it was seen (or is to be skipped).
func (s *sampler) emit(args map[string]any, kind string) bool {
	canon, err := toolenv.Canonical(args)
	if err != nil {
		return false
	}
	c := string(canon)
	if s.seen[c] {
		return false
	}
	s.seen[c] = true
	if s.opts.Skip != nil && s.opts.Skip(c) {
		return false
	}
	s.out = append(s.out, Call{Args: args, Kind: kind, Canonical: c})
	return true
}

// value returns the i-th candidate of p, or a fresh typed value.
func (s *sampler) first(p *param) any {
	if len(p.cands) > 0 {
		return p.cands[0]
	}
	return s.typed(p.schema, 0)
}

// base is the documented call: the required parameters, each with its
// first candidate.
func (s *sampler) base() map[string]any {
	args := map[string]any{}
	for _, p := range s.params {
		if p.required {
			args[p.name] = s.first(p)
		}
	}
	return args
}

func (s *sampler) full() bool { return s.nValid >= s.opts.N }

func (s *sampler) valid() {
	try := func(args map[string]any, kind string) {
		if !s.full() && s.emit(args, kind) {
			s.nValid++
		}
	}
	base := s.base()
	try(base, KindDocumented)
	all := clone(base)
	for _, p := range s.params {
		all[p.name] = s.first(p)
	}
	try(all, KindDocumented)
	// One call per candidate value of each parameter, over the base
	// call: documented, known and boundary values, round-robin over
	// the parameters so that a long list of one does not crowd out
	// the others.
	for i := 1; !s.full(); i++ {
		more := false
		for _, p := range s.params {
			if i >= len(p.cands) {
				continue
			}
			more = true
			args := clone(base)
			args[p.name] = p.cands[i]
			try(args, p.kinds[i])
			if s.full() {
				return
			}
		}
		if !more {
			break
		}
	}
	if len(s.params) == 0 || s.opts.NoRandom {
		return
	}
	for tries := 0; !s.full() && tries < s.opts.MaxTries; tries++ {
		args := map[string]any{}
		for _, p := range s.params {
			if !p.required && s.rng.IntN(2) == 0 {
				continue
			}
			if len(p.cands) > 0 && s.rng.IntN(10) < 6 {
				args[p.name] = p.cands[s.rng.IntN(len(p.cands))]
			} else {
				args[p.name] = s.typed(p.schema, 1+tries)
			}
		}
		try(args, KindSampled)
	}
}

// invalid adds up to n deliberately invalid calls, varied over what is
// wrong with them.
func (s *sampler) invalid(n int) {
	base := s.base()
	var groups [][]Call // one group per kind, in a fixed order
	addTo := func(g int, args map[string]any, what string) {
		for len(groups) <= g {
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], Call{Args: args, Kind: KindInvalid + what})
	}
	for _, p := range s.params {
		if p.required {
			args := clone(base)
			delete(args, p.name)
			addTo(0, args, InvalidMissingRequired)
		}
		if v, ok := wrongType(p.schema); ok {
			args := clone(base)
			args[p.name] = v
			addTo(1, args, InvalidWrongType)
		}
		if len(p.schema.Enum) > 0 {
			args := clone(base)
			args[p.name] = notInEnum(p.schema.Enum)
			addTo(2, args, InvalidNotInEnum)
		}
		for _, v := range outOfRange(p.schema) {
			args := clone(base)
			args[p.name] = v
			addTo(3, args, InvalidOutOfRange)
		}
		if p.required && (p.schema.Type == "string" || p.schema.Type == "") {
			args := clone(base)
			args[p.name] = ""
			addTo(4, args, InvalidEmpty)
		}
	}
	if s.tool.Input == nil || s.tool.Input.Prop(UnknownParam) == nil {
		args := clone(base)
		args[UnknownParam] = "x"
		addTo(5, args, InvalidUnknownParam)
	}
	// Round-robin over the kinds, each group in a seeded order.
	for _, g := range groups {
		s.rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
	}
	added := 0
	for i := 0; added < n; i++ {
		progressed := false
		for _, g := range groups {
			if i >= len(g) {
				continue
			}
			progressed = true
			if s.emit(g[i].Args, g[i].Kind) {
				added++
				if added >= n {
					return
				}
			}
		}
		if !progressed {
			return
		}
	}
}

// typed makes a value of schema p; i varies it.
func (s *sampler) typed(p *toolenv.Schema, i int) any {
	return s.typedDepth(p, i, 0)
}

func (s *sampler) typedDepth(p *toolenv.Schema, i, depth int) any {
	if p == nil {
		return s.word()
	}
	if len(p.Enum) > 0 {
		return normalize(p.Enum[s.rng.IntN(len(p.Enum))])
	}
	if p.Const != nil {
		return normalize(p.Const)
	}
	if p.Type == "" {
		for _, alts := range [][]*toolenv.Schema{p.AnyOf, p.OneOf} {
			if len(alts) > 0 {
				return s.typedDepth(alts[s.rng.IntN(len(alts))], i, depth+1)
			}
		}
	}
	switch p.Type {
	case "integer":
		lo, hi := intRange(p)
		return json.Number(strconv.FormatInt(lo+s.rng.Int64N(hi-lo+1), 10))
	case "number":
		lo, hi := numRange(p)
		f := lo + s.rng.Float64()*(hi-lo)
		return json.Number(strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64))
	case "boolean":
		return s.rng.IntN(2) == 0
	case "array":
		if depth > 3 {
			return []any{}
		}
		lo, hi := 0, 3
		if p.MinItems != nil {
			lo = *p.MinItems
		}
		if p.MaxItems != nil && *p.MaxItems < hi {
			hi = *p.MaxItems
		}
		if hi < lo {
			hi = lo
		}
		n := lo + s.rng.IntN(hi-lo+1)
		out := make([]any, n)
		for k := range out {
			out[k] = s.typedDepth(p.Items, i+k, depth+1)
		}
		return out
	case "object":
		out := map[string]any{}
		if depth > 3 {
			return out
		}
		for _, name := range p.Names() {
			if p.IsRequired(name) || s.rng.IntN(2) == 0 {
				out[name] = s.typedDepth(p.Prop(name), i, depth+1)
			}
		}
		return out
	case "null":
		return nil
	}
	return s.str(p)
}

// str makes a string of schema p: a typical value of its format, else
// words of the documentation or a random token, within its lengths.
func (s *sampler) str(p *toolenv.Schema) string {
	var v string
	switch strings.ToLower(p.Format) {
	case "date":
		v = fmt.Sprintf("%04d-%02d-%02d", 2000+s.rng.IntN(26), 1+s.rng.IntN(12), 1+s.rng.IntN(28))
	case "date-time":
		v = fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:00Z", 2000+s.rng.IntN(26), 1+s.rng.IntN(12), 1+s.rng.IntN(28), s.rng.IntN(24), s.rng.IntN(60))
	case "time":
		v = fmt.Sprintf("%02d:%02d:00", s.rng.IntN(24), s.rng.IntN(60))
	case "email":
		v = fmt.Sprintf("%s%d@example.com", s.word(), s.rng.IntN(1000))
	case "uri", "url":
		v = fmt.Sprintf("https://example.com/%s/%d", s.word(), s.rng.IntN(1000))
	case "uuid":
		var b [16]byte
		for k := range b {
			b[k] = byte(s.rng.IntN(256))
		}
		v = fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	case "ipv4":
		v = fmt.Sprintf("%d.%d.%d.%d", 1+s.rng.IntN(223), s.rng.IntN(256), s.rng.IntN(256), 1+s.rng.IntN(254))
	default:
		switch s.rng.IntN(4) {
		case 0:
			v = s.word() + " " + s.word()
		case 1:
			v = strings.ToUpper(s.word()[:1]) + s.word()[1:]
		case 2:
			v = token(s.rng, 4+s.rng.IntN(8))
		default:
			v = s.word()
		}
	}
	if p.MinLength != nil {
		for len([]rune(v)) < *p.MinLength {
			v += "x"
		}
	}
	if p.MaxLength != nil {
		if r := []rune(v); len(r) > *p.MaxLength {
			v = string(r[:*p.MaxLength])
		}
	}
	return v
}

func (s *sampler) word() string {
	if len(s.words) == 0 {
		return token(s.rng, 6)
	}
	return s.words[s.rng.IntN(len(s.words))]
}

func token(rng *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

var wordRE = regexp.MustCompile(`[\p{L}]{4,}`)

// docWords are the distinct words (4+ letters, lower-cased) of the tool's
// documentation, in order of appearance: strings an API of this subject
// plausibly receives.
func docWords(t *toolenv.Tool) []string {
	text := t.Title + " " + t.Description + " " + t.GroupDescription
	if t.Input != nil {
		for _, name := range t.Input.Names() {
			if p := t.Input.Prop(name); p != nil {
				text += " " + p.Description
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range wordRE.FindAllString(text, -1) {
		w = strings.ToLower(w)
		if !seen[w] && !stopWords[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var stopWords = map[string]bool{"this": true, "that": true, "with": true, "from": true, "returns": true, "the": true, "rows": true, "where": true,
	"which": true, "when": true, "what": true, "their": true, "there": true, "these": true, "those": true, "value": true, "equals": true, "selected": true}

// intRange is the range typed integers are drawn from: the schema's
// bounds, else [0, 100] widened to include the one bound given.
func intRange(p *toolenv.Schema) (int64, int64) {
	lo, hi := int64(0), int64(100)
	if p.Minimum != nil {
		lo = int64(math.Ceil(*p.Minimum))
		if p.Maximum == nil {
			hi = lo + 100
		}
	}
	if p.Maximum != nil {
		hi = int64(math.Floor(*p.Maximum))
		if p.Minimum == nil && hi < 100 {
			lo = hi - 100
		}
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func numRange(p *toolenv.Schema) (float64, float64) {
	lo, hi := 0.0, 100.0
	if p.Minimum != nil {
		lo = *p.Minimum
		if p.Maximum == nil {
			hi = lo + 100
		}
	}
	if p.Maximum != nil {
		hi = *p.Maximum
		if p.Minimum == nil && hi < 100 {
			lo = hi - 100
		}
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// boundaries are the valid boundary values of a parameter.
func boundaries(p *toolenv.Schema) []any {
	var out []any
	switch p.Type {
	case "integer":
		if p.Minimum != nil {
			out = append(out, num(math.Ceil(*p.Minimum)))
		}
		if p.Maximum != nil {
			out = append(out, num(math.Floor(*p.Maximum)))
		}
		if p.Minimum == nil && p.Maximum == nil {
			out = append(out, num(0), num(1))
		}
	case "number":
		if p.Minimum != nil {
			out = append(out, num(*p.Minimum))
		}
		if p.Maximum != nil {
			out = append(out, num(*p.Maximum))
		}
		if p.Minimum == nil && p.Maximum == nil {
			out = append(out, num(0))
		}
	case "boolean":
		out = append(out, true, false)
	case "string":
		if len(p.Enum) == 0 && p.Format == "" {
			if p.MinLength != nil && *p.MinLength > 0 {
				out = append(out, strings.Repeat("a", *p.MinLength))
			}
			if p.MaxLength != nil && *p.MaxLength > 0 && *p.MaxLength <= 4096 {
				out = append(out, strings.Repeat("z", *p.MaxLength))
			}
		}
	case "array":
		if p.MinItems == nil || *p.MinItems == 0 {
			out = append(out, []any{})
		}
	}
	return out
}

// outOfRange are values just outside a parameter's bounds.
func outOfRange(p *toolenv.Schema) []any {
	var out []any
	switch p.Type {
	case "integer", "number":
		if p.Minimum != nil {
			out = append(out, num(*p.Minimum-1))
		}
		if p.Maximum != nil {
			out = append(out, num(*p.Maximum+1))
		}
	case "string":
		if p.MaxLength != nil && *p.MaxLength < 4096 {
			out = append(out, strings.Repeat("z", *p.MaxLength+1))
		}
		if p.MinLength != nil && *p.MinLength > 1 {
			out = append(out, strings.Repeat("a", *p.MinLength-1))
		}
	case "array":
		if p.MaxItems != nil && *p.MaxItems < 64 {
			items := make([]any, *p.MaxItems+1)
			for i := range items {
				items[i] = "x" + strconv.Itoa(i)
			}
			out = append(out, items)
		}
	}
	return out
}

// wrongType is a value of another type than p's.
func wrongType(p *toolenv.Schema) (any, bool) {
	switch p.Type {
	case "integer", "number":
		return "not a number", true
	case "boolean":
		return "maybe", true
	case "array":
		return "not a list", true
	case "object":
		return "not an object", true
	case "string":
		return []any{"a", "list"}, true
	}
	return nil, false
}

// notInEnum is a value of the enum's type that is not in it.
func notInEnum(enum []any) any {
	allNum := true
	for _, e := range enum {
		switch normalize(e).(type) {
		case json.Number:
		default:
			allNum = false
		}
	}
	if allNum {
		m := 0.0
		for _, e := range enum {
			if f, err := normalize(e).(json.Number).Float64(); err == nil && f > m {
				m = f
			}
		}
		return num(math.Floor(m) + 1)
	}
	v := "not_a_listed_value"
	for i := 0; ; i++ {
		clash := false
		for _, e := range enum {
			if s, ok := e.(string); ok && s == v {
				clash = true
			}
		}
		if !clash {
			return v
		}
		v += strconv.Itoa(i)
	}
}

// coerce converts a known value to the parameter's type where that is
// exact (a numeric string for an integer parameter, a number for a string
// one); nil when it cannot be.
func coerce(v any, p *toolenv.Schema) any {
	v = normalize(v)
	switch p.Type {
	case "integer":
		switch x := v.(type) {
		case json.Number:
			if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return x
			}
			if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return num(f)
			}
			return nil
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return json.Number(strconv.FormatInt(n, 10))
			}
			return nil
		}
		return nil
	case "number":
		switch x := v.(type) {
		case json.Number:
			return x
		case string:
			if toolenv.IsJSONNumber(strings.TrimSpace(x)) {
				return json.Number(strings.TrimSpace(x))
			}
		}
		return nil
	case "string":
		switch x := v.(type) {
		case string:
			return x
		case json.Number:
			return string(x)
		case bool:
			return strconv.FormatBool(x)
		}
		return nil
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		return nil
	}
	return v
}

// fits reports whether v obeys p's enum and bounds.
func fits(v any, p *toolenv.Schema) bool {
	if len(p.Enum) > 0 {
		ok := false
		for _, e := range p.Enum {
			if equal(normalize(e), v) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	if n, isNum := v.(json.Number); isNum {
		f, err := n.Float64()
		if err != nil || (p.Minimum != nil && f < *p.Minimum) || (p.Maximum != nil && f > *p.Maximum) {
			return false
		}
	}
	if str, isStr := v.(string); isStr {
		n := len([]rune(str))
		if (p.MinLength != nil && n < *p.MinLength) || (p.MaxLength != nil && n > *p.MaxLength) {
			return false
		}
	}
	return true
}

func num(f float64) json.Number {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// normalize turns Go numbers into json.Number, as decoded arguments hold
// them.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return json.Number(strconv.Itoa(x))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case float64:
		return num(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

func equal(a, b any) bool {
	ca, err1 := toolenv.Canonical(a)
	cb, err2 := toolenv.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
