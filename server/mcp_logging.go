package server

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

// mcpLogger names the logger of the log messages toolenv sends clients.
const mcpLogger = "toolenv"

// The server declares MCP's logging capability: once a client sets a
// level (logging/setLevel; the SDK sends nothing before), each of its
// tools/call requests is followed by log messages about that call, on
// the call's own stream:
//
//   - debug: the call was received, naming the tool it resolved to;
//   - notice: each fault injected into it;
//   - warning: each warning of its result (a deprecated tool, an answer
//     synthesized offline, a lenient pass-through);
//   - info: its outcome (status, source, latency), warning when it
//     failed, error when toolenv failed.
//
// Every message's data is an object with "message" and the call's
// "tool" and "request" ids, so a client can match them to its calls.

// mcpLogLevels remembers the level each session set (logging/setLevel),
// so that a call of a session that set none costs nothing. It holds
// sessions weakly.
type mcpLogLevels struct {
	mu     sync.Mutex
	levels map[weak.Pointer[mcp.ServerSession]]mcp.LoggingLevel
}

func (l *mcpLogLevels) set(ss *mcp.ServerSession, level mcp.LoggingLevel) {
	key := weak.Make(ss)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.levels == nil {
		l.levels = map[weak.Pointer[mcp.ServerSession]]mcp.LoggingLevel{}
	}
	if _, ok := l.levels[key]; !ok {
		runtime.AddCleanup(ss, l.forget, key)
	}
	l.levels[key] = level
}

func (l *mcpLogLevels) forget(key weak.Pointer[mcp.ServerSession]) {
	l.mu.Lock()
	delete(l.levels, key)
	l.mu.Unlock()
}

func (l *mcpLogLevels) get(ss *mcp.ServerSession) mcp.LoggingLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.levels[weak.Make(ss)]
}

// logging reports whether a call's client wants log messages: it set a
// level for its session, or (the 2026-07-28 protocol) its request names
// one.
func (f *mcpFrontend) logging(req *mcp.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	if req.Params != nil {
		if l, ok := req.Params.Meta[mcp.MetaKeyLogLevel].(string); ok && l != "" {
			return true
		}
	}
	return f.logLevels.get(req.Session) != ""
}

// logCall sends ss a log message about a call at level.
func (f *mcpFrontend) logCall(ctx context.Context, ss *mcp.ServerSession, level mcp.LoggingLevel, call *toolenv.Call, msg string, extra ...any) {
	if ss == nil {
		return
	}
	data := map[string]any{"message": msg, "tool": call.Tool.ID, "request": call.RequestID}
	for i := 0; i+1 < len(extra); i += 2 {
		if k, ok := extra[i].(string); ok {
			data[k] = extra[i+1]
		}
	}
	if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: mcpLogger, Data: data}); err != nil {
		f.log.Debug("log message to an MCP client not sent", "err", err)
	}
}

// logResult sends ss the log messages of a finished call.
func (f *mcpFrontend) logResult(ctx context.Context, ss *mcp.ServerSession, call *toolenv.Call, res *toolenv.Result) {
	if ss == nil {
		return
	}
	for _, fault := range res.Faults {
		f.logCall(ctx, ss, "notice", call, "fault injected: "+fault)
	}
	for _, w := range res.Warnings {
		f.logCall(ctx, ss, "warning", call, w)
	}
	level := mcp.LoggingLevel("info")
	switch {
	case res.Status == toolenv.StatusInternal:
		level = "error"
	case !res.OK():
		level = "warning"
	}
	msg := fmt.Sprintf("%s answered %s", call.Tool.ID, res.Status)
	if res.Source != "" {
		msg += " from " + string(res.Source)
	}
	latency := float64(res.Latency.Microseconds()) / 1000
	msg += fmt.Sprintf(" in %.1f ms", latency)
	f.logCall(ctx, ss, level, call, msg, "status", string(res.Status), "source", string(res.Source), "latency_ms", latency)
}
