package environment

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/server"
)

// ServeStdio serves the MCP server (MCPServer) over in and out, the stdio
// transport of MCP clients that start their servers as commands ("toolenv
// mcp"), until the client ends the session or ctx ends; both are a clean
// stop and return nil. It calls Ready before the first message. out is
// never closed (the caller may still write to it); in is closed at the
// end of the session when it is an io.Closer, so that an interrupt
// unblocks a pending read.
func (env *Environment) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	srv, err := env.MCPServer()
	if err != nil {
		return err
	}
	tools := 0
	for _, c := range env.Collections() {
		tools += len(c.Tools)
	}
	env.log.Info("toolenv is serving MCP over stdio", "collections", len(env.Collections()), "tools", tools, "names", env.Config.MCP.Names, "store", env.Store.Path())
	env.Ready()
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	// toolenv's stdio transport answers a line that holds no message
	// (the SDK's IOTransport ends the session on one).
	err = srv.Run(ctx, &server.MCPStdioTransport{Reader: rc, Writer: out})
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		env.log.Info("MCP client disconnected")
		return nil
	case ctx.Err() != nil:
		return nil // interrupted: a clean stop
	}
	return fmt.Errorf("mcp over stdio: %w", err)
}
