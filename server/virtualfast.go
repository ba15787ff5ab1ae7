package server

import (
	"bytes"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// keyMemo memoizes toolbench.ToolInputKeyOf by the raw tool_input, for
// the calls agents repeat (what cache hits are): computing a Python repr
// costs more than the rest of a hit's lookup. It holds up to maxKeys
// inputs of up to maxKeyInput bytes and starts over when full.
type keyMemo struct {
	mu   sync.RWMutex
	keys map[string]memoKey
}

type memoKey struct {
	key string
	ok  bool
}

const (
	maxKeys     = 1 << 12 // with maxKeyInput, at most a few MB
	maxKeyInput = 1 << 9
)

// maxExactKeyInput is the longest tool_input whose exact key (its Python
// repr, StableToolBench's own key) is used: StableToolBench's inputs are
// a few hundred bytes, and the key of a longer one would be a second copy
// of it to build, look up and store on every call (a client may send a
// megabyte of keys); such a call is keyed by its canonical arguments only.
const maxExactKeyInput = 4 << 10

// of returns toolbench.ToolInputKeyOf(raw), or no key for a tool_input
// over maxExactKeyInput.
func (m *keyMemo) of(raw []byte) (string, bool) {
	if len(raw) > maxExactKeyInput {
		return "", false
	}
	if len(raw) == 0 || len(raw) > maxKeyInput { // nil (no tool_input) is not "" to ToolInputKeyOf
		return toolbench.ToolInputKeyOf(raw)
	}
	m.mu.RLock()
	k, found := m.keys[string(raw)]
	m.mu.RUnlock()
	if found {
		return k.key, k.ok
	}
	k.key, k.ok = toolbench.ToolInputKeyOf(raw)
	m.mu.Lock()
	if m.keys == nil || len(m.keys) >= maxKeys {
		m.keys = make(map[string]memoKey)
	}
	m.keys[string(raw)] = k
	m.mu.Unlock()
	return k.key, k.ok
}

// virtualBody is a decoded /virtual request body: what
// DecodeVirtualRequest returns, and the raw tool_input the client's exact
// key is computed from (see toolbench.ToolInputKeyOf).
type virtualBody struct {
	req  *VirtualRequest
	args map[string]any
	// parsed is args's parse, when they were parsed from content (for
	// Call.ArgsFromParse).
	parsed *toolenv.ParsedArgs
	res    *toolenv.Result
	// fast says the body was read by decodeVirtualFast: toolInput is the
	// raw value of its only tool_input member (nil without one).
	fast      bool
	toolInput []byte
	// pending says toolInput is not parsed yet: args and res are unset
	// until parseArgs (see decodeVirtualDeferred).
	pending bool
	// content is a pending tool_input string's content, unescaped into a
	// buffer of its own, once check has found it starts a JSON object
	// (parseArgs parses it then, in place: see toolenv.ParseArgsOwned).
	content []byte
	// unchecked says content is not yet known to be JSON: the parse
	// finds out, and an answer given before it (the tool unknown, a
	// session refused) calls settle first, so that a tool_input that is
	// not JSON is reported first, as always.
	unchecked bool
}

// virtualFields names the members of a /virtual request decodeVirtualFast
// reads, as bits (each may appear once).
var virtualFields = [...]string{"category", "tool_name", "api_name", "strip", "toolbench_key", "tool_input", "toolenv_meta"}

// decodeVirtualFast reads the plain shape every StableToolBench client
// sends, without building the generic map DecodeVirtualRequest does: one
// object whose members are among virtualFields, each once, with the
// string members' values strings without escapes or control characters
// (or null), toolenv_meta a boolean and tool_input a string or null. For
// such a body it returns what DecodeVirtualRequest returns; for any other
// body (malformed, an unknown or repeated member, an escape, a value of
// another type) it reports false, and the caller decodes it the general
// way, which also words any error.
func decodeVirtualFast(body []byte) (virtualBody, bool) {
	vb, ok := decodeVirtualPlain(body)
	if !ok {
		return vb, false
	}
	return vb, vb.parseArgs(nil)
}

// decodeVirtualPlain reads the body as decodeVirtualFast does, all but
// its tool_input's arguments (toolInput holds the raw value).
func decodeVirtualPlain(body []byte) (virtualBody, bool) {
	var vb virtualBody
	req := &VirtualRequest{}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return vb, false
	}
	i = skipSpace(body, i+1)
	var seen uint
	var toolInput []byte
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			k, j, ok := plainString(body, i)
			if !ok {
				return vb, false
			}
			f := -1
			for n, name := range virtualFields {
				if string(k) == name {
					f = n
					break
				}
			}
			if f < 0 || seen&(1<<f) != 0 {
				return vb, false
			}
			seen |= 1 << f
			i = skipSpace(body, j)
			if i >= len(body) || body[i] != ':' {
				return vb, false
			}
			i = skipSpace(body, i+1)
			if i >= len(body) {
				return vb, false
			}
			switch name := virtualFields[f]; {
			case name == "toolenv_meta":
				switch {
				case hasWord(body, i, "true"):
					req.Meta, i = true, i+4
				case hasWord(body, i, "false"):
					i += 5
				default:
					return vb, false
				}
			case hasWord(body, i, "null"):
				i += 4
			case name == "tool_input":
				end, ok := stringEnd(body, i)
				if !ok {
					return vb, false
				}
				toolInput, i = body[i:end], end
			default:
				v, j, ok := plainString(body, i)
				if !ok {
					return vb, false
				}
				i = j
				switch name {
				case "category":
					req.Category = string(v)
				case "tool_name":
					req.ToolName = string(v)
				case "api_name":
					req.APIName = string(v)
				case "strip":
					req.Strip = string(v)
				case "toolbench_key":
					req.ToolbenchKey = string(v)
				}
			}
			i = skipSpace(body, i)
			if i >= len(body) {
				return vb, false
			}
			if body[i] == '}' {
				i++
				break
			}
			if body[i] != ',' {
				return vb, false
			}
			i = skipSpace(body, i+1)
		}
	}
	if skipSpace(body, i) != len(body) || req.ToolName == "" || req.APIName == "" {
		return vb, false // DecodeVirtualRequest words the error
	}
	vb.req, vb.fast, vb.toolInput = req, true, toolInput
	return vb, true
}

