package structural

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/terms"
)

// Side says whether a field is an argument or a response field.
type Side string

// The sides of a field.
const (
	Input  Side = "input"
	Output Side = "output"
)

// Limits on what a profile keeps, so that one huge response template
// cannot dominate the work.
const (
	maxFields      = 200
	maxDepth       = 8
	maxValues      = 64
	maxValueLength = 200
)

// Field is one comparable field of a tool: an argument or a response
// field, by path.
type Field struct {
	Path        string `json:"path"`
	Side        Side   `json:"side"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// Position is the field's place among its side's fields, in [0, 1].
	Position float64 `json:"position"`
	// Values are documented and observed values (canonical, lower-case
	// strings), at most 64.
	Values map[string]bool `json:"-"`
	// Enum is the field's enum, as strings.
	Enum []string `json:"enum,omitempty"`

	idf    float64            // rarity of the field's name among the matcher's tools
	opaque bool               // the name is a generated one (ARG_7): no name signal
	last   []string           // normalised words of the last path segment
	full   []string           // normalised words of the whole path
	tri    terms.TrigramCodes // trigrams of the last path segment
	desc   tfidf
	// Made once when the field is profiled (see words), as a field is
	// compared with many: its last path segment and the sets of last and
	// full, as sorted lists without repeats (compared by merging, not by
	// looking words up in maps).
	seg              string
	lastSet, fullSet []wordKey
	lastKeys         []wordKey // last as word keys, in order, repeats kept
	descTrim         string    // Description without surrounding space
	descASCII        bool      // descTrim is ASCII
	profiled         bool
}

// trimmedDescription returns f's description without surrounding space,
// and whether it is ASCII: made when the field was profiled, or now.
func (f *Field) trimmedDescription() (string, bool) {
	if f.profiled {
		return f.descTrim, f.descASCII
	}
	d := strings.TrimSpace(f.Description)
	return d, isASCII(d)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// words returns f's last path segment and the sets of its words: made
// when the field was profiled, or now for a field made otherwise.
func (f *Field) words() (seg string, last, full []wordKey) {
	if f.profiled {
		return f.seg, f.lastSet, f.fullSet
	}
	return lastSegment(f.Path), wordSet(f.last), wordSet(f.full)
}

// lastWords returns f.last as word keys: made when the field was
// profiled, or now.
func (f *Field) lastWords() []wordKey {
	if f.profiled {
		return f.lastKeys
	}
	return wordKeys(f.last)
}

// wordKeys returns ws as word keys, in order.
func wordKeys(ws []string) []wordKey {
	s := make([]wordKey, len(ws))
	for i, w := range ws {
		s[i] = newWordKey(w)
	}
	return s
}

// wordKey is a word with its hash: word sets are sorted by hash, then
// word, so that comparing two of them compares numbers, and words only
// when their hashes are equal (the same word, but for a collision, which
// the word comparison settles: the result is exact).
type wordKey struct {
	h uint64
	w string
}

// compareWords orders word keys by hash, then word.
func compareWords(a, b wordKey) int {
	switch {
	case a.h < b.h:
		return -1
	case a.h > b.h:
		return 1
	}
	return strings.Compare(a.w, b.w)
}

// newWordKey returns w with its FNV-1a hash.
func newWordKey(w string) wordKey {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= 1099511628211
	}
	return wordKey{h, w}
}

// wordSet is the set of words ws: sorted (compareWords), each once.
func wordSet(ws []string) []wordKey {
	s := wordKeys(ws)
	slices.SortFunc(s, compareWords)
	return slices.Compact(s)
}

// weight is the field's IDF weight, 1 when unknown.
func (f *Field) weight() float64 {
	if f.idf <= 0 {
		return 1
	}
	return f.idf
}

// key is the field's normalised name with its side, for field IDF.
func (f *Field) key() string { return string(f.Side) + ":" + strings.Join(f.full, " ") }

// Profile is what the structural mapper knows of a tool.
type Profile struct {
	Tool    *toolenv.Tool
	Inputs  []*Field
	Outputs []*Field

	name []string
	// opaque says the tool's name is a generated one (FUNC_12): it is
	// no evidence either way.
	opaque bool
	// descText is what the tool's documentation says in prose: its
	// description and its response's, without mentions of the tool's own
	// name and arguments (see withoutMentions); descWords are its
	// normalised words in order.
	descText  string
	descWords []string
	// asWritten is the prose with the mentions kept, when they were
	// removed: two tools that name their arguments alike share those
	// words (see textSimilarity).
	asWritten *prosePart
	// stripped is descText, descWords and desc made ready for
	// proseSimilarity (New).
	stripped *prosePart
	// nameText and namePairs are name joined with spaces and the set of
	// its bigrams (New).
	nameText  string
	namePairs map[string]bool
	words     tfidf // TF-IDF vector of the whole tool (name, description, fields)
	desc      tfidf // TF-IDF vector of the description
	// domain is the TF-IDF vector of the API's category and description.
	domain tfidf
}

// Evidence is what was observed of a tool beyond its documentation:
// calls and their responses (cache entries, recorded traffic).
type Evidence struct {
	Args      []map[string]any
	Responses []json.RawMessage
}

// NewProfile reads the fields of t from its input and output schemas, its
// output example (ToolBench's template_response, whose "str"/"int"/...
// values name types), its documented examples and the evidence ev (which
// may be nil).
func NewProfile(t *toolenv.Tool, ev *Evidence) *Profile {
	p := &Profile{Tool: t}
	in := map[string]*Field{}
	var inOrder []string
	addSchema(t.Input, "", false, Input, in, &inOrder, nil)
	out := map[string]*Field{}
	var outOrder []string
	addSchema(t.Output, "", false, Output, out, &outOrder, nil)
	if len(t.OutputExample) > 0 {
		if v, err := decodeOrdered(t.OutputExample); err == nil {
			addValue(v, "", Output, out, &outOrder, true, 0)
		}
	}
	for _, ex := range t.Examples {
		addArgValues(ex.Args, in)
		if v, err := decodeOrdered(ex.Response); err == nil {
			addValue(v, "", Output, out, &outOrder, false, 0)
		}
	}
	if ev != nil {
		for _, a := range ev.Args {
			addArgValues(a, in)
		}
		for _, r := range ev.Responses {
			if v, err := decodeOrdered(r); err == nil {
				addValue(unwrapText(v), "", Output, out, &outOrder, false, 0)
			}
		}
	}
	p.Inputs = ordered(in, inOrder)
	p.Outputs = ordered(out, outOrder)
	p.name = ToolWords(t)
	p.descText = prose(t)
	return p
}

// prosePart is a tool's prose (as written, or without the mentions of
// its arguments): its text, words and TF-IDF vector, and what
// proseSimilarity reads of them, made once (see prepare).
type prosePart struct {
	text  string
	words []string
	vec   tfidf

	prepared bool
	trimmed  string          // text without surrounding space
	pairs    map[string]bool // the bigrams of words
	neg      int             // negations(text)
}

// prepare makes what proseSimilarity reads of pp, once.
func (pp *prosePart) prepare() *prosePart {
	if !pp.prepared {
		pp.trimmed, pp.pairs, pp.neg, pp.prepared = strings.TrimSpace(pp.text), wordMap(bigrams(pp.words)), negations(pp.text), true
	}
	return pp
}

// prose returns a tool's description followed by its response's (what
// the answer holds: the columns of a query, say).
func prose(t *toolenv.Tool) string {
	if t.Output != nil && t.Output.Description != "" {
		return t.Description + "\n" + t.Output.Description
	}
	return t.Description
}

// ToolWords returns the normalised words of a tool's name: its title when
// it has one (ToolBench's API name), else its name without ToolBench's
// "_for_<tool>" suffix.
func ToolWords(t *toolenv.Tool) []string {
	if t.Title != "" {
		return terms.Name(t.Title)
	}
	name := t.Name
	if i := strings.LastIndex(name, "_for_"); i > 0 {
		name = name[:i]
	}
	return terms.Name(name)
}

func ordered(m map[string]*Field, order []string) []*Field {
	out := make([]*Field, 0, len(order))
	for i, path := range order {
		f := m[path]
		if len(order) > 1 {
			f.Position = float64(i) / float64(len(order)-1)
		}
		segs := strings.Split(strings.ReplaceAll(path, "[]", ""), ".")
		f.last = terms.Name(segs[len(segs)-1])
		f.full = terms.Name(strings.Join(segs, " "))
		f.tri = terms.NewTrigramCodes(segs[len(segs)-1])
		f.descTrim = strings.TrimSpace(f.Description)
		f.descASCII = isASCII(f.descTrim)
		f.seg, f.lastSet, f.fullSet, f.lastKeys, f.profiled = segs[len(segs)-1], wordSet(f.last), wordSet(f.full), wordKeys(f.last), true
		if len(f.Values) == 0 {
			f.Values = nil
		}
		out = append(out, f)
	}
	return out
}

// addSchema adds the leaves of schema s under prefix.
func addSchema(s *toolenv.Schema, prefix string, required bool, side Side, m map[string]*Field, order *[]string, parents []string) {
	if s == nil || len(*order) >= maxFields || len(parents) > maxDepth {
		return
	}
	if s.Type == "array" && s.Items != nil && len(s.Items.Properties) > 0 {
		addSchema(s.Items, prefix+"[]", required, side, m, order, append(parents, s.Description))
		return
	}
	if len(s.Properties) > 0 {
		for _, name := range s.Names() {
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			addSchema(s.Properties[name], path, s.IsRequired(name), side, m, order, append(parents, s.Description))
		}
		return
	}
	if prefix == "" {
		return
	}
	f := field(m, order, prefix, side)
	if f == nil {
		return
	}
	if f.Type == "" {
		f.Type = s.Type
	}
	if f.Description == "" {
		f.Description = s.Description
		if f.Description == "" {
			// A nested leaf with no description of its own borrows its
			// parent's.
			for i := len(parents) - 1; i >= 0 && f.Description == ""; i-- {
				f.Description = parents[i]
			}
		}
	}
	f.Required = f.Required || required
	for _, e := range s.Enum {
		f.Enum = append(f.Enum, valueString(e))
		addValueTo(f, e)
	}
	if s.Default != nil {
		addValueTo(f, s.Default)
	}
	for _, e := range s.Examples {
		addValueTo(f, e)
	}
	if raw, ok := s.Extra["example_value"]; ok {
		var v any
		if toolenv.DecodeJSON(raw, &v) == nil {
			addValueTo(f, v)
		}
	}
}

// field returns the field at path, creating it (nil when the profile is
// full).
func field(m map[string]*Field, order *[]string, path string, side Side) *Field {
	if f, ok := m[path]; ok {
		return f
	}
	if len(*order) >= maxFields {
		return nil
	}
	f := &Field{Path: path, Side: side, Values: map[string]bool{}}
	m[path] = f
	*order = append(*order, path)
	return f
}

// decodeOrdered decodes JSON keeping the order of object members (the
// order a response template documents its fields in is a signal): a
// repeated key stays where it first stood, with its last value.
func decodeOrdered(data []byte) (any, error) {
	return pyfmt.OrderedDecoder{MaxDepth: 64, Unique: true}.Decode(data)
}

// templateTypes are the type names ToolBench writes as template_response
// values.
var templateTypes = map[string]string{
	"str": "string", "int": "integer", "float": "number", "bool": "boolean", "NoneType": "null",
	"empty list": "array", "list": "array", "dict": "object", "empty dict": "object",
}

// addValue adds the leaves of a JSON value (as decodeOrdered returns
// it) under prefix. In a template, string values that name types give the
// field's type rather than a value.
func addValue(v any, prefix string, side Side, m map[string]*Field, order *[]string, template bool, depth int) {
	if depth > maxDepth {
		return
	}
	switch x := v.(type) {
	case pyfmt.Dict:
		for _, it := range x {
			path := it.Key
			if prefix != "" {
				path = prefix + "." + it.Key
			}
			addValue(it.Value, path, side, m, order, template, depth+1)
		}
		return
	case []any:
		for i, e := range x {
			if i >= 5 {
				break
			}
			if _, isObj := e.(pyfmt.Dict); isObj {
				addValue(e, prefix+"[]", side, m, order, template, depth+1)
				continue
			}
			if prefix != "" {
				if f := field(m, order, prefix, side); f != nil {
					setType(f, "array")
					if !template {
						addValueTo(f, e)
					}
				}
			}
		}
		if len(x) == 0 && prefix != "" {
			if f := field(m, order, prefix, side); f != nil {
				setType(f, "array")
			}
		}
		return
	}
	if prefix == "" {
		return
	}
	f := field(m, order, prefix, side)
	if f == nil {
		return
	}
	if s, ok := v.(string); ok && template {
		if typ, isType := templateTypes[s]; isType {
			setType(f, typ)
			return
		}
	}
	setType(f, jsonType(v))
	addValueTo(f, v)
}

func setType(f *Field, typ string) {
	if f.Type == "" && typ != "" && typ != "null" {
		f.Type = typ
	}
}

func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		return "number"
	case []any:
		return "array"
	case pyfmt.Dict:
		return "object"
	}
	return ""
}

// addArgValues adds the values of a call's arguments to the input fields
// they name.
func addArgValues(args map[string]any, in map[string]*Field) {
	for path, f := range in {
		if strings.Contains(path, "[]") {
			continue
		}
		if v, ok := mapping.GetPath(args, path); ok {
			addValueTo(f, v)
		}
	}
}

func addValueTo(f *Field, v any) {
	if f.Values == nil {
		f.Values = map[string]bool{}
	}
	if len(f.Values) >= maxValues {
		return
	}
	switch v.(type) {
	case pyfmt.Dict, map[string]any, []any, nil:
		return
	}
	s := valueString(v)
	if s == "" || len(s) > maxValueLength {
		return
	}
	f.Values[s] = true
}

// valueString is the comparable form of a scalar: canonical JSON without
// quotes, lower-cased and trimmed.
func valueString(v any) string {
	if s, ok := v.(string); ok {
		return strings.ToLower(strings.TrimSpace(s))
	}
	b, err := toolenv.Canonical(v)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.Trim(string(b), `"`))
}

// unwrapText unwraps the common envelope of recorded ToolBench answers
// ({"error": "", "response": "<JSON text>"}) so the response's own fields
// are profiled.
func unwrapText(v any) any {
	o, ok := v.(pyfmt.Dict)
	if !ok || len(o) > 2 {
		return v
	}
	r, _ := o.Get("response")
	s, ok := r.(string)
	if !ok {
		return v
	}
	if inner, err := decodeOrdered([]byte(s)); err == nil {
		return inner
	}
	return v
}

// wordMap is the set of words ws, for lookups.
func wordMap(ws []string) map[string]bool {
	s := make(map[string]bool, len(ws))
	for _, w := range ws {
		s[w] = true
	}
	return s
}
