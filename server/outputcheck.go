package server

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/schemacheck"
	"github.com/toolenv/toolenv/invoke"
)

// Every front-end reports an answer that breaks its tool's documented
// output schema the same way, and says who made it: the API (a live
// answer, or one recorded from it), or toolenv itself (its offline
// synthesizer, its simulator, a live SQL backend), which is never blamed
// on the API. REST gives such an answer with its 200 and a warning
// (X-Toolenv-Warning) that reads as MCP's error text; MCP, whose clients
// reject structured content that breaks the listed schema, gives it as
// an error result with the same words (mcp_output.go).

// outputChecks compiles tools' output schemas once, for the REST
// front-end (MCP keeps its own per catalog).
type outputChecks struct {
	m sync.Map // *toolenv.Schema → *schemacheck.Checker (nil: does not compile)
}

// check returns how body breaks tool's output schema, or nil when it
// conforms, the tool has none, or it does not compile.
func (oc *outputChecks) check(tool *toolenv.Tool, body []byte) []string {
	if tool == nil || tool.Output == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var c *schemacheck.Checker
	if v, ok := oc.m.Load(tool.Output); ok {
		c, _ = v.(*schemacheck.Checker)
	} else {
		c, _ = schemacheck.Compile(tool.Output)
		oc.m.Store(tool.Output, c)
	}
	if c == nil {
		return nil
	}
	return c.Check(body)
}

// answerMaker says who made a result's answer, for a message: the API, or
// toolenv and how (never the API for an answer toolenv made).
func answerMaker(res *toolenv.Result) (who string, byToolenv bool) {
	src := res.Source
	if src == toolenv.SourceCache {
		switch toolenv.Source(res.Meta[invoke.MetaOrigin]) {
		case toolenv.SourceSimulator:
			return "a recorded answer of toolenv's simulator (a model playing the API, not the API)", true
		case toolenv.SourceSynthesizer:
			return "a recorded answer of toolenv's offline synthesizer (not the API)", true
		case toolenv.SourceLive:
			return "a recorded answer of toolenv's live backend", true
		}
		return "a recorded answer of the API", false
	}
	switch src {
	case toolenv.SourceSynthesizer:
		return "toolenv's offline synthesizer (not the API)", true
	case toolenv.SourceSimulator:
		return "toolenv's simulator (a model playing the API, not the API)", true
	case toolenv.SourceLive:
		return "toolenv's live backend", true
	case toolenv.SourcePipeline:
		return "toolenv", true
	}
	return "the API", false
}

// outputMismatch is the sentence both front-ends report an answer that
// breaks its output schema with (without the problems).
func outputMismatch(res *toolenv.Result) string {
	who, byToolenv := answerMaker(res)
	if !byToolenv && who == "the API" {
		return "output_mismatch: the API answered, but not as its documented output schema says"
	}
	if !byToolenv {
		return "output_mismatch: " + who + " does not match the tool's documented output schema"
	}
	return "output_mismatch: the answer was made by " + who + ", and it does not match the tool's documented output schema"
}

// noteOutputMismatch returns a successful result whose answer breaks its
// tool's output schema with a warning saying so (a copy: results may be
// shared by a cache), and any other result as it is.
func (s *Server) noteOutputMismatch(tool *toolenv.Tool, res *toolenv.Result) *toolenv.Result {
	if tool == nil || tool.Output == nil || !res.OK() {
		return res
	}
	problems := s.outputs.check(tool, res.Body)
	if problems == nil {
		return res
	}
	c := *res
	c.Warnings = append(slices.Clip(res.Warnings), outputMismatch(res)+": "+strings.Join(problems, "; "))
	return &c
}
