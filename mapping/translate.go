package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// ErrUntranslatable is wrapped by Translate's errors: the call cannot be
// expressed for the other tool (a required argument has no counterpart,
// or the call does not meet the mapping's When).
var ErrUntranslatable = errors.New("call cannot be translated")

// Translation is a call translated for another tool.
type Translation struct {
	// Args are the arguments for the target tool.
	Args map[string]any
	// Notes say what was done, one line each ("city → location.city",
	// "days: \"3\" → 3", "dropped lang: no counterpart").
	Notes []string
}

// Translate turns args written for m.From into arguments for to (the
// tool m.To): paired arguments move to their new paths, arguments with
// the same path in to's schema stay, Fixed values are set, values are
// converted to the target's types where nothing is lost, and missing
// required arguments get the target's documented default. Arguments with
// no counterpart are dropped and noted. It fails, wrapping
// ErrUntranslatable, when args do not meet m.When or a required argument
// of to has neither a value nor a default.
func Translate(m *Mapping, args map[string]any, to *toolenv.Tool) (*Translation, error) {
	return TranslateFrom(m, args, nil, to)
}

// TranslateFrom is Translate knowing the source tool's documentation
// too: an argument the call leaves out meant the source's documented
// default, so a paired argument whose default differs in the target (or
// that the target now requires) is given the source's default explicitly.
func TranslateFrom(m *Mapping, args map[string]any, from, to *toolenv.Tool) (*Translation, error) {
	tr := &Translation{Args: map[string]any{}}
	if from != nil {
		args = withDefaults(m, args, from, to)
	}
	for k, want := range m.When {
		got, ok := GetPath(args, k)
		if !ok || !sameValue(got, want) {
			return nil, fmt.Errorf("%w: %s → %s holds only when %s is %v", ErrUntranslatable, m.From, m.To, k, want)
		}
	}
	consumed := map[string]bool{}
	pairs := append([]FieldPair(nil), m.Inputs...)
	// Longer paths first, so that a leaf pair wins over its parent's.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].From) > len(pairs[j].From) })
	for _, p := range pairs {
		if covered(consumed, p.From) {
			continue
		}
		v, ok := GetPath(args, p.From)
		if !ok {
			continue
		}
		SetPath(tr.Args, p.To, v)
		consumed[p.From] = true
		if p.From != p.To {
			tr.Notes = append(tr.Notes, p.From+" → "+p.To)
		}
	}
	var in *toolenv.Schema
	if to != nil {
		in = to.Input
	}
	for _, path := range argPaths(args) {
		if covered(consumed, path) {
			continue
		}
		if _, isCond := m.When[path]; isCond {
			continue
		}
		v, _ := GetPath(args, path)
		if in == nil || schemaAt(in, path) != nil {
			if _, set := GetPath(tr.Args, path); !set {
				SetPath(tr.Args, path, v)
			}
			continue
		}
		tr.Notes = append(tr.Notes, "dropped "+path+": "+m.To+" has no counterpart")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Fixed)) {
		SetPath(tr.Args, k, m.Fixed[k])
		tr.Notes = append(tr.Notes, fmt.Sprintf("set %s = %v", k, m.Fixed[k]))
	}
	if in == nil {
		return tr, nil
	}
	coerceAll(in, tr.Args, "", tr)
	var missing []string
	for _, name := range in.Required {
		if _, ok := tr.Args[name]; ok {
			continue
		}
		if d := in.Prop(name); d != nil && d.Default != nil {
			tr.Args[name] = d.Default
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s: the default %v", name, d.Default))
			continue
		}
		missing = append(missing, name)
	}
	if len(missing) > 0 {
		return tr, fmt.Errorf("%w: %s needs %s, which the call to %s does not give", ErrUntranslatable, m.To, strings.Join(missing, ", "), m.From)
	}
	return tr, nil
}

// withDefaults returns args with the source's documented defaults of the
// paired arguments the call leaves out, where the target would not mean
// the same by leaving them out.
func withDefaults(m *Mapping, args map[string]any, from, to *toolenv.Tool) map[string]any {
	var out map[string]any
	for _, p := range m.Inputs {
		if _, given := GetPath(args, p.From); given {
			continue
		}
		fs := schemaAt(from.Input, p.From)
		if fs == nil || fs.Default == nil {
			continue
		}
		if to != nil {
			if ts := schemaAt(to.Input, p.To); ts != nil && ts.Default != nil && sameValue(ts.Default, fs.Default) {
				continue
			}
		}
		if out == nil {
			out = make(map[string]any, len(args)+1)
			for k, v := range args {
				out[k] = v
			}
		}
		SetPath(out, p.From, fs.Default)
	}
	if out == nil {
		return args
	}
	return out
}

// covered reports whether path or one of its parents was consumed.
func covered(consumed map[string]bool, path string) bool {
	for p := path; ; {
		if consumed[p] {
			return true
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// argPaths lists the paths of args' values: its keys, and the keys inside
// nested objects (a nested object whose keys are all listed is not).
func argPaths(args map[string]any) []string {
	var out []string
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
				walk(sub, p)
				continue
			}
			out = append(out, p)
		}
	}
	walk(args, "")
	return out
}

