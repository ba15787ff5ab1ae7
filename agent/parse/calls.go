package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
)

// ErrUnparseable means no function call could be read from a model's
// output: an instruction_alignment_failure.
var ErrUnparseable = errors.New("no function calls could be read from the model's output")

// Call is one function call read from a model's output.
type Call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"arguments"`
	// Label names the call's output for later "$label$" references.
	Label string `json:"label,omitempty"`
	// ID is the native tool call's id, when the model gave one.
	ID string `json:"id,omitempty"`
	// Problem is set when the item was read but is not a well-formed
	// call: it has no name, or its arguments are not an object. It says
	// what was wrong.
	Problem string `json:"problem,omitempty"`
}

// Format names the syntax calls were read in.
type Format string

// The formats Calls recognises.
const (
	FormatToolCalls Format = "tool_calls"     // native OpenAI tool_calls
	FormatJSON      Format = "json"           // the whole output is a JSON value
	FormatJSONLines Format = "jsonl"          // one JSON object per line
	FormatTagged    Format = "tool_call_tags" // <tool_call>...</tool_call> blocks
	FormatFenced    Format = "fenced_json"    // ```json ... ``` blocks
	FormatPython    Format = "python"         // [f(a=1), g(b="x")] or Python literals
	FormatEmbedded  Format = "embedded"       // a JSON value or Python call list inside prose
)

// Result is what Calls read.
type Result struct {
	Calls  []Call `json:"calls"`
	Format Format `json:"format"`
}

// WellFormed returns the calls that have a name and object arguments, as
// GoldCalls.
func (r Result) WellFormed() []toolenv.GoldCall {
	out := make([]toolenv.GoldCall, 0, len(r.Calls))
	for _, c := range r.Calls {
		if c.Problem == "" {
			out = append(out, toolenv.GoldCall{Name: c.Name, Args: c.Args, Label: c.Label})
		}
	}
	return out
}

// Malformed counts the items that were read but are not well-formed
// calls.
func (r Result) Malformed() int {
	n := 0
	for _, c := range r.Calls {
		if c.Problem != "" {
			n++
		}
	}
	return n
}

var (
	thinkRE    = regexp.MustCompile(`(?s)<think>.*?</think>`)
	toolTagRE  = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|$)`)
	fenceRE    = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```")
	turnRE     = regexp.MustCompile(`(?m)^\s*(USER|User|ASSISTANT|Assistant|Human|HUMAN)\s*:|<\|im_start\|>|\[INST\]|<\|start_header_id\|>`)
	specialTok = []string{"<|python_tag|>", "<|tool_call|>", "[TOOL_CALLS]", "<|eom_id|>", "<|eot_id|>", "<|endoftext|>", "<|im_end|>", "</s>", "<|end_of_text|>", "<tools>", "</tools>"}
)

// Calls reads the function calls in a model's answer: its native tool
// calls when it made any, else its text. The text is tried, in order, as
// <tool_call> blocks, fenced code blocks, one JSON value, JSON lines,
// Python syntax, and finally a JSON value or Python call list embedded in
// prose. A list nested in extra brackets is flattened. Text that continues
// with an invented conversation turn ("USER: ...") after its calls is not
// accepted: the model did not stop where the format says to.
//
// The error, when nothing could be read, wraps ErrUnparseable.
func Calls(content string, native []llm.ToolCall) (Result, error) {
	if len(native) > 0 {
		r := Result{Format: FormatToolCalls}
		for _, tc := range native {
			r.Calls = append(r.Calls, nativeCall(tc))
		}
		return r, nil
	}
	text := clean(content)
	if text == "" {
		return Result{}, fmt.Errorf("%w: the answer is empty", ErrUnparseable)
	}
	if loc := turnRE.FindStringIndex(text); loc != nil && loc[0] > 0 {
		return Result{}, fmt.Errorf("%w: the answer goes on with an invented conversation turn %q after its calls", ErrUnparseable, strings.TrimSpace(text[loc[0]:min(loc[1]+20, len(text))]))
	}
	if strings.Contains(text, "<tool_call>") {
		var r Result
		for _, m := range toolTagRE.FindAllStringSubmatch(text, -1) {
			calls, ok := readBlock(m[1])
			if !ok {
				return Result{}, fmt.Errorf("%w: a <tool_call> block holds neither JSON nor Python: %q", ErrUnparseable, snippet(m[1]))
			}
			r.Calls = append(r.Calls, calls...)
		}
		r.Format = FormatTagged
		return r, nil
	}
	if fences := fenceRE.FindAllStringSubmatch(text, -1); len(fences) > 0 {
		var r Result
		for _, m := range fences {
			if calls, ok := readBlock(m[1]); ok {
				r.Calls = append(r.Calls, calls...)
			}
		}
		if len(r.Calls) > 0 {
			r.Format = FormatFenced
			return r, nil
		}
	}
	if v, err := decodeJSON(text); err == nil {
		return Result{Calls: toCalls(v), Format: FormatJSON}, nil
	}
	if calls, ok := jsonLines(text); ok {
		return Result{Calls: calls, Format: FormatJSONLines}, nil
	}
	if v, err := parsePython(text); err == nil {
		return Result{Calls: toCalls(v), Format: FormatPython}, nil
	}
	if calls := embedded(text); len(calls) > 0 {
		return Result{Calls: calls, Format: FormatEmbedded}, nil
	}
	return Result{}, fmt.Errorf("%w: %q", ErrUnparseable, snippet(text))
}

// clean strips reasoning blocks and chat-template tokens.
func clean(s string) string {
	s = thinkRE.ReplaceAllString(s, "")
	if i := strings.Index(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	for _, t := range specialTok {
		s = strings.ReplaceAll(s, t, "")
	}
	return strings.TrimSpace(s)
}

func snippet(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// readBlock reads one block's calls: JSON, JSON lines or Python.
func readBlock(s string) ([]Call, bool) {
	s = strings.TrimSpace(s)
	if v, err := decodeJSON(s); err == nil {
		return toCalls(v), true
	}
	if calls, ok := jsonLines(s); ok {
		return calls, true
	}
	if v, err := parsePython(s); err == nil {
		return toCalls(v), true
	}
	return nil, false
}

func decodeJSON(s string) (any, error) {
	var v any
	err := toolenv.DecodeJSON([]byte(s), &v)
	return v, err
}

// jsonLines reads text where every non-empty line is a JSON object.
func jsonLines(s string) ([]Call, bool) {
	var out []Call
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ","))
		if line == "" {
			continue
		}
		v, err := decodeJSON(line)
		if err != nil {
			return nil, false
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, false
		}
		out = append(out, toCalls(v)...)
	}
	return out, len(out) > 0
}

// Bounds of the search for calls inside prose, so that a huge or
// hostile answer cannot make it quadratic.
const (
	maxEmbeddedScan     = 64 << 10
	maxEmbeddedAttempts = 4096
	maxEmbeddedValue    = 16 << 10
)

// embedded finds the first JSON value or Python call list inside prose
// that holds at least one well-formed call.
func embedded(s string) []Call {
	if len(s) > maxEmbeddedScan {
		s = s[:maxEmbeddedScan]
	}
	attempts, jsonSkip := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '[' && c != '{' && !(isLetter(c) && (i == 0 || !isIdentByte(s[i-1]))) {
			continue
		}
		if attempts++; attempts > maxEmbeddedAttempts {
			return nil
		}
		if (c == '[' || c == '{') && i >= jsonSkip {
			d := json.NewDecoder(strings.NewReader(s[i:min(len(s), i+maxEmbeddedValue)]))
			d.UseNumber()
			var v any
			err := d.Decode(&v)
			if err == nil {
				if calls := toCalls(v); wellFormed(calls) {
					return calls
				}
			}
			// A value starting inside the text a syntax error was found
			// in fails at the same place: go past it.
			var se *json.SyntaxError
			switch {
			case errors.As(err, &se) && se.Offset > 1:
				jsonSkip = i + int(se.Offset) - 1
			case err != nil && min(len(s), i+maxEmbeddedValue)-i > 1<<10:
				// Valid JSON that runs past a long window: skip it too,
				// rather than re-reading it from every bracket inside.
				jsonSkip = min(len(s), i+maxEmbeddedValue)
			}
		}
		if v, n, err := parsePythonPrefix(s[i:min(len(s), i+maxEmbeddedValue)]); err == nil && n > 0 {
			switch v.(type) {
			case []any, map[string]any, *pyfmt.Call:
				if calls := toCalls(v); wellFormed(calls) {
					return calls
				}
			}
		}
	}
	return nil
}

func isIdentByte(c byte) bool { return c == '_' || c >= '0' && c <= '9' || isLetter(c) }

func wellFormed(calls []Call) bool {
	for _, c := range calls {
		if c.Problem == "" {
			return true
		}
	}
	return false
}

// toCalls turns a parsed value into calls: a list of items (extra
// brackets flattened), an object holding a list under "tool_calls" or
// "calls", a single call object, or a Python call.
func toCalls(v any) []Call {
	switch x := v.(type) {
	case []any:
		var out []Call
		for _, e := range x {
			if inner, ok := e.([]any); ok {
				out = append(out, toCalls(inner)...)
				continue
			}
			out = append(out, toCall(e))
		}
		return out
	case map[string]any:
		for _, k := range []string{"tool_calls", "calls", "function_calls", "actions"} {
			if list, ok := x[k].([]any); ok {
				return toCalls(list)
			}
		}
		return []Call{toCall(x)}
	default:
		return []Call{toCall(v)}
	}
}

// toCall turns one item into a call, or a call with a Problem.
func toCall(v any) Call {
	switch x := v.(type) {
	case *pyfmt.Call:
		c := Call{Name: x.Name, Args: x.Keywords}
		if len(x.Positional) > 0 {
			c.Problem = fmt.Sprintf("%d positional argument(s); arguments must be named", len(x.Positional))
		}
		return c
	case map[string]any:
		if fn, ok := x["function"].(map[string]any); ok {
			c := toCall(fn)
			if c.ID == "" {
				c.ID, _ = x["id"].(string)
			}
			if c.Label == "" {
				c.Label = labelOf(x["label"])
			}
			return c
		}
		c := Call{Label: labelOf(x["label"])}
		name, ok := x["name"].(string)
		if !ok || name == "" {
			c.Problem = "the item has no \"name\""
			return c
		}
		c.Name = name
		var raw any
		found := false
		for _, k := range []string{"arguments", "parameters", "args", "input"} {
			if a, ok := x[k]; ok {
				raw, found = a, true
				break
			}
		}
		if !found {
			c.Args = map[string]any{}
			return c
		}
		args, problem := argsOf(raw)
		c.Args, c.Problem = args, problem
		return c
	case string:
		return Call{Name: x, Problem: "the item is a bare string, not a {\"name\", \"arguments\"} object"}
	default:
		return Call{Problem: fmt.Sprintf("the item is a %T, not a {\"name\", \"arguments\"} object", v)}
	}
}

func labelOf(v any) string {
	s, _ := v.(string)
	return s
}

// argsOf reads arguments that may be an object, a JSON string holding an
// object (the OpenAI wire format), a Python dict string, or null.
func argsOf(v any) (map[string]any, string) {
	switch a := v.(type) {
	case map[string]any:
		return a, ""
	case nil:
		return map[string]any{}, ""
	case string:
		return ArgsFromString(a)
	}
	return nil, fmt.Sprintf("the arguments are a %T, not an object", v)
}

// ArgsFromString reads arguments written as text: a JSON object (what
// native tool calls carry), a Python dict, or nothing. Trailing commas
// are forgiven. The second result says what was wrong when it could not.
func ArgsFromString(s string) (map[string]any, string) {
	t := strings.TrimSpace(s)
	if t == "" || t == "null" || t == "None" {
		return map[string]any{}, ""
	}
	// Models add trailing commas; ToolBench accepted Python dicts.
	v, _, err := pyfmt.DecodeRepaired(t, pythonSyntax)
	if err != nil {
		return nil, "the arguments are not valid JSON: " + err.Error()
	}
	if m, ok := v.(map[string]any); ok {
		return m, ""
	}
	return nil, fmt.Sprintf("the arguments are a %T, not an object", v)
}

func nativeCall(tc llm.ToolCall) Call {
	c := Call{Name: tc.Function.Name, ID: tc.ID}
	if c.Name == "" {
		c.Problem = "the tool call has no function name"
		return c
	}
	c.Args, c.Problem = ArgsFromString(tc.Function.Arguments)
	return c
}
