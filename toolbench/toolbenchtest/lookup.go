package toolbenchtest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed stb_lookup.py
var lookupScript []byte

// Request is a /virtual request as a StableToolBench client sends it.
type Request struct {
	Category  string `json:"category"`
	ToolName  string `json:"tool_name"`
	APIName   string `json:"api_name"`
	ToolInput string `json:"tool_input"`
}

// Request returns the /virtual request that reaches e.
func (e *Entry) Request() Request {
	return Request{Category: e.Category, ToolName: e.ToolName, APIName: e.APIName, ToolInput: e.ToolInput}
}

// LookupResult is what StableToolBench's server finds in its cache for a
// request.
type LookupResult struct {
	Hit  bool   `json:"hit"`
	File string `json:"file"`
	Key  string `json:"key"`
	// Value is the cached {"error", "response"}, NaN and infinities as
	// null (NonFinite says it held some).
	Value     json.RawMessage `json:"value"`
	NonFinite bool            `json:"nonfinite"`
	// Problem says why there was no lookup (no such file, a file
	// json.load cannot read, a tool_input json.loads cannot read).
	Problem string `json:"problem"`
}

// Lookup runs StableToolBench's own cache lookup (stb_lookup.py, which
// follows its server/main.py, with the python3 on PATH and its standard
// library only) for each request on the cache folder dir.
func Lookup(ctx context.Context, dir string, reqs []Request) ([]LookupResult, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("StableToolBench's lookup runs in python3 (standard library only): %w", err)
	}
	tmp, err := os.MkdirTemp("", "stb_lookup")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	script := filepath.Join(tmp, "stb_lookup.py")
	if err := os.WriteFile(script, lookupScript, 0o644); err != nil {
		return nil, err
	}
	job, err := json.Marshal(map[string]any{"cache": dir, "requests": reqs})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, python, script)
	cmd.Stdin = bytes.NewReader(job)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("stb_lookup.py: %w: %s", err, stderr.String())
	}
	var res []LookupResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(reqs) {
		return nil, fmt.Errorf("stb_lookup.py printed %d results for %d requests (%v)", len(res), len(reqs), err)
	}
	return res, nil
}
