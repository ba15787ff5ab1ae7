package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/toolbench"
)

// VirtualRequest is StableToolBench's /virtual request body (its server's
// Info model) without tool_input, which DecodeVirtualRequest returns as
// the call's arguments: tool_input may be an object, a JSON string holding
// one, or "".
type VirtualRequest struct {
	Category     string `json:"category"`
	ToolName     string `json:"tool_name"`
	APIName      string `json:"api_name"`
	Strip        string `json:"strip"`
	ToolbenchKey string `json:"toolbench_key"`
	// Meta asks for toolenv's account of the answer in the response
	// (request field "toolenv_meta": true): see VirtualMetaField.
	Meta bool `json:"toolenv_meta,omitempty"`
}

// VirtualMetaField is the response member that carries, when the request
// asks for it with "toolenv_meta": true, where the answer came from
// (status, source, origin, warnings and details such as the synthesizer's
// rule), the facts REST sends in X-Toolenv-* headers. It is never sent
// unasked: StableToolBench's client (rapidapi.py) shows the model
// json.dumps of the whole response object, so any member added by default
// would change every observation.
const VirtualMetaField = "toolenv"

// toolInputParseError is StableToolBench's own error text for a tool_input
// that is not JSON; toolenv adds what was wrong after it.
const toolInputParseError = "Tool input parse error...\n"

// toolInputHint is the hint given with toolInputParseError.
const toolInputHint = `tool_input must be a JSON object, or a string holding one, e.g. "{\"q\": \"x\"}"`

// DecodeVirtualRequest decodes a /virtual body. It returns the request and
// its arguments, or an error Result: StatusBadRequest for a body that is
// not a JSON object or lacks category, tool_name or api_name, and
// StatusInvalidArguments for a tool_input that is not a JSON object (the
// way StableToolBench reports it).
func DecodeVirtualRequest(body []byte) (*VirtualRequest, map[string]any, *toolenv.Result) {
	v, err := toolenv.ParseJSON(body)
	obj, isObj := v.(map[string]any)
	if err != nil || !isObj {
		if err == nil {
			err = errors.New("want a JSON object")
		}
		return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest,
			`send one JSON object: {"category": ..., "tool_name": ..., "api_name": ..., "tool_input": {...}}`,
			"the request body is not a /virtual request: %v", err)
	}
	var req VirtualRequest
	var missing, notString []string
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{{"category", &req.Category, false}, {"tool_name", &req.ToolName, true}, {"api_name", &req.APIName, true},
		{"strip", &req.Strip, false}, {"toolbench_key", &req.ToolbenchKey, false}} {
		switch x := obj[f.name].(type) {
		case string:
			*f.dst = x
		case nil:
		default:
			notString = append(notString, f.name)
		}
		if f.required && *f.dst == "" {
			missing = append(missing, f.name)
		}
	}
	if m, ok := obj["toolenv_meta"].(bool); ok {
		req.Meta = m
	}
	if len(notString) > 0 {
		return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest, "category, tool_name, api_name, strip and toolbench_key are strings", "%v must be strings", notString)
	}
	if len(missing) > 0 {
		return nil, nil, toolenv.Errorf(toolenv.StatusBadRequest, "tool_name and api_name are required strings (category too, unless the tool and API are unambiguous)", "the request lacks %v", missing)
	}
	args, err := toolInputArgs(obj["tool_input"])
	if err != nil {
		return &req, nil, &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: toolInputParseError + err.Error(),
			Hint: toolInputHint, Source: toolenv.SourcePipeline}
	}
	return &req, args, nil
}

// toolInputArgs accepts what StableToolBench's server accepts: an object,
// a string holding an object, or an empty string (no arguments).
func toolInputArgs(ti any) (map[string]any, error) {
	switch x := ti.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return x, nil
	case string:
		raw := bytes.TrimSpace([]byte(x))
		if len(raw) == 0 {
			return map[string]any{}, nil
		}
		if raw[0] != '{' {
			return nil, errors.New("tool_input must be a JSON object (or a string holding one), not " + kindOf(raw))
		}
		m, err := toolenv.ParseJSONObject(raw)
		if err != nil {
			return nil, fmt.Errorf("tool_input is not valid JSON: %w", err)
		}
		return m, nil
	case []any:
		return nil, errors.New("tool_input must be a JSON object (or a string holding one), not an array")
	case bool:
		return nil, errors.New("tool_input must be a JSON object (or a string holding one), not a boolean")
	}
	return nil, errors.New("tool_input must be a JSON object (or a string holding one), not a number")
}

