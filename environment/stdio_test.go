package environment

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeStdio drives ServeStdio as an MCP client that started it as a
// command would: over a pair of pipes, listing the demo's tools and
// calling one; the end of the client's input is a clean stop, and the
// output is left open.
func TestServeStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	done := make(chan error, 1)
	out := &closeSpy{Writer: outW}
	go func() { done <- env.ServeStdio(ctx, inR, out) }()

	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v (%d tools)", err, len(list.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather_forecast", Arguments: map[string]any{"city": "Paris", "days": 2}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio after the client left: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after the client left")
	}
	if out.closed {
		t.Error("ServeStdio closed its output")
	}
}

// closeSpy is an output that says whether it was closed.
type closeSpy struct {
	io.Writer
	closed bool
}

func (c *closeSpy) Close() error {
	c.closed = true
	return nil
}
