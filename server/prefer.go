package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/store"
)

// RecordedAnswers is what the server reads recorded answers from, to show
// them as examples in OpenAPI documents (store.Store implements it).
type RecordedAnswers interface {
	// Examples returns up to limit successful recorded answers of the
	// tool with ID tool.
	Examples(ctx context.Context, tool string, limit int) ([]*store.Entry, error)
}

// recordedPerTool is how many recorded answers a document shows per tool.
const recordedPerTool = 2

// recorded returns the recorded answers of each tool (nil when the server
// has no store), as DocumentOptions.Recorded takes them.
func (s *Server) recorded(ctx context.Context) func(*toolenv.Tool) []toolenv.Example {
	if s.opts.Recorded == nil {
		return nil
	}
	return func(t *toolenv.Tool) []toolenv.Example {
		entries, err := s.opts.Recorded.Examples(ctx, t.ID, recordedPerTool)
		if err != nil {
			s.log.Debug("recorded answers for the OpenAPI document", "tool", t.ID, "err", err)
			return nil
		}
		var out []toolenv.Example
		for _, e := range entries {
			args, err := toolenv.ParseJSONObject([]byte(e.Args))
			if err != nil || e.Status != toolenv.StatusOK || !json.Valid(e.Body) {
				continue
			}
			out = append(out, toolenv.Example{Args: args, Response: e.Body})
		}
		return out
	}
}

// The Prefer header (RFC 7240) on REST routes asks, as Prism's mock
// server does, for one of the operation's documented responses instead
// of a real answer: "code=404" for a documented error status (with
// toolenv's problem body), "example=NAME" for a documented answer (the
// names of the OpenAPI document's examples: example1… for the
// documentation's, recorded1… for recorded ones). Other preferences are
// ignored, as the RFC says. The arguments are validated first, so a bad
// call keeps its 400 (an unknown parameter with its did-you-mean). No
// backend is called and nothing is cached; the answer carries the fault
// "prefer:code=404" (X-Toolenv-Fault), which metrics count like other
// injected faults.

// preference is what a Prefer header asks for.
type preference struct {
	code    int
	example string
}

// parsePrefer reads the code and example preferences of Prefer headers;
// ok is false when they ask for neither.
func parsePrefer(values []string) (p preference, ok bool, res *toolenv.Result) {
	for _, v := range values {
		for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
			k, val, _ := strings.Cut(strings.TrimSpace(tok), "=")
			k = strings.ToLower(strings.TrimSpace(k))
			val = strings.Trim(strings.TrimSpace(val), `"`)
			switch k {
			case "code":
				n, err := strconv.Atoi(val)
				if err != nil || n < 100 || n > 599 {
					return p, false, toolenv.Errorf(toolenv.StatusBadRequest, "write Prefer: code=NNN with a status code the operation documents (see its OpenAPI document)", "Prefer: code=%q is not an HTTP status code", val)
				}
				p.code, ok = n, true
			case "example":
				if val == "" {
					return p, false, toolenv.Errorf(toolenv.StatusBadRequest, "write Prefer: example=NAME with a name from the operation's examples in its OpenAPI document", "Prefer: example= names no example")
				}
				p.example, ok = val, true
			}
		}
	}
	return p, ok, nil
}

// servePreferred answers a REST call whose Prefer header asks for a
// documented response.
func (s *Server) servePreferred(w http.ResponseWriter, r *http.Request, call *toolenv.Call, p preference) {
	call.RequestID = s.newRequestID()
	answer := func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		return s.preferred(ctx, call, p)
	}
	var obs invoke.Observer
	if s.opts.Metrics != nil {
		obs = s.opts.Metrics
	}
	h := toolenv.Chain(toolenv.HandlerFunc(answer), invoke.Observe(obs, s.log), invoke.Validate(&s.validator))
	res := h.Invoke(r.Context(), call)
	setResultHeaders(w.Header(), res)
	if !res.OK() {
		code := 0
		if c, err := strconv.Atoi(res.Meta[metaPreferCode]); err == nil {
			code = c
		}
		writeError(w, code, res)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(res.Body)
}

const metaPreferCode = "prefer_code"

// preferred is the documented response p asks for, or a 400 naming what
// the operation documents.
func (s *Server) preferred(ctx context.Context, call *toolenv.Call, p preference) *toolenv.Result {
	t := call.Tool
	errs := openapi.ErrorResponsesOf(t)
	codes := []string{"200"}
	for _, e := range errs {
		codes = append(codes, strconv.Itoa(e.Code))
	}
	if p.code != 0 && p.code != http.StatusOK {
		i := slices.IndexFunc(errs, func(e openapi.ErrorResponse) bool { return e.Code == p.code })
		if i < 0 {
			return preferRefused(fmt.Sprintf("ask for one of %s", strings.Join(codes, ", ")),
				"Prefer: code=%d is not a response %s documents (documented: %s)", p.code, t.Name, strings.Join(codes, ", "))
		}
		if p.example != "" {
			return preferRefused("leave out example=, or ask for code=200 with it", "Prefer: example= selects a documented answer (code 200), not a %d", p.code)
		}
		e := errs[i]
		res := toolenv.Errorf(e.Statuses[0], "leave out the Prefer header for a real answer",
			"the documented %d response that Prefer: code=%d asked for: no call was made", p.code, p.code)
		if e.RetryAfter {
			res.RetryAfter = time.Second
		}
		res.Source = toolenv.SourcePipeline
		res.Faults = []string{"prefer:code=" + strconv.Itoa(p.code)}
		res.SetMeta(metaPreferCode, strconv.Itoa(p.code))
		res.SetMeta("cacheable", "false")
		return res
	}
	if p.example == "" {
		return nil // code=200 alone: a real answer
	}
	recorded := s.recorded(ctx)
	var rec []toolenv.Example
	if recorded != nil {
		rec = recorded(t)
	}
	body, ok := openapi.ExampleAnswer(t, rec, p.example)
	if !ok {
		names := openapi.ExampleNames(t, rec)
		if len(names) == 0 {
			return preferRefused("leave out example=: this operation has no documented answers", "Prefer: example=%q: %s documents no example answers", p.example, t.Name)
		}
		return preferRefused(fmt.Sprintf("ask for one of %s", strings.Join(names, ", ")),
			"Prefer: example=%q is not an example %s documents (documented: %s)", p.example, t.Name, strings.Join(names, ", "))
	}
	res := &toolenv.Result{Status: toolenv.StatusOK, Body: body, Source: toolenv.SourcePipeline, Faults: []string{"prefer:example=" + p.example}}
	res.SetMeta("cacheable", "false")
	return res
}

func preferRefused(hint, format string, args ...any) *toolenv.Result {
	res := toolenv.Errorf(toolenv.StatusBadRequest, hint, format, args...)
	res.Source = toolenv.SourcePipeline
	res.SetMeta(metaPreferCode, "400")
	return res
}