func kindOf(raw []byte) string {
	switch raw[0] {
	case '"':
		return "a JSON string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number or malformed JSON"
}

// handleVirtual serves StableToolBench's POST /virtual: the answer is
// always {"error": ..., "response": ...}, with HTTP 200 for everything a
// StableToolBench server answers with 200 (including unknown APIs and
// invalid arguments, which it reports in "error") and 400/413 for bodies
// that are not requests at all.
func (s *Server) handleVirtual(w http.ResponseWriter, r *http.Request) {
	// The body is read into a pooled buffer: nothing keeps a reference to
	// it past this handler (decoding copies what it keeps).
	bp := bodyBuffers.Get().(*[]byte)
	rd := r.Body
	if r.ContentLength < 0 || r.ContentLength > s.opts.MaxBodyBytes {
		// A body of a declared length within the limit cannot pass it
		// (net/http stops at the length): only the others need the
		// MaxBytesReader, which also closes the connection of one over.
		rd = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	}
	buf := (*bp)[:0]
	if n := r.ContentLength; n > int64(cap(buf)) && n <= s.opts.MaxBodyBytes {
		buf = make([]byte, 0, n+1) // a large body read in one go, not grown by copies
	}
	body, err := readAllInto(buf, rd)
	defer func() {
		if cap(body) <= maxPooledBody {
			*bp = body[:0]
			bodyBuffers.Put(bp)
		}
	}()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeVirtual(w, http.StatusRequestEntityTooLarge, &toolenv.Result{Status: toolenv.StatusTooLarge,
				Error: fmt.Sprintf("request body over the server's limit of %d bytes", s.opts.MaxBodyBytes), Source: toolenv.SourcePipeline})
			return
		}
		writeVirtual(w, http.StatusBadRequest, toolenv.Errorf(toolenv.StatusBadRequest, "", "reading the request body: %v", err))
		return
	}
	v := s.views.Load()
	if p := v.plans.get(body); p != nil && s.serveVirtualHit(w, r, &v.plans, p) {
		return
	}
	// A tool_input the client's exact key is made of is a JSON object,
	// whose arguments a hit in memory does not need: they are parsed
	// after it misses. Otherwise they are parsed now, so that errors
	// come in the order they always did.
	vb := decodeVirtualDeferred(body)
	exact, exactOK := "", false
	if vb.pending {
		if exact, exactOK = s.keys.of(vb.toolInput); !exactOK {
			vb.check(body)
		}
	}
	req, res := vb.req, vb.res
	if res != nil && res.Status == toolenv.StatusBadRequest {
		writeVirtual(w, http.StatusBadRequest, res)
		return
	}
	// StableToolBench's special API, recognised as its server does: by the
	// normalised name, before tool_input is read (its input is a message
	// to the user, not JSON).
	reply := writeVirtual200
	if req.Meta {
		reply = writeVirtualMeta
	}
	if isChatWithUser(req) {
		reply(w, &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`"Chat with user."`), Source: toolenv.SourcePipeline})
		return
	}
	if res != nil {
		reply(w, res)
		return
	}
	tool, err := v.resolve(req.Category, req.ToolName, req.APIName)
	if err != nil {
		if vb.settle(body); vb.res != nil { // a tool_input that is not JSON is reported first
			reply(w, vb.res)
			return
		}
		reply(w, toolenv.ResultOf(err))
		return
	}
	call := &toolenv.Call{
		Tool:       tool,
		Collection: s.opts.Registry.Collection(tool.Collection),
		Args:       vb.args,
		Frontend:   "virtual",
		RequestID:  s.newRequestID(),
	}
	if exactOK {
		// What this body comes to, for the next time it is sent.
		v.plans.put(body, s.newPlan(req, tool, call.Collection, exact))
	}
	if vb.unchecked && !sessionless(r, call) {
		// A session is not issued nor taken for a tool_input that is
		// not JSON.
		if vb.settle(body); vb.res != nil {
			reply(w, vb.res)
			return
		}
	}
	release, res := s.callSession(w, r, call)
	if res != nil {
		code := http.StatusOK // as /virtual answers every failed call
		if res.Status == toolenv.StatusUnavailable {
			code = http.StatusServiceUnavailable
		}
		writeVirtual(w, code, res)
		return
	}
	defer release()
	if req.ToolbenchKey != "" {
		call.Meta = map[string]string{"toolbench_key": req.ToolbenchKey}
	}
	if call.Collection != nil && call.Collection.Policy.Cache {
		// Recorded answers are found under the client's own key first.
		k, ok := exact, exactOK
		switch {
		case vb.pending:
		case vb.fast:
			k, ok = s.keys.of(vb.toolInput)
		case len(body) <= maxExactKeyInput:
			k, ok = toolbench.ToolInputKey(body)
		}
		if ok {
			if call.Meta == nil {
				call.Meta = map[string]string{}
			}
			call.Meta[invoke.CallMetaExactKey] = k
		}
	}
	if s.cached != nil {
		if res, ok := s.cached.InvokeCached(r.Context(), call); ok {
			reply(w, res)
			return
		}
	}
	if vb.pending {
		vb.finish(body, call.Tool.Input)
		if vb.res != nil { // not seen: a tool_input with a key parses (TestDecodeVirtualFastAsGeneral)
			if vb.res.Status == toolenv.StatusBadRequest {
				writeVirtual(w, http.StatusBadRequest, vb.res)
			} else {
				reply(w, vb.res)
			}
			return
		}
		call.Args = vb.args
		if vb.parsed != nil && vb.content != nil {
			call.ArgsFromParse(vb.parsed) // the cache key from tool_input's parse
		}
	}
	reply(w, s.noteOutputMismatch(call.Tool, s.invoke(r.Context(), call)))
}

