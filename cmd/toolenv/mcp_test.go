package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// selfAsToolenv returns a command running toolenv with args as a child
// process: this test binary, which TestMain turns into toolenv (main's
// Run, signals and exit code) when TOOLENV_RUN_MAIN=1, so that no test
// links a binary of its own.
func selfAsToolenv(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "TOOLENV_RUN_MAIN=1")
	return cmd
}

// mcpClient connects the SDK's client over t, closing it at the end of
// the test.
func mcpClient(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	return mcpClientAt(t, tr, "")
}

// mcpClientAt connects asking for protocol version (the SDK's newest when
// version is empty).
func mcpClientAt(t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "toolenv-cli-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, tr, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func callText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("result has no content")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	return tc.Text
}

// checkDemoSession runs initialize → tools/list → tools/call against the
// demo collection and returns the toolenv session the calls ran in ("" for
// a client at 2026-07-28, which has none: callers check which they expect).
func checkDemoSession(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"current_weather", "weather_forecast", "exchange_rates"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": "Paris"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := callText(t, res); res.IsError || !strings.Contains(text, `"city":"Paris"`) {
		t.Errorf("success: isError=%v text=%s", res.IsError, text)
	}
	session, _ := res.Meta["toolenv/session"].(string)
	if res.Meta["toolenv/status"] != "ok" {
		t.Errorf("_meta = %v", res.Meta)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "current_weather", Arguments: map[string]any{"city": 7}})
	if err != nil {
		t.Fatalf("invalid arguments must be a result: %v", err)
	}
	if text := callText(t, res); !res.IsError || !strings.Contains(text, "invalid_arguments") || !strings.Contains(text, "`city`") {
		t.Errorf("invalid arguments: isError=%v text=%s", res.IsError, text)
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: err = %v", err)
	}
	return session
}

// TestMCPStdioBinary runs toolenv as a child process serving MCP over
// stdio, the way Claude Desktop and the inspectors start it (the test
// binary as toolenv: see selfAsToolenv; the README's install block, which
// the doc test runs, builds the real one).
func TestMCPStdioBinary(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store.db")
	start := func() (*mcp.ClientSession, *exec.Cmd, *bytes.Buffer) {
		cmd := selfAsToolenv(t, "mcp", "--store", store)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		return mcpClient(t, &mcp.CommandTransport{Command: cmd}), cmd, &stderr
	}
	cs1, cmd1, stderr1 := start()
	cs2, cmd2, _ := start()
	s1 := checkDemoSession(t, cs1)
	s2 := checkDemoSession(t, cs2)
	if s1 == "" || s1 == s2 {
		t.Errorf("two stdio connections must hold one toolenv session each; got %q and %q", s1, s2)
	}
	for i, c := range []struct {
		cs  *mcp.ClientSession
		cmd *exec.Cmd
	}{{cs1, cmd1}, {cs2, cmd2}} {
		// Closing the client ends the server's input: it must exit
		// cleanly.
		if err := c.cs.Close(); err != nil {
			t.Errorf("client %d close: %v", i+1, err)
		}
		if st := c.cmd.ProcessState; st == nil || st.ExitCode() != 0 {
			t.Errorf("server %d did not exit cleanly at end of input: %v", i+1, st)
		}
	}
	if log := stderr1.String(); !strings.Contains(log, "serving MCP over stdio") || !strings.Contains(log, "tools=6") {
		t.Errorf("stderr lacks the start-up log:\n%s", log)
	}
}

