package simulate

import (
	"bytes"
	"encoding/json"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/toolbench"
)

// category returns the standardized category, as StableToolBench's
// server passes it on ("Artificial_Intelligence_Machine_Learning").
func category(t *toolenv.Tool) string {
	if c := t.Meta["std_category"]; c != "" {
		return c
	}
	return toolbench.StandardizeCategory(t.Category)
}

// docName is the documented name of parameter name: the loader keeps
// ToolBench's original name in "x-name" when it had to standardize it
// ("id" became "is_id").
func docName(t *toolenv.Tool, name string) string {
	if p := t.Input.Prop(name); p != nil {
		if raw, ok := p.Extra["x-name"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		}
	}
	return name
}

// params returns the required (or optional) parameters as ToolBench
// documents them, {name, type, description, default}, with the names,
// types and example values the ToolBench loader kept (x-name,
// x-toolbench-type, example_value; see toolbench.DocOf), falling back to
// the schema's type, default and examples for other tools.
func params(t *toolenv.Tool, required bool) []any {
	out := []any{}
	for _, name := range t.Params() {
		if t.Input.IsRequired(name) != required {
			continue
		}
		p := t.Input.Prop(name)
		def := any("")
		if raw, ok := p.Extra["example_value"]; ok {
			if v, err := pyfmt.DecodeOrdered(raw); err == nil {
				def = v
			}
		} else if p.Default != nil {
			def = ordered(p.Default)
		} else if len(p.Examples) > 0 {
			def = ordered(p.Examples[0])
		}
		out = append(out, pyfmt.Dict{{Key: "name", Value: docName(t, name)}, {Key: "type", Value: toolbenchType(p)}, {Key: "description", Value: p.Description}, {Key: "default", Value: def}})
	}
	return out
}

// toolbenchType returns a parameter's type the way ToolBench documents it
// ("STRING", "NUMBER", "BOOLEAN", "ENUM", ...): the loader's original type
// when the schema kept it (x-toolbench-type), else one derived from the
// JSON Schema type.
func toolbenchType(p *toolenv.Schema) string {
	if raw, ok := p.Extra["x-toolbench-type"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	switch p.Type {
	case "integer", "number":
		return "NUMBER"
	case "boolean":
		return "BOOLEAN"
	case "array":
		return "ARRAY"
	case "object":
		return "OBJECT"
	case "":
		if len(p.Enum) > 0 {
			return "ENUM"
		}
	}
	return "STRING"
}

// mirrorDoc is the API doc of MirrorAPI's prompts, in its key order
// (StableToolBench server/main_mirrorapi.py
// fake_response_function_with_trained_simulator).
func mirrorDoc(t *toolenv.Tool) pyfmt.Dict {
	return pyfmt.Dict{
		{Key: "api_name", Value: t.TitleOrName()},
		{Key: "api_description", Value: t.Description},
		{Key: "required_parameters", Value: params(t, true)},
		{Key: "optional_parameters", Value: params(t, false)},
		{Key: "tool_description", Value: t.GroupDescription},
		{Key: "tool_name", Value: t.GroupOrCollection()},
		{Key: "tool_category", Value: category(t)},
	}
}

// gptDoc is the API doc of StableToolBench's GPT prompt (server/main.py:
// {'tool_description', 'api_info': [{'name', 'description'}]}), with the
// API's parameters added to its api_info entry: StableToolBench drops
// them, and a simulator that cannot see the parameters cannot tell a
// right call from a wrong one.
func gptDoc(t *toolenv.Tool) pyfmt.Dict {
	return pyfmt.Dict{
		{Key: "tool_description", Value: t.GroupDescription},
		{Key: "api_info", Value: []any{pyfmt.Dict{
			{Key: "name", Value: t.TitleOrName()},
			{Key: "description", Value: t.Description},
			{Key: "required_parameters", Value: params(t, true)},
			{Key: "optional_parameters", Value: params(t, false)},
		}}},
	}
}

// argsObject orders a call's arguments: documented parameters in
// documentation order, then the others sorted; each under its documented
// name, so that the request a simulator sees uses the names of the doc it
// is shown.
func argsObject(t *toolenv.Tool, args map[string]any) pyfmt.Dict {
	o := fromMap(args, t.Params())
	for i := range o {
		o[i].Key = docName(t, o[i].Key)
	}
	return o
}

// argsJSON is the compact JSON of the arguments in documentation order,
// as a MirrorAPI request's "tool_input" string holds it.
func argsJSON(t *toolenv.Tool, args map[string]any) string {
	return string(encodeJSON(argsObject(t, args)))
}

// mirrorRequest is the request of MirrorAPI's user turn in the form its
// training and benchmark data use: the StableToolBench request with
// tool_input as a JSON string.
func mirrorRequest(t *toolenv.Tool, args map[string]any) pyfmt.Dict {
	return pyfmt.Dict{
		{Key: "category", Value: category(t)},
		{Key: "tool_name", Value: t.GroupOrCollection()},
		{Key: "api_name", Value: t.TitleOrName()},
		{Key: "tool_input", Value: argsJSON(t, args)},
		{Key: "strip", Value: "filter"},
	}
}

// mirrorUser is MirrorAPI's user turn (USER_PROMPT of
// server/main_mirrorapi.py: "API doc:\n{api_doc}\n\nRequest:\n{request}"),
// with both filled in as Python's str() writes them.
func mirrorUser(doc pyfmt.Dict, request any) string {
	return "API doc:\n" + pyfmt.Repr(doc) + "\n\nRequest:\n" + pyfmt.Repr(request)
}

// envelopeText is an answer in the {error, response} form the prompts ask
// for, as Python's json.dumps writes it: the assistant turn of a few-shot
// example.
func envelopeText(errMsg string, body json.RawMessage) string {
	var resp any = ""
	if len(bytes.TrimSpace(body)) > 0 {
		if v, err := pyfmt.DecodeOrdered(body); err == nil {
			resp = v
		}
	}
	return pyfmt.Dumps(pyfmt.Dict{{Key: "error", Value: errMsg}, {Key: "response", Value: resp}})
}
