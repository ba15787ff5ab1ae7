package simulate

import (
	"bytes"
	"encoding/json"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// The turns below are what a Simulator with the MirrorAPI prompts and
// RequestTraining sends and expects, exported so that training data for
// a simulator (toolenv mirror export) is written in exactly the form the
// simulator is served in.

// UserTurn is the user turn of MirrorAPI's SFT and CoT modes for a call
// of t with args: "API doc:\n{doc}\n\nRequest:\n{request}", both as
// Python's str() writes them, the request in the training form
// ({'category', 'tool_name', 'api_name', 'tool_input': '<JSON>',
// 'strip': 'filter'}).
func UserTurn(t *toolenv.Tool, args map[string]any) string {
	return mirrorUser(mirrorDoc(t), mirrorRequest(t, args))
}

// DocRepr and RequestRepr are the two parts of UserTurn, for callers
// that render many calls of one tool: UserTurn(t, args) is
// "API doc:\n" + DocRepr(t) + "\n\nRequest:\n" + RequestRepr(t, args).
func DocRepr(t *toolenv.Tool) string { return pyfmt.Repr(mirrorDoc(t)) }

// RequestRepr is the request part of UserTurn.
func RequestRepr(t *toolenv.Tool, args map[string]any) string {
	return pyfmt.Repr(mirrorRequest(t, args))
}

// RequestJSON is the request of a call in the training form, as Python's
// json.dumps writes it.
func RequestJSON(t *toolenv.Tool, args map[string]any) string {
	return pyfmt.Dumps(mirrorRequest(t, args))
}

// AssistantTurn is the SFT mode's answer: {"error": ..., "response": ...}
// as Python's json.dumps writes it, the response decoded from the payload
// (a JSON string stays a string, an object stays an object).
func AssistantTurn(errMsg string, body json.RawMessage) string {
	return envelopeText(errMsg, body)
}

// CoTAssistantTurn is the CoT mode's answer: {"mechanism_of_the_api":
// ..., "error": ..., "response": ...}, the structure CoTSystemPrompt asks
// for, written as AssistantTurn writes the envelope.
func CoTAssistantTurn(mechanism, errMsg string, body json.RawMessage) string {
	var resp any = ""
	if len(bytes.TrimSpace(body)) > 0 {
		if v, err := pyfmt.DecodeOrdered(body); err == nil {
			resp = v
		}
	}
	return pyfmt.Dumps(pyfmt.Dict{{Key: "mechanism_of_the_api", Value: mechanism}, {Key: "error", Value: errMsg}, {Key: "response", Value: resp}})
}
