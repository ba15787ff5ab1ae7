package environment

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
)

// TestWatchHotLoadsADriftedVersion serves a collection folder with
// --watch, writes a drifted version over it (as toolenv drift --force
// does), and checks that a real MCP client is told the tool list changed,
// lists the new version's tools, and that the drift is enforced (a call
// under an old name is refused, the new name answers). A folder that
// stops loading leaves the served version in place.
func TestWatchHotLoadsADriftedVersion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	if err := toolenv.WriteCollection(dir, c); err != nil {
		t.Fatal(err)
	}
	env, err := Open(context.Background(), &Config{Collections: []string{dir}, Watch: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	srv, err := env.MCPServer()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	changed := make(chan struct{}, 8)
	// The SDK's Connect returns before the server has registered the
	// client's subscriptions/listen (2026-07-28 protocol): the folder is
	// changed only once the server acknowledged it, or the notification
	// could be sent to nobody.
	acked := make(chan struct{})
	var ackOnce sync.Once
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ackOnce.Do(func() { close(acked) })
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		select {
		case <-acked:
		case <-ctx.Done():
			t.Fatalf("the server never acknowledged the client's subscriptions/listen: %v", ctx.Err())
		}
	}
	defer env.WatchInBackground(ctx, env.Config.Watch)()

	// The next version, written over the folder.
	lin := drift.NewLineage(c)
	d, err := drift.Drift(lin, drift.Options{Seed: 7, Operators: []string{"endpoint"}, Rates: map[string]float64{"endpoint": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := drift.Write(dir, d, drift.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("no notifications/tools/list_changed after the folder changed: %v", ctx.Err())
	}
	var listed []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tl.Name)
	}
	renamed := 0
	for _, old := range c.Tools {
		now, _, _ := d.Lineage.Manifest.Forward("v1", old.Name, nil)
		if now == old.Name {
			continue
		}
		renamed++
		if slices.Contains(listed, old.Name) || !slices.Contains(listed, now) {
			t.Errorf("after the hot-load %s → %s: listed %v", old.Name, now, listed)
		}
	}
	if renamed == 0 {
		t.Fatal("the drift renamed no tool")
	}
	if v := env.Registry.Collection("demo").Version; v != "v2" {
		t.Errorf("served version %q, want v2", v)
	}
	// Enforced: each renamed tool answers under its new name with its
	// documented example call, and its old name is refused.
	for _, old := range c.Tools {
		now, _, _ := d.Lineage.Manifest.Forward("v1", old.Name, nil)
		if now == old.Name || len(old.Examples) == 0 {
			continue
		}
		args := old.Examples[0].Args
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: now, Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("calling %s (was %s) with %v: %v %+v", now, old.Name, args, err, res)
		}
		// Refused: unknown, or a stub that says where the API went.
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: old.Name, Arguments: args})
		if err == nil && (!res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, now)) {
			t.Errorf("the old name %s still answers after the hot-load: %+v", old.Name, res.Content[0])
		}
	}

	// A folder that no longer loads: the served version stays.
	if err := os.WriteFile(filepath.Join(dir, toolenv.ToolsFile), []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Reload(ctx, dir); err == nil || !strings.Contains(err.Error(), "the served version stays") {
		t.Errorf("reloading a broken folder: %v", err)
	}
	if v := env.Registry.Collection("demo").Version; v != "v2" {
		t.Errorf("after a failed hot-load the served version is %q, want v2", v)
	}
}
