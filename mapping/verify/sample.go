package verify

import (
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

// Limits on what the sampler keeps, so that one huge answer cannot
// dominate its memory or its choices.
const (
	maxPerKey    = 64   // distinct values kept per field or column name
	maxPerType   = 1024 // distinct values kept per JSON type
	maxValueLen  = 200  // longest string value kept
	maxWalkDepth = 8    // deepest level of an answer read
	maxWalkItems = 200  // items of one list read
)

// sampler draws arguments for probe calls from what tools document and
// what the API answered.
type sampler struct {
	seed   uint64
	byKey  map[string]*values // lower-case field or column name → values
	byType map[string]*values // "string", "integer", "number", "boolean"
}

// values is an insertion-ordered set of scalars.
type values struct {
	list []any
	seen map[string]bool
}

func (v *values) add(x any, limit int) bool {
	if len(v.list) >= limit {
		return false
	}
	k := scalarKey(x)
	if v.seen[k] {
		return false
	}
	v.seen[k] = true
	v.list = append(v.list, x)
	return true
}

func newSampler(seed uint64) *sampler {
	return &sampler{seed: seed, byKey: map[string]*values{}, byType: map[string]*values{}}
}

// size is how many distinct values the sampler holds.
func (s *sampler) size() int {
	n := 0
	for _, v := range s.byType {
		n += len(v.list)
	}
	return n
}

// harvest keeps the scalars of an answer by the field or result column
// they came in.
func (s *sampler) harvest(body json.RawMessage) {
	var v any
	if len(body) == 0 || toolenv.DecodeJSON(body, &v) != nil {
		return
	}
	s.walk(v, "", 0)
}

func (s *sampler) walk(v any, key string, depth int) {
	if depth > maxWalkDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		names, rows, nk, rk := tabular(x)
		for _, row := range rows {
			for i, cell := range row {
				s.add(names[i], cell)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			if rows == nil || (k != nk && k != rk) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			s.walk(x[k], k, depth+1)
		}
	case []any:
		for i, e := range x {
			if i >= maxWalkItems {
				break
			}
			s.walk(e, key, depth+1)
		}
	default:
		s.add(key, x)
	}
}

// tabular finds a table in an object: a list of names and a list of rows
// (lists of as many values), as query APIs answer ({"columns": [...],
// "rows": [[...], ...]}). It returns the names, the rows and the two
// keys, or nil rows.
func tabular(o map[string]any) (names []string, rows [][]any, namesKey, rowsKey string) {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l, ok := o[k].([]any)
		if !ok || len(l) == 0 {
			continue
		}
		ns := make([]string, 0, len(l))
		for _, e := range l {
			if s, ok := e.(string); ok {
				ns = append(ns, s)
			}
		}
		if len(ns) != len(l) {
			continue
		}
		for _, k2 := range keys {
			rl, ok := o[k2].([]any)
			if !ok || k2 == k || len(rl) == 0 {
				continue
			}
			var rs [][]any
			for i, r := range rl {
				if i >= maxWalkItems {
					break
				}
				row, ok := r.([]any)
				if !ok || len(row) != len(ns) {
					rs = nil
					break
				}
				rs = append(rs, row)
			}
			if rs != nil {
				return ns, rs, k, k2
			}
		}
	}
	return nil, nil, "", ""
}

// add keeps one scalar under key and its type.
func (s *sampler) add(key string, x any) {
	typ := scalarType(x)
	if typ == "" {
		return
	}
	if str, ok := x.(string); ok && (str == "" || len(str) > maxValueLen) {
		return
	}
	if key != "" {
		k := strings.ToLower(key)
		if s.byKey[k] == nil {
			s.byKey[k] = &values{seen: map[string]bool{}}
		}
		s.byKey[k].add(x, maxPerKey)
	}
	if s.byType[typ] == nil {
		s.byType[typ] = &values{seen: map[string]bool{}}
	}
	s.byType[typ].add(x, maxPerType)
}

// scalarType is the JSON type of a scalar, "" for anything else.
func scalarType(x any) string {
	switch v := x.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		return "number"
	}
	return ""
}

func scalarKey(x any) string {
	b, err := toolenv.Canonical(x)
	if err != nil {
		return ""
	}
	return string(b)
}

// qualified finds the columns a description names as table.column, and
// its backticked identifiers.
var qualified = regexp.MustCompile("[\\p{L}_][\\p{L}\\p{N}_]*\\.([\\p{L}_][\\p{L}\\p{N}_]*)|`([\\p{L}_][\\p{L}\\p{N}_]*)`")

