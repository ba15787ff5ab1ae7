package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"

	toolenv "github.com/toolenv/toolenv"
)

// MCPArguments keeps the arguments of large tools/call requests, which the
// HTTP handler reads ahead of the MCP SDK: the SDK decodes a request's
// params several times (the message, its _meta, the call's params, a
// depth check), so a call of a megabyte of arguments cost six passes over
// them before toolenv parsed them once more. The handler checks them
// (one scan), keeps their text here under a random handle for the length
// of the request, and hands the SDK the call with a small object naming
// the handle in their place; the tool handler takes them back and parses
// them once, knowing the tool's schema (toolenv.ParseArgs). Share one
// between NewMCPServer (MCPOptions.Arguments) and NewMCPHandler
// (MCPHTTPOptions.Arguments); without one, arguments go through the SDK.
// Safe for concurrent use.
type MCPArguments struct {
	mu   sync.Mutex
	args map[string]mcpStashed
	// schema gives the input schema of the tool a tools/call names, so
	// that stash parses its arguments there and then (one pass, which
	// checks them too); ok false: the tool is not called through
	// toolenv.ParseArgsText (unknown, the search tool, an MCP source's).
	// Set by NewMCPServer; nil: arguments are only checked.
	schema func(name string) (s *toolenv.Schema, ok bool)
}

// mcpStashed is what stash keeps of one call's arguments.
type mcpStashed struct {
	text   []byte              // the span of a request body no one else holds
	parsed *toolenv.ParsedArgs // the parse of text, with schema; nil: not parsed
	schema *toolenv.Schema
}

// NewMCPArguments returns an empty MCPArguments.
func NewMCPArguments() *MCPArguments {
	return &MCPArguments{args: map[string]mcpStashed{}}
}

// resolveWith sets the function that gives the input schema of the tool
// a tools/call names (see MCPArguments.schema).
func (a *MCPArguments) resolveWith(schema func(name string) (*toolenv.Schema, bool)) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.schema = schema
	a.mu.Unlock()
}

// mcpStashMin is the size from which a tools/call's arguments are read
// ahead of the SDK: below it the SDK's passes cost less than the splice.
const mcpStashMin = 16 << 10

// mcpStashKey names the handle in the object that stands for stashed
// arguments.
const mcpStashKey = "toolenv/stashed_arguments"

// stash replaces the arguments of a single tools/call message body of at
// least mcpStashMin bytes by a handle, keeping their checked text. It returns the
// body to pass on and the function that forgets the arguments when the
// request is done; a body it does not change comes back as it is
// (arguments that are not a JSON object are left for the SDK and the
// handler to refuse). The body need not be valid JSON: what it replaces
// is exactly one valid object, by another, so the body it returns is
// valid JSON exactly when the one it was given is, and is checked as
// such after.
func (a *MCPArguments) stash(body []byte) ([]byte, func()) {
	none := func() {}
	if a == nil || len(body) < mcpStashMin || body[0] != '{' {
		return body, none
	}
	method, ok := memberSpan(body, "method")
	if !ok || string(body[method[0]:method[1]]) != `"tools/call"` {
		return body, none
	}
	// The arguments are found without skipping over them (nor over the
	// params holding them) before the one scan that checks them and
	// finds their end.
	params, ok := memberStart(body, "params")
	if !ok || body[params] != '{' {
		return body, none
	}
	rel, ok := memberStart(body[params:], "arguments")
	start := params + rel
	if !ok || body[start] != '{' || len(body)-start < mcpStashMin {
		return body, none
	}
	// What is kept is the span of the body itself, not a copy: the body
	// passed on is a new one, so no one else reads or writes this one
	// (see take). When the tool is known, the arguments are parsed for
	// it at once (the parse checks them); else, or when that parse
	// refuses them, CutRawJSON checks them, as the SDK would.
	kept, end := a.parseAhead(body, params, start)
	if kept.parsed == nil {
		_, n, err := toolenv.CutRawJSON(body[start:])
		end = start + n
		if err != nil || end-start < mcpStashMin {
			return body, none
		}
		kept = mcpStashed{text: body[start:end:end]}
	}
	var b [16]byte
	rand.Read(b[:])
	handle := hex.EncodeToString(b[:])
	a.mu.Lock()
	a.args[handle] = kept
	a.mu.Unlock()
	out := make([]byte, 0, start+64+len(body)-end)
	out = append(out, body[:start]...)
	out = append(out, `{"`+mcpStashKey+`":"`+handle+`"}`...)
	out = append(out, body[end:]...)
	return out, func() {
		a.mu.Lock()
		delete(a.args, handle)
		a.mu.Unlock()
	}
}

