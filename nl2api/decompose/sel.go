package decompose

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

// Sel converts a SLOT plan into SEL calls: categorical arguments become
// tool names (select_data_<condition>, sort_data_ascending, ...), and
// retrieve_data becomes one getter per column, followed by
// select_unique_values and limit_data when it had distinct or a limit.
func Sel(p *Plan) (*Plan, error) {
	out := &Plan{Init: p.Init, Ordered: p.Ordered, Columns: p.Columns, Caveat: p.Caveat}
	rename := map[string][]string{} // SLOT answer label → SEL labels
	n := 0
	next := func(prefix string) string {
		l := fmt.Sprintf("%s_%d", prefix, n)
		n++
		return l
	}
	emit := func(name, label string, args map[string]any) {
		out.Calls = append(out.Calls, toolenv.GoldCall{Name: name, Args: args, Label: label})
	}
	// Results later calls read as data (the rows of a FROM-subquery) stay
	// tables in SEL: SEL has no rows result.
	asData := map[string]bool{}
	for _, call := range p.Calls {
		for _, k := range []string{"data_source", "data_sources"} {
			for _, l := range refs(call.Args[k]) {
				asData[l] = true
			}
		}
	}
	alias := map[string]string{} // SLOT label → the SEL result standing for it
	for _, call := range p.Calls {
		a := copyArgs(call.Args)
		for _, k := range []string{"data_source", "data_sources", "left", "right", "value"} {
			a[k] = realias(a[k], alias)
			if a[k] == nil {
				delete(a, k)
			}
		}
		if call.Name == "retrieve_data" && asData[call.Label] {
			keys, _ := a["key_names"].([]any)
			distinct, _ := a["distinct"].(bool)
			limit, hasLimit := a["limit"]
			src := a["data_source"]
			if distinct {
				for _, k := range keys {
					g := next("GROUPED_DF")
					emit("group_data_by", g, map[string]any{"data_source": src, "key_name": k})
					src = ref(g)
				}
				ag := next("AGG_DF")
				emit("aggregate_data_count", ag, map[string]any{"data_source": src})
				src = ref(ag)
			}
			if hasLimit {
				l := next("LIMITED_DF")
				emit("limit_data", l, map[string]any{"data_source": src, "limit": limit})
				src = ref(l)
			}
			alias[call.Label] = strings.Trim(src.(string), "$")
			continue
		}
		switch call.Name {
		case "set_operation":
			op, _ := a["operation"].(string)
			delete(a, "operation")
			for _, side := range []string{"left", "right"} {
				l, _ := a[side].(string)
				if ls, ok := rename[strings.Trim(l, "$")]; ok {
					if len(ls) == 1 {
						a[side] = ref(ls[0])
					} else {
						var list []any
						for _, x := range ls {
							list = append(list, ref(x))
						}
						a[side] = list
					}
				}
			}
			emit("set_"+op, call.Label, a)
		case "filter_data":
			cond, _ := a["condition"].(string)
			delete(a, "condition")
			emit("select_data_"+cond, call.Label, a)
		case "combine_filters":
			op, _ := a["operation"].(string)
			delete(a, "operation")
			emit("combine_filters_"+op, call.Label, a)
		case "sort_data":
			asc, _ := a["ascending"].(bool)
			delete(a, "ascending")
			name := "sort_data_descending"
			if asc {
				name = "sort_data_ascending"
			}
			emit(name, call.Label, a)
		case "group_data_by":
			emit("group_data_by", call.Label, a)
		case "rank_data":
			method, _ := a["method"].(string)
			asc, _ := a["ascending"].(bool)
			delete(a, "method")
			delete(a, "ascending")
			name := method + "_data_descending"
			if asc {
				name = method + "_data_ascending"
			}
			emit(name, call.Label, a)
		case "aggregate_data":
			typ, _ := a["aggregation_type"].(string)
			delete(a, "aggregation_type")
			name := "aggregate_data_" + typ
			if d, _ := a["distinct"].(bool); d {
				name += "_distinct"
			}
			delete(a, "distinct")
			emit(name, call.Label, a)
		case "transform_data":
			op, _ := a["operation_type"].(string)
			delete(a, "operation_type")
			emit("transform_data_"+op, call.Label, a)
		case "calculate":
			op, _ := a["operation"].(string)
			delete(a, "operation")
			emit("calculate_"+op, call.Label, a)
		case "select_unique_values":
			key, _ := a["key_name"].(string)
			g := next("GET_COL")
			emit(sqltools.GetterName(key), g, map[string]any{"data_source": a["data_source"]})
			emit("select_unique_values", call.Label, map[string]any{"data_source": ref(g)})
		case "retrieve_data":
			keys, _ := a["key_names"].([]any)
			distinct, _ := a["distinct"].(bool)
			limit, hasLimit := a["limit"]
			src := a["data_source"]
			if len(keys) > 1 && distinct {
				// DISTINCT a, b: one row per distinct combination is one
				// row per group of GROUP BY a, b.
				if p.Ordered {
					return nil, fail("SEL: ordered DISTINCT over several columns", "grouping loses the order")
				}
				for _, k := range keys {
					g := next("GROUPED_DF")
					emit("group_data_by", g, map[string]any{"data_source": src, "key_name": k})
					src = ref(g)
				}
				a := next("AGG_DF")
				emit("aggregate_data_count", a, map[string]any{"data_source": src})
				src = ref(a)
				distinct = false
			}
			if hasLimit && !distinct {
				l := next("LIMITED_DF")
				emit("limit_data", l, map[string]any{"data_source": src, "limit": limit})
				src = ref(l)
			}
			var labels []string
			for i, k := range keys {
				key, _ := k.(string)
				l := call.Label
				if len(keys) > 1 || distinct {
					l = fmt.Sprintf("%s_%d", strings.TrimSuffix(call.Label, "_"), i)
					if len(keys) == 1 {
						l = next("GET_COL")
					}
				}
				emit(sqltools.GetterName(key), l, map[string]any{"data_source": src})
				labels = append(labels, l)
			}
			if distinct {
				u := call.Label
				if hasLimit {
					u = next("UNIQUE")
				}
				emit("select_unique_values", u, map[string]any{"data_source": ref(labels[0])})
				labels = []string{u}
				if hasLimit {
					emit("limit_data", call.Label, map[string]any{"data_source": ref(u), "limit": limit})
					labels = []string{call.Label}
				}
			}
			rename[call.Label] = labels
		default:
			return nil, fail("SEL: no counterpart", "%s", call.Name)
		}
	}
	for _, l := range p.Answer {
		if ls, ok := rename[l]; ok {
			out.Answer = append(out.Answer, ls...)
		} else {
			out.Answer = append(out.Answer, l)
		}
	}
	return out, nil
}

// refs returns the labels a "$label$" argument (or a list of them)
// refers to.
func refs(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		if l, ok := labelOf(x); ok {
			out = append(out, l)
		}
	case []any:
		for _, e := range x {
			out = append(out, refs(e)...)
		}
	}
	return out
}

// realias rewrites "$label$" references through alias.
func realias(v any, alias map[string]string) any {
	switch x := v.(type) {
	case string:
		if l, ok := labelOf(x); ok {
			if n, ok := alias[l]; ok {
				return ref(n)
			}
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = realias(e, alias)
		}
		return out
	}
	return v
}

func copyArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