func writeVirtual200(w http.ResponseWriter, res *toolenv.Result) { writeVirtual(w, http.StatusOK, res) }

// writeVirtualMeta writes a /virtual answer with its VirtualMetaField.
func writeVirtualMeta(w http.ResponseWriter, res *toolenv.Result) {
	res = res.Bounded(0)
	out := VirtualResponse(res)
	meta := struct {
		Status   toolenv.Status    `json:"status"`
		Source   toolenv.Source    `json:"source,omitempty"`
		Warnings []string          `json:"warnings,omitempty"`
		Faults   []string          `json:"faults,omitempty"`
		Details  map[string]string `json:"meta,omitempty"`
	}{res.Status, res.Source, res.Warnings, res.Faults, res.Meta}
	raw, err := toolenv.MarshalJSONNoHTML(meta)
	if err == nil {
		out = append(append(append(out[:len(out)-1], `,"`+VirtualMetaField+`":`...), raw...), '}')
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setResultHeaders(h, res)
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// isChatWithUser reports whether req names StableToolBench's
// chat_with_user once its server's normalisation is applied.
func isChatWithUser(req *VirtualRequest) bool {
	if req.APIName == "chat_with_user" {
		return true
	}
	if !strings.Contains(strings.ToLower(req.APIName), "chat") { // the hot path: no normalising
		return false
	}
	return toolbench.Normalize(req.Category, req.ToolName, req.APIName).API == "chat_with_user"
}

// VirtualResponse renders a Result in StableToolBench's wire format,
// {"error": ..., "response": ...}. Failures toolenv itself detected carry
// the exact error strings StableToolBench's client maps to its status
// codes, with toolenv's explanation in "response"; errors an API (or its
// simulation) returned pass through unchanged.
func VirtualResponse(res *toolenv.Result) []byte {
	return appendVirtualResponse(nil, res)
}

// appendVirtualResponse appends VirtualResponse(res) to out.
func appendVirtualResponse(out []byte, res *toolenv.Result) []byte {
	errMsg, body := res.Error, res.Body
	if !res.OK() {
		if code, ok := stbError[res.Status]; ok && (res.Source == toolenv.SourcePipeline || res.Source == "" || res.Error == "") {
			explain := res.Error
			if res.Hint != "" {
				explain += " (" + res.Hint + ")"
			}
			errMsg = code
			body, _ = toolenv.MarshalJSONNoHTML(explain)
		} else if res.Hint != "" && res.Source == toolenv.SourcePipeline {
			errMsg += "\n" + res.Hint
		}
		if errMsg == "" {
			errMsg = string(res.Status)
		}
	}
	if len(body) == 0 {
		body = json.RawMessage(`""`)
	}
	out = slices.Grow(out, len(errMsg)+len(body)+32)
	out = append(out, `{"error":`...)
	if errMsg == "" {
		out = append(out, `""`...)
	} else {
		out = toolenv.AppendJSONString(out, errMsg)
	}
	out = append(out, `,"response":`...)
	out = append(out, body...)
	out = append(out, '}')
	return out
}

func writeVirtual(w http.ResponseWriter, code int, res *toolenv.Result) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	setResultHeaders(h, res)
	w.WriteHeader(code)
	// The answer is built in a pooled buffer: Write copies it out.
	bp := responseBuffers.Get().(*[]byte)
	out := appendVirtualResponse((*bp)[:0], res)
	w.Write(out)
	if cap(out) <= maxPooledResponse {
		*bp = out
		responseBuffers.Put(bp)
	}
}

// bodyBuffers holds the buffers /virtual request bodies are read into;
// one grown past maxPooledBody is left to the collector.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBody = 64 << 10

// readAllInto is io.ReadAll appending to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// responseBuffers holds the buffers /virtual answers are built in; one
// grown past maxPooledResponse is left to the collector.
var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledResponse = 64 << 10