// parseAhead parses the arguments starting at body[start] (an object's
// '{') for the tool the params at body[params] name, when schema knows
// it: the kept arguments (parsed nil when not parsed) and their end.
func (a *MCPArguments) parseAhead(body []byte, params, start int) (mcpStashed, int) {
	a.mu.Lock()
	schemaOf := a.schema
	a.mu.Unlock()
	if schemaOf == nil {
		return mcpStashed{}, 0
	}
	nameAt, ok := memberSpan(body[params:], "name")
	if !ok {
		return mcpStashed{}, 0
	}
	var name string
	lit := body[params+nameAt[0] : params+nameAt[1]]
	if len(lit) < 2 || lit[0] != '"' || json.Unmarshal(lit, &name) != nil {
		return mcpStashed{}, 0
	}
	s, ok := schemaOf(name)
	if !ok {
		return mcpStashed{}, 0
	}
	// skipValue finds the end of a valid object; the parse checks that
	// what it spans is exactly one.
	end := skipValue(body, start)
	if end-start < mcpStashMin {
		return mcpStashed{}, 0
	}
	text := body[start:end:end]
	pa, err := toolenv.ParseArgsText(text, s, true)
	if err != nil || pa.Args == nil {
		return mcpStashed{}, 0
	}
	return mcpStashed{text: text, parsed: pa, schema: s}, end
}

// take returns the arguments raw stands for when it is the object stash
// put in their place for a request still being served: the text of the
// request's body, which the caller then owns (it is neither written nor
// read by anyone else, so a parse may keep strings pointing into it:
// toolenv.ParseArgsText's owned), and their parse when stash made it.
func (a *MCPArguments) take(raw json.RawMessage) (mcpStashed, bool) {
	raw = bytes.TrimSpace(raw)
	if a == nil || len(raw) > 128 || !bytes.Contains(raw, []byte(mcpStashKey)) {
		return mcpStashed{}, false
	}
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return mcpStashed{}, false
	}
	handle, ok := m[mcpStashKey]
	if !ok {
		return mcpStashed{}, false
	}
	a.mu.Lock()
	args, ok := a.args[handle]
	delete(a.args, handle)
	a.mu.Unlock()
	return args, ok
}

// memberSpan returns the byte span of the value of the member name of the
// JSON object data, [start, end), reading the object's members' keys and
// skipping their values (data that is not JSON gives spans that are not
// either, or none).
func memberSpan(data []byte, name string) ([2]int, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return [2]int{}, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return [2]int{}, false
		}
		kEnd := skipValue(data, i)
		key := data[i:kEnd]
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return [2]int{}, false
		}
		i = skipSpace(data, i+1)
		vEnd := skipValue(data, i)
		if vEnd <= i {
			return [2]int{}, false
		}
		if keyIs(key, name) {
			return [2]int{i, vEnd}, true
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) || data[i] != ',' {
			return [2]int{}, false
		}
		i++
	}
}

// memberStart is memberSpan giving only where the value starts, without
// skipping over it.
func memberStart(data []byte, name string) (int, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return 0, false
		}
		kEnd := skipValue(data, i)
		key := data[i:kEnd]
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		i = skipSpace(data, i+1)
		if i >= len(data) {
			return 0, false
		}
		if keyIs(key, name) {
			return i, true
		}
		vEnd := skipValue(data, i)
		if vEnd <= i {
			return 0, false
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) || data[i] != ',' {
			return 0, false
		}
		i++
	}
}

// keyIs reports whether the JSON string literal key is name.
func keyIs(key []byte, name string) bool {
	if len(key) == len(name)+2 && string(key[1:len(key)-1]) == name {
		return true
	}
	if !bytes.Contains(key, []byte{'\\'}) {
		return false
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}

// skipValue returns the end of the JSON value starting at i (the end of
// data at the latest).
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		for i++; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipValue(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(data) && data[i] != ',' && data[i] != '}' && data[i] != ']' && data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
		i++
	}
	return i
}