// schemaAt returns the schema of the property at path, or nil.
func schemaAt(s *toolenv.Schema, path string) *toolenv.Schema {
	for _, k := range strings.Split(path, ".") {
		if s == nil {
			return nil
		}
		s = s.Prop(k)
	}
	return s
}

// coerceAll converts the values of args to the types s declares, where
// nothing is lost, noting each change.
func coerceAll(s *toolenv.Schema, args map[string]any, prefix string, tr *Translation) {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		ps := s.Prop(k)
		if ps == nil {
			continue
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := args[k].(map[string]any); ok {
			coerceAll(ps, sub, path, tr)
			continue
		}
		v, changed := Coerce(args[k], ps.Type)
		if e, ok := enumCase(v, ps.Enum); ok {
			v, changed = e, true
		}
		if changed {
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s: %s → %s", path, short(args[k]), short(v)))
			args[k] = v
		}
	}
}

// Coerce converts v to the JSON Schema type typ when that loses nothing:
// "3" ↔ 3, "true" ↔ true, 2.0 → 2 for integers, a single value → a
// one-item array. It returns v unchanged (and false) otherwise.
func Coerce(v any, typ string) (any, bool) {
	switch typ {
	case "integer", "number":
		switch x := v.(type) {
		case string:
			s := strings.TrimSpace(x)
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return v, false
			}
			if typ == "integer" && f != math.Trunc(f) {
				return v, false
			}
			return json.Number(s), true
		case float64:
			if typ == "integer" && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(x), 10)), true
			}
		case bool:
			return v, false
		}
	case "string":
		switch x := v.(type) {
		case json.Number:
			return x.String(), true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		case int:
			return strconv.Itoa(x), true
		case bool:
			return strconv.FormatBool(x), true
		}
	case "boolean":
		if s, ok := v.(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
	case "array":
		switch v.(type) {
		case []any, nil, map[string]any:
			return v, false
		}
		return []any{v}, true
	}
	return v, false
}

// enumCase returns the one enum value that equals v but for case, when v
// itself is not in the enum (enum values whose case changed).
func enumCase(v any, enum []any) (any, bool) {
	s, ok := v.(string)
	if !ok || len(enum) == 0 {
		return v, false
	}
	var match any
	n := 0
	for _, e := range enum {
		es, ok := e.(string)
		if !ok {
			continue
		}
		if es == s {
			return v, false
		}
		if strings.EqualFold(es, s) {
			match, n = e, n+1
		}
	}
	return match, n == 1
}

func short(v any) string {
	b, err := toolenv.MarshalJSONNoHTML(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// sameValue compares two JSON values by their canonical form, so 3 and
// 3.0 and json.Number("3") agree.
func sameValue(a, b any) bool {
	ca, err1 := toolenv.Canonical(a)
	cb, err2 := toolenv.Canonical(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// TranslateResponse rewrites body, a response of m.To, into the shape
// callers of m.From expect: every field named by an output pair gets its
// From path (a pair on an object renames everything under it); other
// fields keep theirs. A body that is not a JSON object or array (plain
// text) is returned unchanged.
func TranslateResponse(m *Mapping, body json.RawMessage) (json.RawMessage, bool, error) {
	t := bytes.TrimSpace(body)
	if len(m.Outputs) == 0 || len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return body, false, nil
	}
	var v any
	if err := toolenv.DecodeJSON(t, &v); err != nil {
		return body, false, fmt.Errorf("translate response of %s: %w", m.To, err)
	}
	// to → from, longest target path first.
	rev := append([]FieldPair(nil), m.Outputs...)
	sort.SliceStable(rev, func(i, j int) bool { return len(rev[i].To) > len(rev[j].To) })
	ls := leaves(v, nil)
	changed := false
	for i, l := range ls {
		g := genericPath(l.segs)
		for _, p := range rev {
			rest, ok := cutPathPrefix(g, p.To)
			if !ok {
				continue
			}
			if nl, ok := retarget(l.segs, p.From+rest); ok {
				ls[i].segs = nl
				changed = changed || p.From != p.To
			}
			break
		}
	}
	if !changed {
		return body, false, nil
	}
	out, err := toolenv.MarshalJSONNoHTML(rebuild(ls))
	if err != nil {
		return body, false, fmt.Errorf("translate response of %s: %w", m.To, err)
	}
	return out, true, nil
}

// cutPathPrefix reports whether prefix is path or a parent of it and
// returns what follows it ("" or ".x", "[].x").
func cutPathPrefix(path, prefix string) (string, bool) {
	if path == prefix {
		return "", true
	}
	if strings.HasPrefix(path, prefix) {
		rest := path[len(prefix):]
		if rest[0] == '.' || rest[0] == '[' {
			return rest, true
		}
	}
	return "", false
}

// retarget builds the concrete segments of generic path g, taking the
// array indexes from old in order. It fails when g has more arrays than
// old.
func retarget(old []seg, g string) ([]seg, bool) {
	var idx []int
	for _, s := range old {
		if s.isIdx {
			idx = append(idx, s.index)
		}
	}
	ns := parseGeneric(g)
	k := 0
	for i := range ns {
		if ns[i].isIdx {
			if k >= len(idx) {
				return nil, false
			}
			ns[i].index = idx[k]
			k++
		}
	}
	return ns, true
}