// synthetic values by type, for arguments nothing else fills.
var synthetic = map[string][]any{
	"integer": {json.Number("1"), json.Number("0"), json.Number("2"), json.Number("10"), json.Number("100"), json.Number("1000"), json.Number("5")},
	"number":  {json.Number("1.5"), json.Number("0"), json.Number("10"), json.Number("100.5")},
	"string":  {"a", "1", "test", "2020-01-01"},
	"boolean": {true, false},
}

// args draws up to n distinct sets of arguments for tool: its required
// arguments, each from (in turn) its documented values, the values the
// API answered under the argument's name or the columns its description
// names, values of its type, and synthetic ones. A tool with no required
// arguments gets one empty set. It returns nil when a required argument
// cannot be given a value (an object no example shows).
func (s *sampler) args(tool *toolenv.Tool, n int) []map[string]any {
	h := fnv.New64a()
	h.Write([]byte(tool.ID))
	r := rand.New(rand.NewPCG(s.seed, h.Sum64()))
	var required []string
	if tool.Input != nil {
		for _, name := range tool.Input.Names() {
			if tool.Input.IsRequired(name) {
				required = append(required, name)
			}
		}
	}
	if len(required) == 0 {
		return []map[string]any{{}}
	}
	var out []map[string]any
	seen := map[string]bool{}
	used := map[string]map[string]bool{} // argument → values given
	for _, name := range required {
		used[name] = map[string]bool{}
	}
	for draw := 0; len(out) < n && draw < 4*n; draw++ {
		args := map[string]any{}
		for _, name := range required {
			v, ok := s.value(r, tool.Input.Properties[name], name, draw, used[name])
			if !ok {
				return out
			}
			args[name] = v
			used[name][scalarKey(v)] = true
		}
		k := scalarKey(args)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, args)
	}
	return out
}

// value draws one value for an argument: from the first tier (in the
// order documented, answered under its name or columns, of its type,
// synthetic) that has a value not given yet, else any value of the first
// tier that has one.
func (s *sampler) value(r *rand.Rand, ps *toolenv.Schema, name string, draw int, used map[string]bool) (any, bool) {
	if ps == nil {
		return nil, false
	}
	typ := ps.Type
	var documented []any
	documented = append(documented, ps.Enum...)
	if ps.Const != nil {
		documented = append(documented, ps.Const)
	}
	if ps.Default != nil {
		documented = append(documented, ps.Default)
	}
	documented = append(documented, ps.Examples...)
	if raw, ok := ps.Extra["example_value"]; ok {
		var v any
		if toolenv.DecodeJSON(raw, &v) == nil && v != nil {
			documented = append(documented, v)
		}
	}
	if typ == "object" || typ == "array" {
		if len(documented) == 0 {
			return nil, false
		}
		return documented[r.IntN(len(documented))], true
	}
	var keyed []any
	keys := []string{strings.ToLower(name)}
	for _, m := range qualified.FindAllStringSubmatch(ps.Description, -1) {
		for _, g := range m[1:] {
			if g != "" {
				keys = append(keys, strings.ToLower(g))
			}
		}
	}
	for _, k := range keys {
		if v := s.byKey[k]; v != nil {
			keyed = append(keyed, v.list...)
		}
	}
	var typed []any
	if v := s.byType[typ]; v != nil {
		typed = v.list
	}
	if typ == "number" {
		if v := s.byType["integer"]; v != nil {
			typed = append(append([]any(nil), typed...), v.list...)
		}
	}
	tiers := [][]any{keyed, documented, typed, synthetic[typ]}
	if draw%4 == 0 && len(documented) > 0 {
		tiers = [][]any{documented, keyed, typed, synthetic[typ]}
	}
	var fallback any
	found := false
	for _, tier := range tiers {
		// In a random order: the first value that fits the type and was
		// not given yet.
		for _, i := range r.Perm(len(tier)) {
			v, ok := fit(tier[i], typ)
			if !ok {
				continue
			}
			if !used[scalarKey(v)] {
				return v, true
			}
			if !found {
				fallback, found = v, true
			}
		}
	}
	if found {
		return fallback, true
	}
	if typ == "" {
		return "a", true
	}
	return nil, false
}

// fit converts v to typ where nothing is lost, and reports whether the
// result has that type.
func fit(v any, typ string) (any, bool) {
	if typ == "" {
		return v, true
	}
	if c, changed := mapping.Coerce(v, typ); changed {
		v = c
	}
	got := scalarType(v)
	return v, got == typ || (typ == "number" && got == "integer")
}
