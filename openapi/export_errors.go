package openapi

import (
	"fmt"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// ErrorResponse is one HTTP error status a toolenv REST route answers
// with, and the result statuses (the problem body's "status") it
// carries.
type ErrorResponse struct {
	// Code is the HTTP status code.
	Code int
	// Name is the response's name under components/responses.
	Name string
	// Description says when it is answered.
	Description string
	// Statuses are the problem body's "status" values it carries.
	Statuses []toolenv.Status
	// RetryAfter says the response may carry a Retry-After header.
	RetryAfter bool
}

// ErrorResponses are the error responses every operation of a document
// lists (410 only for deprecated tools: see ErrorResponsesOf), each with the JSON problem body: the statuses server.HTTPStatus
// maps to an HTTP error, except "canceled" (499), which no client sees.
var ErrorResponses = []ErrorResponse{
	{400, "BadRequest", "The arguments do not match the tool's input schema (invalid_arguments: one entry per argument in problems), the request could not be read (bad_request), or a Prefer header asks for a response the operation does not document.",
		[]toolenv.Status{toolenv.StatusInvalidArguments, toolenv.StatusBadRequest}, false},
	{401, "Unauthorized", "The request carries no token the server accepts, or the API refused the credentials.",
		[]toolenv.Status{toolenv.StatusUnauthorized}, false},
	{404, "NotFound", "The API found nothing for the arguments (not_found), the session named is not one the server issued to this client (not_found), or there is no such tool (unknown_tool).",
		[]toolenv.Status{toolenv.StatusNotFound, toolenv.StatusUnknownTool}, false},
	{410, "Gone", "The tool is retired: hint names its successor.",
		[]toolenv.Status{toolenv.StatusGone}, false},
	{413, "TooLarge", "The request or its answer is over a size limit.",
		[]toolenv.Status{toolenv.StatusTooLarge}, false},
	{429, "RateLimited", "Too many requests: retry after the time in Retry-After.",
		[]toolenv.Status{toolenv.StatusRateLimited}, true},
	{500, "Internal", "A bug in toolenv (logged by the server).",
		[]toolenv.Status{toolenv.StatusInternal}, false},
	{502, "UpstreamError", "The API behind the tool answered with an error (its own body, when it sent one, is in error).",
		[]toolenv.Status{toolenv.StatusUpstreamError}, false},
	{503, "Unavailable", "No backend could answer (upstream and simulator down, or no session could be opened): retry after the time in Retry-After.",
		[]toolenv.Status{toolenv.StatusUnavailable}, true},
	{504, "Timeout", "The backend did not answer in time.",
		[]toolenv.Status{toolenv.StatusTimeout}, false},
}

// ErrorResponsesOf returns the error responses t's operation documents:
// ErrorResponses, 410 only when t is deprecated.
func ErrorResponsesOf(t *toolenv.Tool) []ErrorResponse {
	out := make([]ErrorResponse, 0, len(ErrorResponses))
	for _, e := range ErrorResponses {
		if e.Code == 410 && t.Deprecated == nil {
			continue
		}
		out = append(out, e)
	}
	return out
}

// usage records which error responses and parameters a document's
// operations refer to, so that components holds those only.
type usage struct {
	codes  map[int]bool
	params map[string]bool
	// arg is the argument the invalid_arguments example names: the
	// first required argument of the document's tools (in name order),
	// so the example speaks of this API and never of another's names.
	arg *exampleArg
}

// exampleArg is an argument named by the invalid_arguments example.
type exampleArg struct{ name, typ string }

// noteArg keeps t's first required argument as the example's, unless
// one was kept already.
func (u usage) noteArg(in *toolenv.Schema) {
	if u.arg.name != "" || in == nil {
		return
	}
	for _, name := range in.Required {
		if p := in.Prop(name); p != nil {
			u.arg.name, u.arg.typ = name, p.Type
			if u.arg.typ == "" {
				u.arg.typ = "any"
			}
			return
		}
	}
}

func (u usage) responses() map[string]any {
	out := map[string]any{}
	for _, e := range ErrorResponses {
		if !u.codes[e.Code] {
			continue
		}
		statuses := make([]any, len(e.Statuses))
		for i, s := range e.Statuses {
			statuses[i] = string(s)
		}
		example := map[string]any{"status": string(e.Statuses[0]), "error": errorExampleText[e.Statuses[0]]}
		if e.Statuses[0] == toolenv.StatusInvalidArguments {
			name, typ := "argument", "string"
			if u.arg != nil && u.arg.name != "" {
				name, typ = u.arg.name, u.arg.typ
			}
			example["hint"] = fmt.Sprintf("valid parameters: %s (%s, required)", name, typ)
			example["problems"] = []any{map[string]any{"param": name, "code": "missing_required", "message": fmt.Sprintf("missing required argument `%s` (%s)", name, typ), "expected": typ}}
		}
		r := map[string]any{
			"description": e.Description,
			"content": map[string]any{"application/json": map[string]any{
				"schema":  map[string]any{"$ref": "#/components/schemas/Problem"},
				"example": example,
			}},
		}
		if e.RetryAfter {
			r["headers"] = map[string]any{"Retry-After": map[string]any{
				"description": "Seconds to wait before retrying.",
				"schema":      map[string]any{"type": "integer"},
			}}
		}
		out[e.Name] = r
	}
	return out
}

// errorExampleText is the example error message of each status.
var errorExampleText = map[toolenv.Status]string{
	toolenv.StatusInvalidArguments: "the arguments do not match the tool's input schema (1 problem)",
	toolenv.StatusUnauthorized:     "this server needs a token",
	toolenv.StatusNotFound:         "the API found nothing for these arguments",
	toolenv.StatusGone:             "this API is retired",
	toolenv.StatusTooLarge:         "request body over the server's limit of 1048576 bytes",
	toolenv.StatusRateLimited:      "rate limited",
	toolenv.StatusInternal:         "internal error",
	toolenv.StatusUpstreamError:    "the upstream API answered 500",
	toolenv.StatusUnavailable:      "no backend could answer",
	toolenv.StatusTimeout:          "the backend did not answer within 30s",
}

// problemSchemas are the schemas of toolenv's JSON error body.
func problemSchemas() map[string]any {
	var statuses []string
	for _, e := range ErrorResponses {
		for _, s := range e.Statuses {
			statuses = append(statuses, string(s))
		}
	}
	sort.Strings(statuses)
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	return map[string]any{
		"Problem": map[string]any{
			"type":        "object",
			"description": "toolenv's error body: what failed, how to fix it, and one entry per argument problem.",
			"required":    []string{"status", "error"},
			"properties": map[string]any{
				"status": map[string]any{"type": "string", "description": "What kind of failure: " + strings.Join(statuses, ", ") + " (and, for requests refused before routing, forbidden or unsupported_media_type).", "examples": []any{"invalid_arguments"}},
				"error":  str("What was wrong."),
				"hint":   str("How to fix it."),
				"problems": map[string]any{
					"type": "array", "description": "One entry per argument problem (invalid_arguments).",
					"items": map[string]any{"$ref": "#/components/schemas/ArgumentProblem"},
				},
				"source":   str("Where the answer came from: cache, upstream, simulator, synthesizer, live, toolenv."),
				"warnings": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Notes on the call (deprecations, lenient pass-throughs)."},
				"faults":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Faults injected into the call (a Prefer header's among them)."},
			},
		},
		"ArgumentProblem": map[string]any{
			"type":     "object",
			"required": []string{"param", "code", "message"},
			"properties": map[string]any{
				"param":    str("The argument, dotted for nested ones."),
				"code":     str("missing_required, unknown_param, wrong_type, not_in_enum, out_of_range or bad_format."),
				"message":  str("What is wrong with it."),
				"expected": str("What it should be."),
			},
		},
	}
}
