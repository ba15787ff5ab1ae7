package openai

import (
	toolenv "github.com/toolenv/toolenv"
)

// Tool is one entry of a chat completion request's "tools" array.
type Tool struct {
	Type     string   `json:"type"` // always "function"
	Function Function `json:"function"`
}

// Function describes a function a model may call.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  *toolenv.Schema `json:"parameters"`
	Strict      bool            `json:"strict,omitempty"`
}

// FromTool returns the OpenAI function definition of t. The description
// joins the API's title, its description and its group's description the
// way ToolBench presents them, so a model sees what the documentation
// says.
func FromTool(t *toolenv.Tool) Tool {
	params := t.Input
	if params == nil {
		params = toolenv.ObjectSchema()
	}
	return Tool{Type: "function", Function: Function{Name: t.Name, Description: Description(t), Parameters: params}}
}

// FromTools converts tools in order.
func FromTools(tools []*toolenv.Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		out[i] = FromTool(t)
	}
	return out
}

// Description is the description of t given to models: the tool's
// Meta["function_description"] when its loader set one (ToolBench tools
// carry ToolBench's own "This is the subfunction for tool ..." text, so a
// model sees exactly what it saw in StableToolBench), else its
// Description, marked when the tool is deprecated.
func Description(t *toolenv.Tool) string {
	d := t.Meta["function_description"]
	if d == "" {
		d = t.Description
	}
	if t.Deprecated != nil {
		msg := t.Deprecated.Message
		if msg == "" && t.Deprecated.Successor != "" {
			msg = "use " + t.Deprecated.Successor + " instead."
		}
		d = "DEPRECATED: " + msg + " " + d
	}
	return d
}
