package metrics

import (
	"encoding/json"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// BFCLTool is a tool as a caller without BFCL's data knows it: its name,
// its parameters and the required ones, no types.
type BFCLTool struct {
	Name       string   `json:"name"`
	Properties []string `json:"properties"`
	Required   []string `json:"required"`
}

// BFCLFromGold builds BFCL's checker inputs when all that is known is one
// accepted answer: tools without types and the gold call sequence gold
// (a list of {"name", "arguments"}, as pyfmt.Loads reads it). Each gold
// argument's value becomes its parameter's only possible value (a dict
// or a list of dicts taken as BFCL writes them: values listed per key);
// a parameter the gold call leaves out is not among the possible
// answers, so supplying it is unexpected. The types are then read from
// the answers (BFCLFunctionsFromAnswers).
//
// BFCL's own data often accepts more: several values for a parameter
// ("NYC" beside "New York City"), an optional parameter with a value or
// without ("" in its list). With only the gold call the checker cannot
// know them; give it BFCL's possible answers (and, for the types, its
// function descriptions: BFCLFunctionsFromDocs) to be exact.
func BFCLFromGold(tools []BFCLTool, gold any) ([]BFCLFunction, []any, error) {
	calls, err := pyIter(gold)
	if err != nil {
		return nil, nil, fmt.Errorf("bfcl: gold must be a list of calls: %w", err)
	}
	var answers []any
	for i, c := range calls {
		name, err := pyGetItem(c, "name")
		if err != nil {
			return nil, nil, fmt.Errorf("bfcl: gold call %d: %w", i+1, err)
		}
		ns, ok := name.(string)
		if !ok {
			return nil, nil, fmt.Errorf("bfcl: gold call %d: the name must be a string, not %s", i+1, pyTypeName(name))
		}
		args, err := pyGetItem(c, "arguments")
		if err != nil {
			return nil, nil, fmt.Errorf("bfcl: gold call %d (%s): %w", i+1, ns, err)
		}
		ad, err := pyItems(args)
		if err != nil {
			return nil, nil, fmt.Errorf("bfcl: gold call %d (%s): arguments: %w", i+1, ns, err)
		}
		possible := make(pyfmt.Dict, 0, len(ad))
		for _, it := range ad {
			possible = append(possible, pyfmt.Item{Key: it.Key, Value: []any{it.Value}})
		}
		answers = append(answers, pyfmt.Dict{{Key: ns, Value: possible}})
	}
	funcs, err := BFCLFunctionsFromAnswers(tools, answers)
	return funcs, answers, err
}

// BFCLFunctionsFromAnswers describes tools without types to BFCL's
// checker, each parameter's type read from its first possible value that
// is not "" (an int "integer", a float "float", a string "string", a bool
// "boolean", an object "dict", a list "array" of its first item's type);
// a parameter no answer gives a value is "any". BFCL's function
// descriptions (BFCLFunctionsFromDocs) are exact where this guesses: a
// "float" parameter whose answers are written as ints, a "tuple", "any".
func BFCLFunctionsFromAnswers(tools []BFCLTool, answers []any) ([]BFCLFunction, error) {
	types := map[string]map[string]BFCLParam{}
	for i, a := range answers {
		ad, ok := a.(pyfmt.Dict)
		if !ok || len(ad) == 0 {
			return nil, fmt.Errorf("bfcl: possible answer %d must be an object {function: {parameter: [values]}}", i+1)
		}
		name := ad[0].Key
		params, err := pyItems(ad[0].Value)
		if err != nil {
			return nil, fmt.Errorf("bfcl: possible answer %d (%s): %w", i+1, name, err)
		}
		if types[name] == nil {
			types[name] = map[string]BFCLParam{}
		}
		for _, it := range params {
			if _, seen := types[name][it.Key]; seen {
				continue
			}
			values, err := pyLen(it.Value)
			if err != nil {
				return nil, fmt.Errorf("bfcl: possible answer %d (%s), parameter %s: %w", i+1, name, it.Key, err)
			}
			for _, v := range values {
				if v != "" {
					types[name][it.Key] = bfclTypeOf(v)
					break
				}
			}
		}
	}
	funcs := make([]BFCLFunction, len(tools))
	for i, t := range tools {
		f := BFCLFunction{Name: t.Name, Required: t.Required, Params: map[string]BFCLParam{}}
		for _, p := range t.Properties {
			pt, ok := types[t.Name][p]
			if !ok {
				pt = BFCLParam{Type: "any"}
			}
			f.Params[p] = pt
		}
		funcs[i] = f
	}
	return funcs, nil
}

// bfclTypeOf is the BFCL type a value is written as.
func bfclTypeOf(v any) BFCLParam {
	switch pyTypeName(v) {
	case "int":
		return BFCLParam{Type: "integer"}
	case "float":
		return BFCLParam{Type: "float"}
	case "bool":
		return BFCLParam{Type: "boolean"}
	case "str":
		return BFCLParam{Type: "string"}
	case "dict":
		return BFCLParam{Type: "dict"}
	case "list":
		items := "any"
		if l := v.([]any); len(l) > 0 {
			items = bfclTypeOf(l[0]).Type
		}
		return BFCLParam{Type: "array", ItemsType: items}
	}
	return BFCLParam{Type: "any"}
}

// BFCLFunctionsFromDocs reads BFCL's function descriptions (a test
// entry's "function" list: {"name", "parameters": {"properties": {p:
// {"type", "items": {"type"}}}, "required": [...]}}).
func BFCLFunctionsFromDocs(docs any) ([]BFCLFunction, error) {
	list, err := pyIter(docs)
	if err != nil {
		return nil, fmt.Errorf("bfcl: function descriptions must be a list: %w", err)
	}
	out := make([]BFCLFunction, len(list))
	for i, d := range list {
		name, err := pyGetItem(d, "name")
		if err != nil {
			return nil, fmt.Errorf("bfcl: function %d: %w", i+1, err)
		}
		ns, ok := name.(string)
		if !ok {
			return nil, fmt.Errorf("bfcl: function %d: the name must be a string", i+1)
		}
		f := BFCLFunction{Name: ns, Params: map[string]BFCLParam{}}
		params, err := pyGetItem(d, "parameters")
		if err != nil {
			return nil, fmt.Errorf("bfcl: function %s: %w", ns, err)
		}
		props, err := pyGetItem(params, "properties")
		if err != nil {
			return nil, fmt.Errorf("bfcl: function %s: parameters: %w", ns, err)
		}
		pd, err := pyItems(props)
		if err != nil {
			return nil, fmt.Errorf("bfcl: function %s: properties: %w", ns, err)
		}
		for _, it := range pd {
			var p BFCLParam
			if t, err := pyGetItem(it.Value, "type"); err == nil {
				p.Type, _ = t.(string)
			}
			if items, err := pyGetItem(it.Value, "items"); err == nil {
				if t, err := pyGetItem(items, "type"); err == nil {
					p.ItemsType, _ = t.(string)
				}
			}
			f.Params[it.Key] = p
		}
		if req, err := pyGetItem(params, "required"); err == nil {
			rl, err := pyIter(req)
			if err != nil {
				return nil, fmt.Errorf("bfcl: function %s: required: %w", ns, err)
			}
			for _, r := range rl {
				if s, ok := r.(string); ok {
					f.Required = append(f.Required, s)
				}
			}
		}
		out[i] = f
	}
	return out, nil
}

// BFCLFunctionsFromTools describes toolenv tools to BFCL's checker: JSON
// Schema types become BFCL's ("number" is "float", "object" "dict",
// "array" with its items' type); a parameter without a type is "any".
func BFCLFunctionsFromTools(tools []*toolenv.Tool) []BFCLFunction {
	out := make([]BFCLFunction, 0, len(tools))
	for _, t := range tools {
		f := BFCLFunction{Name: t.Name, Params: map[string]BFCLParam{}}
		if in := t.Input; in != nil {
			f.Required = append(f.Required, in.Required...)
			for name, s := range in.Properties {
				p := BFCLParam{Type: bfclSchemaType(s)}
				if p.Type == "array" {
					p.ItemsType = "any"
					if s != nil && s.Items != nil {
						p.ItemsType = bfclSchemaType(s.Items)
					}
				}
				f.Params[name] = p
			}
		}
		out = append(out, f)
	}
	return out
}

func bfclSchemaType(s *toolenv.Schema) string {
	if s == nil {
		return "any"
	}
	switch s.Type {
	case "integer":
		return "integer"
	case "number":
		return "float"
	case "string":
		return "string"
	case "boolean":
		return "boolean"
	case "array":
		return "array"
	case "object":
		return "dict"
	}
	return "any"
}

// BFCLAttempt checks a direct attempt at a toolenv task with BFCL's
// checker, call by call in order (toolenv's sequences are ordered): the
// tools' schemas give the types, the gold sequence's values are the only
// accepted ones (toolenv holds one answer), and the attempt is the
// output BFCL's decoder would give (nothing parsed: not decoded; an item
// that is not a call: the wrong format). References to earlier outputs
// are strings to BFCL, compared as written.
func BFCLAttempt(tools []*toolenv.Tool, gold []toolenv.GoldCall, a Attempt) (BFCLResult, error) {
	funcs := BFCLFunctionsFromTools(tools)
	goldV, err := pyValueOf(gold, func(c toolenv.GoldCall) any {
		return map[string]any{"name": c.Name, "arguments": nonNil(c.Args)}
	})
	if err != nil {
		return BFCLResult{}, err
	}
	_, answers, err := BFCLFromGold(nil, goldV)
	if err != nil {
		return BFCLResult{}, err
	}
	var output any
	if a.Parsed {
		out, err := pyValueOf(a.Calls, func(c toolenv.GoldCall) any {
			return map[string]any{c.Name: nonNil(c.Args)}
		})
		if err != nil {
			return BFCLResult{}, err
		}
		list := out.([]any)
		for i := 0; i < a.Malformed; i++ {
			list = append(list, "not a call")
		}
		output = list
	}
	return BFCLCheck("toolenv", funcs, output, answers, BFCLOptions{Ordered: true})
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// pyValueOf writes calls as JSON and reads them back as Python would.
func pyValueOf(calls []toolenv.GoldCall, shape func(toolenv.GoldCall) any) (any, error) {
	items := make([]any, len(calls))
	for i, c := range calls {
		items[i] = shape(c)
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("bfcl: calls cannot be written as JSON: %w", err)
	}
	return pyfmt.Loads(string(b))
}