// decodeVirtualDeferred decodes a /virtual body as DecodeVirtualRequest
// does, through the fast decoder when the body is of the plain shape it
// reads; such a body comes back with its tool_input not yet parsed into
// arguments (pending): a cache hit under the client's exact key does not
// need them. The caller calls parseArgs before it needs args or res.
func decodeVirtualDeferred(body []byte) virtualBody {
	if vb, ok := decodeVirtualPlain(body); ok {
		vb.pending = true
		return vb
	}
	req, args, res := DecodeVirtualRequest(body)
	return virtualBody{req: req, args: args, res: res}
}

// finish parses a pending tool_input (parseArgs) for a tool of input
// schema s, decoding the body the general way when the fast decoder does
// not read it.
func (vb *virtualBody) finish(body []byte, s *toolenv.Schema) {
	if !vb.pending {
		return
	}
	if !vb.parseArgs(s) {
		req, args, res := DecodeVirtualRequest(body)
		*vb = virtualBody{req: req, args: args, res: res}
	}
}

// check makes sure a pending tool_input gives arguments before the tool
// is known, without parsing them: a string whose content starts a JSON
// object stays pending, its content unescaped once into a buffer that
// parseArgs parses in place knowing the tool's schema
// (toolenv.ParseArgsOwned); whether it is JSON is found out by that
// parse, or by settle when an answer comes before it; anything else is
// finished now, so that its error comes where it always did.
func (vb *virtualBody) check(body []byte) {
	if !vb.pending {
		return
	}
	if vb.toolInput != nil {
		// The string as DecodeVirtualRequest's parser reads it.
		if s, err := toolenv.UnquoteJSON(vb.toolInput); err == nil {
			raw := bytes.TrimSpace(s)
			if len(raw) > 0 && raw[0] == '{' {
				vb.content, vb.unchecked = raw, true
				return
			}
		}
	}
	vb.finish(body, nil)
}

// settle finds out, for an answer given before the arguments are parsed,
// whether a pending tool_input's content is JSON: when it is not, the
// body is finished into the error DecodeVirtualRequest gives (vb.res),
// which the caller answers instead.
func (vb *virtualBody) settle(body []byte) {
	if !vb.unchecked {
		return
	}
	vb.unchecked = false
	if toolenv.CheckJSON(vb.content) != nil {
		vb.content = nil
		vb.finish(body, nil)
	}
}

// parseArgs parses the raw tool_input of a body read by the fast decoder
// into args for a tool of input schema s, or into res, the error
// DecodeVirtualRequest gives for it. It reports false for a tool_input
// the fast decoder does not read (the caller decodes the body the
// general way).
func (vb *virtualBody) parseArgs(s *toolenv.Schema) bool {
	vb.pending = false
	if vb.content != nil {
		// ParseArgs's errors are ParseJSONObject's, word for word: those
		// DecodeVirtualRequest gives.
		pa, err := toolenv.ParseArgsText(vb.content, s, true)
		vb.unchecked = false
		if err != nil {
			vb.res = &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: toolInputParseError + "tool_input is not valid JSON: " + err.Error(),
				Hint: toolInputHint, Source: toolenv.SourcePipeline}
			return true
		}
		vb.args, vb.parsed = pa.Args, pa
		return true
	}
	var ti any
	if vb.toolInput != nil {
		// The string as DecodeVirtualRequest's parser reads it.
		v, err := toolenv.ParseJSON(vb.toolInput)
		if err != nil {
			return false
		}
		ti = v
	}
	args, err := toolInputArgs(ti)
	if err != nil {
		vb.res = &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: toolInputParseError + err.Error(),
			Hint: toolInputHint, Source: toolenv.SourcePipeline}
		return true
	}
	vb.args = args
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func hasWord(b []byte, i int, w string) bool {
	return len(b)-i >= len(w) && string(b[i:i+len(w)]) == w
}

// plainString reads the JSON string at b[i] when it has no escape and no
// control character, returning its contents and the index after it.
func plainString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// stringEnd returns the index after the JSON string starting at b[i],
// skipping its escapes (the parser checks them).
func stringEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
		}
	}
	return 0, false
}
