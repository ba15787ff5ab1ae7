package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/npmtest"
)

// conformanceDir holds the fixture collection, its faults and the
// baselines of the MCP conformance suite (examples/mcp-conformance).
const conformanceDir = "../../examples/mcp-conformance"

// conformanceVersions are the revisions the suite runs at: the last one
// with sessions and the sessionless one.
var conformanceVersions = []string{"2025-11-25", "2026-07-28"}

// conformanceBaseline is the baseline of a revision: the scenarios (or a
// scenario's checks) toolenv's own server does not pass, each with its
// reason.
func conformanceBaseline(version string) string {
	return filepath.Join(conformanceDir, "baseline-"+version+".yml")
}

// scenarioDir matches a scenario's output folder: server-<name>-<time>.
var scenarioDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$`)

// suiteRun is one run of the suite: each scenario and whether all its
// checks passed (a warning, which the suite's baselines count as a
// failure, is not a pass), the suite's output and its exit error.
type suiteRun struct {
	passed map[string]bool
	output []byte
	err    error
}

// count returns how many scenarios passed of how many ran.
func (r suiteRun) count() (passed, ran int) {
	for _, ok := range r.passed {
		if ok {
			passed++
		}
	}
	return passed, len(r.passed)
}

// names returns the scenarios whose outcome is ok, sorted.
func (r suiteRun) names(ok bool) []string {
	var out []string
	for n, p := range r.passed {
		if p == ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// runConformance runs every scenario of the official MCP conformance
// suite (@modelcontextprotocol/conformance, pinned in testdata/npm) at
// version against the MCP endpoint url (--suite all: the pending ones
// too), with baseline as its expected failures when given.
func runConformance(t *testing.T, tools npmtest.Tools, url, version, baseline string) suiteRun {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"server", "--url", url, "--spec-version", version, "--suite", "all", "-o", out}
	if baseline != "" {
		args = append(args, "--expected-failures", baseline)
	}
	output, err := npmtest.Run(tools.Command(ctx, "conformance", args...))
	run := suiteRun{passed: map[string]bool{}, output: output, err: err}
	dirs, _ := os.ReadDir(out)
	for _, d := range dirs {
		m := scenarioDir.FindStringSubmatch(d.Name())
		if m == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		var checks []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		ok := len(checks) > 0
		for _, c := range checks {
			ok = ok && c.Status != "FAILURE" && c.Status != "WARNING"
		}
		run.passed[m[1]] = ok
	}
	if len(run.passed) == 0 {
		t.Fatalf("the suite ran no scenario at %s (%v):\n%s", version, err, output)
	}
	return run
}

// TestMCPConformance runs the official MCP conformance suite at 2025-11-25
// and 2026-07-28 against toolenv serve holding the suite's fixture tools
// as an ordinary collection (examples/mcp-conformance/openapi.yaml):
// every scenario passes but those of the revision's baseline, which fail
// for the reasons written there (the suite fails on a failure not in
// the baseline, and on a baseline entry that passes).
func TestMCPConformance(t *testing.T) {
	t.Parallel() // waits on the node suite
	tools := npmtest.Require(t)
	base, stop := serveInBackground(t, "--store", ":memory:",
		"--openapi", "conformance="+filepath.Join(conformanceDir, "openapi.yaml"),
		"--faults", filepath.Join(conformanceDir, "faults.json"))
	t.Cleanup(func() { stop() }) // after the revisions' subtests, which run in parallel
	for _, version := range conformanceVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel() // the suite's runs wait on their scenarios
			run := runConformance(t, tools, base+"/mcp", version, conformanceBaseline(version))
			passed, ran := run.count()
			t.Logf("%d of %d scenarios pass at %s; baselined: %v", passed, ran, version, run.names(false))
			if run.err != nil {
				t.Errorf("the conformance suite failed at %s: %v\n%s", version, run.err, run.output)
			}
		})
	}
}

// conformanceNoReplay are the scenarios of the suite's reference server
// that pass behind toolenv while the server runs but cannot pass from
// toolenv's recordings once it is gone, because what they check is the
// server's own live exchange with the client, which no recording stands
// in for (docs/mcp-sources.md lists them with the reasons).
var conformanceNoReplay = map[string][]string{
	"2025-11-25": {
		"tools-call-with-logging", "tools-call-with-progress", // notifications sent during the call
		"tools-call-sampling", "tools-call-elicitation", "elicitation-sep1034-defaults", "elicitation-sep1330-enums", // the client's answers
		"resources-subscribe", "resources-unsubscribe", // live change notifications
	},
	"2026-07-28": {
		"server-stateless",         // the server's own refusal of an undeclared capability
		"tools-call-with-progress", // notifications sent during the call
		"input-required-result-basic-elicitation", "input-required-result-basic-sampling", "input-required-result-basic-list-roots",
		"input-required-result-request-state", "input-required-result-multiple-input-requests", "input-required-result-multi-round",
		"input-required-result-non-tool-request", "input-required-result-result-type", "input-required-result-tampered-state",
		"input-required-result-capability-check", "input-required-result-missing-input-response",
		"input-required-result-validate-input", // the client's answers, and the server's check of them
	},
}

var (
	refOnce sync.Once
	refDir  string
	refErr  string
)

// referenceServer builds the suite's reference server (the go-sdk's
// conformance/everything-server, from the module cache) once for the
// tests of this process, in a folder TestMain removes at the end.
func referenceServer(t *testing.T) string {
	t.Helper()
	refOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolenv-everything-server-")
		if err != nil {
			refErr = err.Error()
			return
		}
		refDir = dir
		args := append([]string{"build"}, sameTrimpath()...)
		args = append(args, "-o", filepath.Join(dir, "everything-server"), "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			refErr = fmt.Sprintf("%v\n%s", err, out)
		}
	})
	if refErr != "" {
		t.Fatalf("building the reference server: %s", refErr)
	}
	return filepath.Join(refDir, "everything-server")
}

// sameTrimpath is -trimpath when this test binary was built with it (as
// .ci/run builds it): the child build then finds the packages the test
// binaries compiled in the build cache instead of compiling the standard
// library and the SDK again under other keys.
func sameTrimpath() []string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-trimpath" && s.Value == "true" {
				return []string{"-trimpath"}
			}
		}
	}
	return nil
}

// removeReferenceServer removes the shared reference server, if one was
// built.
func removeReferenceServer() {
	if refDir != "" {
		os.RemoveAll(refDir)
	}
}

// TestMCPConformanceProxy runs the suite against its own reference server
// (the go-sdk's conformance/everything-server, built from the module
// cache) alone and behind toolenv serve --mcp-server, at 2025-11-25
// (the server keeps sessions) and 2026-07-28 (it is stateless): every
// scenario it passes alone passes behind toolenv, its sampling,
// elicitation, roots, progress, logs, input requests, resources,
// subscriptions, prompts and completions reaching the suite's client.
// Then the server is stopped and toolenv serves again from the same
// store: every scenario passes from the recordings but those of
// conformanceNoReplay.
func TestMCPConformanceProxy(t *testing.T) {
	t.Parallel() // waits on the node suite and the reference server
	tools := npmtest.Require(t)
	ref := referenceServer(t)
	for _, version := range conformanceVersions {
		t.Run(version, func(t *testing.T) {
			t.Parallel() // each revision has its own servers; the suite's runs wait on their scenarios
			url, stopRef := startReference(t, ref, version >= "2026-07-28")
			alone := runConformance(t, tools, url, version, "")
			passedAlone, ran := alone.count()
			t.Logf("the reference server alone: %d of %d scenarios", passedAlone, ran)
			if passedAlone == 0 {
				t.Fatalf("the reference server passes nothing alone:\n%s", alone.output)
			}

			store := filepath.Join(t.TempDir(), "store.db")
			base, stop := serveInBackground(t, "--store", store, "--mcp-server", "ref="+url)
			behind := runConformance(t, tools, base+"/mcp", version, "")
			stop()
			passedBehind, _ := behind.count()
			t.Logf("behind toolenv: %d of %d scenarios", passedBehind, len(behind.passed))
			for _, name := range alone.names(true) {
				if !behind.passed[name] {
					t.Errorf("%s passes alone but not behind toolenv", name)
				}
			}

			stopRef()
			base, stop = serveInBackground(t, "--store", store, "--mcp-server", "ref="+url, "--mcp-start-timeout", "2s")
			replay := runConformance(t, tools, base+"/mcp", version, "")
			stop()
			passedReplay, _ := replay.count()
			t.Logf("from recordings, the server gone: %d of %d scenarios; not: %v", passedReplay, len(replay.passed), replay.names(false))
			for _, name := range alone.names(true) {
				want := !slices.Contains(conformanceNoReplay[version], name)
				if replay.passed[name] != want {
					t.Errorf("%s from recordings: passed %v, want %v (conformanceNoReplay and docs/mcp-sources.md list those that cannot pass)", name, replay.passed[name], want)
				}
			}
			if t.Failed() {
				t.Logf("behind toolenv:\n%s\nfrom recordings:\n%s", behind.output, replay.output)
			}
		})
	}
}

// referenceName is the name the reference server gives in its
// initialize answer: what tells it from another test's server.
const referenceName = "mcp-conformance-test-server"

// startReference starts the reference server over streamable HTTP on a
// loopback port (stateless or keeping sessions) and waits until it
// answers an MCP initialize as itself; stop ends it (also at the end of
// the test). The server listens on an address it is given, so the port
// is chosen before it binds: should another process take the port
// meanwhile (the reference server then exits, or the port answers as
// something else), it starts again on another.
func startReference(t *testing.T, bin string, stateless bool) (url string, stop func()) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a hang guard: a busy machine starts slowly
	for attempt := 1; ; attempt++ {
		url, stop, why := tryReference(t, bin, stateless, freeAddr(t), deadline)
		if why == "" {
			return url, stop
		}
		if attempt == 5 || time.Now().After(deadline) {
			t.Fatalf("the reference server did not start (attempt %d): %s", attempt, why)
		}
		t.Logf("the reference server, attempt %d: %s; trying another port", attempt, why)
	}
}

// tryReference is one attempt of startReference, on addr: why says what
// went wrong, empty when the server answers as itself.
func tryReference(t *testing.T, bin string, stateless bool, addr string, deadline time.Time) (url string, stop func(), why string) {
	t.Helper()
	cmd := exec.Command(bin, "-http", addr, fmt.Sprintf("-stateless=%t", stateless))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(stop)
	url = "http://" + addr + "/mcp"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolenv-test","version":"0"}}}`
	for {
		select {
		case err := <-exited:
			stopped = true
			return "", nil, fmt.Sprintf("it exited (%v): the port %s was taken?", err, addr)
		default:
		}
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if strings.Contains(string(body), referenceName) {
				return url, stop, ""
			}
			stop()
			return "", nil, fmt.Sprintf("%s answers as another server (%d %.200s)", addr, resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Sprintf("no answer on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReferenceStartRefusesAThief: a port another server took before the
// reference server could bind it is not taken for the reference server
// (startReference then tries another port), whether the reference server
// exits first or the other server answers first.
func TestReferenceStartRefusesAThief(t *testing.T) {
	t.Parallel()
	ref := referenceServer(t)
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"toolenv"}}}`)
	}))
	defer thief.Close()
	addr := strings.TrimPrefix(thief.URL, "http://")
	url, _, why := tryReference(t, ref, true, addr, time.Now().Add(time.Minute))
	if why == "" {
		t.Fatalf("the server on %s was taken for the reference server (%s)", addr, url)
	}
	t.Logf("refused: %s", why)
	url, stop := startReference(t, ref, true)
	defer stop()
	if url == "http://"+addr+"/mcp" {
		t.Errorf("startReference chose the taken port %s", addr)
	}
}
