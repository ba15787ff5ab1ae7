package environment_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
)

// An MCP server saved as a collection folder and a tools file: here the
// demo, served over MCP by another environment.
func ExampleSaveMCP() {
	ctx := context.Background()
	up, _ := environment.Open(ctx, nil) // the demo
	defer up.Close()
	h, _ := up.Handler()
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "example-mcp-save-")
	defer os.RemoveAll(dir)
	cfg := environment.Default()
	cfg.Store = ":memory:"
	cfg.MCPSources.Servers = []string{"weather=" + srv.URL + "/mcp"}
	saved, err := environment.SaveMCP(ctx, cfg, filepath.Join(dir, "mcp"), filepath.Join(dir, "tools.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range saved {
		col, err := toolenv.ReadCollection(s.Dir)
		fmt.Println(s.Name, s.Tools, filepath.Base(s.Dir), col.Name, len(col.Tools), err)
	}
	_, err = os.Stat(filepath.Join(dir, "tools.json"))
	fmt.Println("tools file:", err == nil)
	// Output:
	// weather 6 weather weather 6 <nil>
	// tools file: true
}