// TestMCPStdioInProcess drives "toolenv mcp" through Run with pipes and
// checks that stdout carries nothing but JSON-RPC messages, and that an
// interrupt stops it cleanly.
func TestMCPStdioInProcess(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var wire bytes.Buffer
	var wireMu sync.Mutex
	clientIn, teeW := io.Pipe()
	go func() { // copy stdout to the client, keeping every line
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			wireMu.Lock()
			wire.Write(sc.Bytes())
			wire.WriteByte('\n')
			wireMu.Unlock()
			teeW.Write(append(sc.Bytes(), '\n'))
		}
		teeW.Close()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"mcp", "--store", ":memory:", "--log-level", "debug"}, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	cs := mcpClient(t, &mcp.IOTransport{Reader: clientIn, Writer: inW})
	checkDemoSession(t, cs)

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after an interrupt; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute): // a hang guard, not a speed figure
		t.Fatal("toolenv mcp did not stop after its context was canceled")
	}
	cs.Close()
	wireMu.Lock()
	defer wireMu.Unlock()
	lines := strings.Split(strings.TrimSpace(wire.String()), "\n")
	if len(lines) < 4 {
		t.Fatalf("stdout carried %d lines", len(lines))
	}
	for _, line := range lines {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout line is not a JSON-RPC message: %q", line)
		}
	}
	if !strings.Contains(stderr.String(), "level=DEBUG") {
		t.Errorf("debug logs should reach stderr:\n%s", stderr.String())
	}
}

// TestMCPOverServe connects the SDK's client to /mcp of "toolenv serve":
// two clients at 2025-11-25 get one toolenv session each (the MCP
// session), and a client at the SDK's newest revision (2026-07-28, which
// has no sessions) is served without one.
func TestMCPOverServe(t *testing.T) {
	base, stop := serveInBackground(t, "--store", ":memory:")
	defer stop()
	cs1 := mcpClientAt(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, "2025-11-25")
	defer cs1.Close()
	cs2 := mcpClientAt(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, "2025-11-25")
	defer cs2.Close()
	s1, s2 := checkDemoSession(t, cs1), checkDemoSession(t, cs2)
	if s1 == "" || s1 != cs1.ID() || s2 != cs2.ID() || s1 == s2 {
		t.Errorf("toolenv sessions %q, %q; MCP sessions %q, %q", s1, s2, cs1.ID(), cs2.ID())
	}
	cs3 := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"})
	defer cs3.Close()
	if got := cs3.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Errorf("the SDK's default client negotiated %q, want 2026-07-28", got)
	}
	if s3 := checkDemoSession(t, cs3); s3 != "" || cs3.ID() != "" {
		t.Errorf("a 2026-07-28 client has no session; got toolenv session %q, MCP session %q", s3, cs3.ID())
	}
}

func TestMCPBadNaming(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"mcp", "--names", "short", "--store", ":memory:"}, strings.NewReader(""), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), `--names: "short" is not one of`) || !strings.Contains(errb.String(), "auto, prefixed") || out.Len() != 0 {
		t.Errorf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestMCPStdioSurvivesHostileInput feeds toolenv mcp, as a client could
// over stdio, a second initialize (which once killed the process with
// exit 2), lines that are not JSON-RPC, a request before initialize, an
// unknown method and a batch where the protocol has none: each is
// answered with a JSON-RPC error, the session goes on (the ping after
// them is answered), and the end of the input is a clean exit.
func TestMCPStdioSurvivesHostileInput(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`this is not JSON`,
		`{"jsonrpc":"2.0","id":4,"method":`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/frobnicate"}`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := Run(context.Background(), []string{"mcp", "--store", ":memory:"}, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	go func() {
		for _, l := range lines {
			io.WriteString(inW, l+"\n")
		}
	}()
	type answer struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	got := map[string]int64{}
	var nullCodes []int64
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m answer
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("not a JSON-RPC message: %q", sc.Text())
		}
		code := int64(0)
		if m.Error != nil {
			code = m.Error.Code
		}
		if string(m.ID) == "null" {
			nullCodes = append(nullCodes, code)
		} else {
			got[string(m.ID)] = code
		}
		if len(got) == 5 && len(nullCodes) == 3 {
			inW.Close() // all answered; the end of the input is a clean stop
		}
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute): // a hang guard, not a speed figure
		t.Fatal("toolenv mcp did not stop at the end of its input")
	}
	want := map[string]int64{"1": -32600, "2": 0, "3": -32600, "5": -32601, "7": 0}
	for id, c := range want {
		if g, ok := got[id]; !ok || g != c {
			t.Errorf("id %s: code %d (answered %v), want %d", id, g, ok, c)
		}
	}
	if !slices.Equal(nullCodes, []int64{-32700, -32700, -32600}) {
		t.Errorf("answers without an id: codes %v, want two parse errors and the refused batch", nullCodes)
	}
}
