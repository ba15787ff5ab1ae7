package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/npmtest"
)

// conformanceDir holds the fixture collection, its faults and the
// baseline of the MCP conformance suite (examples/mcp-conformance).
const conformanceDir = "../../examples/mcp-conformance"

// conformancePasses are the suite's server scenarios that apply to a
// server offering toolenv's capabilities (tools, resources, logging):
// every one must pass. The others are in baseline.yml with the reason
// for each; the suite fails on a baseline entry that passes.
var conformancePasses = []string{
	"server-initialize", "ping", "logging-set-level",
	"tools-list", "tools-call-simple-text", "tools-call-error", "tools-call-with-logging",
	"resources-list", "server-sse-multiple-streams", "dns-rebinding-protection",
}

// TestMCPConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in testdata/npm) against
// toolenv serve holding the suite's fixture tools as an ordinary
// collection (examples/mcp-conformance/openapi.yaml): every scenario
// passes but those of baseline.yml, which fail for the reasons written
// there.
func TestMCPConformance(t *testing.T) {
	tools := npmtest.Require(t)
	base, stop := serveInBackground(t, "--store", ":memory:",
		"--openapi", "conformance="+filepath.Join(conformanceDir, "openapi.yaml"),
		"--faults", filepath.Join(conformanceDir, "faults.json"))
	defer stop()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := tools.Command(ctx, "conformance", "server", "--url", base+"/mcp",
		"--expected-failures", filepath.Join(conformanceDir, "baseline.yml"), "-o", out)
	output, err := npmtest.Run(cmd)
	if err != nil {
		t.Fatalf("the conformance suite failed: %v", err)
	}
	// Each scenario's checks are in <out>/server-<scenario>-<time>/checks.json.
	passed := map[string]bool{}
	dirs, _ := os.ReadDir(out)
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		for _, name := range conformancePasses {
			if !strings.HasPrefix(d.Name(), "server-"+name+"-") {
				continue
			}
			ok := len(checks) > 0
			for _, c := range checks {
				ok = ok && c.Status == "SUCCESS"
			}
			passed[name] = ok
		}
	}
	for _, name := range conformancePasses {
		if !passed[name] {
			t.Errorf("scenario %s did not pass every check", name)
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", output)
	}
}
