package mirror

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	toolenv "github.com/toolenv/toolenv"
)

// Bounds of the known values kept, so that memory does not grow with the
// dataset.
const (
	knownPerKey  = 1000   // distinct values per parameter name
	knownMaxKeys = 20000  // parameter names
	knownMaxText = 200    // longest string value kept, in bytes
	harvestPairs = 200000 // responses read at most
)

// knownValues are argument values known from outside the documentation:
// per tool and parameter (the arguments of the collections' gold calls)
// and per normalized parameter name (the same, and values seen in real
// responses under a key of that name).
type knownValues struct {
	byTool map[string][]any // tool + "\x00" + param
	byName map[string][]any // normalized name
	seen   map[string]bool  // key + "\x00" + canonical value
}

func newKnownValues() *knownValues {
	return &knownValues{byTool: map[string][]any{}, byName: map[string][]any{}, seen: map[string]bool{}}
}

// normName normalizes a parameter or field name for matching: the part
// after the last '.', lower-cased, letters and digits only.
func normName(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (k *knownValues) add(m map[string][]any, key string, v any) bool {
	switch x := v.(type) {
	case string:
		if x == "" || len(x) > knownMaxText || strings.ContainsAny(x, "\x00") {
			return false
		}
		if strings.HasPrefix(x, "$") && strings.HasSuffix(x, "$") {
			return false // a gold call's reference to an earlier output
		}
	case json.Number, bool:
	default:
		return false
	}
	if len(m[key]) >= knownPerKey || (len(m) >= knownMaxKeys && m[key] == nil) {
		return false
	}
	c, err := toolenv.Canonical(v)
	if err != nil {
		return false
	}
	id := key + "\x00" + string(c)
	if k.seen[id] {
		return false
	}
	k.seen[id] = true
	m[key] = append(m[key], v)
	return true
}

// addTasks adds the arguments of the tasks' gold calls.
func (k *knownValues) addTasks(tasks []*toolenv.Task) {
	for _, task := range tasks {
		for _, g := range task.Gold {
			tool := toolenv.ToolID(task.Collection, g.Name)
			for p, v := range g.Args {
				k.add(k.byTool, tool+"\x00"+p, v)
				k.add(k.byName, normName(p), v)
			}
		}
	}
}

// values returns the known values of tool's parameter: its own gold
// values first, then those of the name.
func (k *knownValues) values(tool, param string) []any {
	if k == nil {
		return nil
	}
	own := k.byTool[tool+"\x00"+param]
	byName := k.byName[normName(param)]
	if len(own) == 0 {
		return byName
	}
	return append(append([]any(nil), own...), byName...)
}

// harvest adds the values of the dataset's successful real responses,
// by the name of the field holding them, and returns how many distinct
// values it added.
func (e *Engine) harvest(ctx context.Context, k *knownValues) (int, error) {
	added, read := 0, 0
	ok := true
	err := e.Store.EachPair(ctx, e.Dataset, PairQuery{Origin: OriginReal, OK: &ok}, func(p *Pair) error {
		if read >= harvestPairs {
			return errStop
		}
		read++
		var v any
		if toolenv.DecodeJSON(p.Body, &v) != nil {
			return nil
		}
		if s, isStr := v.(string); isStr {
			// StableToolBench-style responses hold JSON in a string.
			var inner any
			if toolenv.DecodeJSON([]byte(s), &inner) == nil {
				v = inner
			}
		}
		added += k.walk(v, "", 0)
		return nil
	})
	if err == errStop {
		err = nil
	}
	return added, err
}

// walk adds the scalar values under each key of v. A table in the common
// {"columns": [...], "rows": [[...], ...]} shape gives each column's
// values under the column's name.
func (k *knownValues) walk(v any, key string, depth int) int {
	if depth > 8 {
		return 0
	}
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if cols, rows, ok := table(x); ok {
			for _, row := range rows {
				r, _ := row.([]any)
				for i, c := range cols {
					if strings.ContainsAny(c, "()") {
						continue // an expression, not a field
					}
					if i < len(r) && k.add(k.byName, normName(c), r[i]) {
						n++
					}
				}
			}
			return n
		}
		for _, name := range sortedKeys(x) {
			n += k.walk(x[name], name, depth+1)
		}
	case []any:
		for _, e := range x {
			n += k.walk(e, key, depth+1)
		}
	default:
		if key != "" && k.add(k.byName, normName(key), x) {
			n++
		}
	}
	return n
}

// table recognizes {"columns": [names], "rows": [[values]]}.
func table(m map[string]any) ([]string, []any, bool) {
	cs, ok1 := m["columns"].([]any)
	rows, ok2 := m["rows"].([]any)
	if !ok1 || !ok2 {
		return nil, nil, false
	}
	cols := make([]string, len(cs))
	for i, c := range cs {
		s, ok := c.(string)
		if !ok {
			return nil, nil, false
		}
		cols[i] = s
	}
	return cols, rows, true
}

// errStop ends an iteration early.
var errStop = errStopType{}

type errStopType struct{}

func (errStopType) Error() string { return "stop" }
