package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/server"
)

// birdSlotSel builds SLOT and SEL over one BIRD database.
var birdSlotSel struct {
	once sync.Once
	dir  string
	err  error
}

func builtSlotSel(t *testing.T) string {
	t.Helper()
	data := shareddata.Require(t, "bird")
	birdSlotSel.once.Do(func() {
		birdSlotSel.dir, birdSlotSel.err = os.MkdirTemp("", "toolenv-server-slotsel-")
		if birdSlotSel.err == nil {
			_, birdSlotSel.err = nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: birdSlotSel.dir,
				DBs: []string{"student_club"}, Flavors: []string{"slot", "sel"}, ImageCache: imageCache})
		}
	})
	if birdSlotSel.err != nil {
		t.Fatal(birdSlotSel.err)
	}
	return birdSlotSel.dir
}

// TestMCPSessionlessTaskSessions plays BIRD tasks of SLOT and SEL,
// served together, over plain MCP with the go-sdk's client at 2026-07-28
// (no session): the setup call, named by its MCP name, mints a session
// whose handle its result carries, and every later call passes it as
// the session argument listed in each tool's schema; two tasks run side
// by side in their own sessions. A call without the handle is told to
// pass it; the setup tool's own name (shared by the two collections)
// gets an error naming both MCP names; and a failing call's hint names
// the setup tool as MCP names it (a 2025-11-25 client, with a session).
func TestMCPSessionlessTaskSessions(t *testing.T) {
	out := builtSlotSel(t)
	url := serveEnv(t, &environment.Config{Store: ":memory:",
		Collections: []string{filepath.Join(out, "slot"), filepath.Join(out, "sel")}})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "trainer", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q", v)
	}
	names := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names[tl.Name] = tl
	}
	for _, flavor := range []string{"slot", "sel"} {
		coll := "bird-" + flavor
		tasks := readTasks(t, filepath.Join(out, flavor, "tasks.jsonl"))
		if len(tasks) < 2 {
			t.Fatalf("%s: %d tasks", coll, len(tasks))
		}
		mcpName := func(tool string) string {
			for _, n := range []string{tool, coll + "__" + tool} {
				if tl := names[n]; tl != nil && tl.Meta[server.MCPMetaTool] == coll+"/"+tool {
					return n
				}
			}
			if tool == sqltools.InitTool {
				return coll + "__" + tool // hidden: not listed, prefixed as its namesakes are
			}
			t.Fatalf("%s/%s is not listed", coll, tool)
			return ""
		}
		for _, task := range tasks[:2] {
			t.Run(task.ID, func(t *testing.T) {
				init, err := sqltools.InitCalls(task)
				if err != nil || len(init) == 0 {
					t.Fatalf("init calls: %v", err)
				}
				handle := ""
				var last *mcp.CallToolResult
				for i, g := range append(append([]toolenv.GoldCall(nil), init...), task.Gold...) {
					args := map[string]any{}
					for k, v := range g.Args {
						args[k] = v
					}
					if g.Label != "" {
						args["label"] = g.Label
					}
					if i > 0 {
						if tl := names[mcpName(g.Name)]; tl != nil && !strings.Contains(string(mustJSON(t, tl.InputSchema)), `"`+server.MCPSessionArg+`"`) {
							t.Fatalf("%s lists no %q argument: %s", tl.Name, server.MCPSessionArg, mustJSON(t, tl.InputSchema))
						}
						if i == 1 {
							// Without the handle: told to pass it.
							res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(g.Name), Arguments: args})
							if err != nil || !res.IsError || !strings.Contains(callText(res), fmt.Sprintf("%q argument", server.MCPSessionArg)) {
								t.Fatalf("a call without its session: %v %s", err, callText(res))
							}
						}
						args[server.MCPSessionArg] = handle
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpName(g.Name), Arguments: args})
					if err != nil || res.IsError {
						t.Fatalf("call %d (%s): %v %s", i+1, g.Name, err, callText(res))
					}
					if i == 0 {
						handle, _ = res.Meta[server.MCPMetaSession].(string)
						if !strings.HasPrefix(handle, "ts-") || !strings.Contains(callText(res), handle) {
							t.Fatalf("the setup call's result carries no session handle: %v %s", res.Meta, callText(res))
						}
					} else if res.Meta[server.MCPMetaSession] != handle {
						t.Fatalf("call %d ran in session %v, want %s", i+1, res.Meta[server.MCPMetaSession], handle)
					}
					last = res
				}
				var answer struct{ Rows [][]any }
				if err := json.Unmarshal(task.Answer, &answer); err != nil {
					t.Fatal(err)
				}
				for _, row := range answer.Rows {
					for _, v := range row {
						if s := fmt.Sprint(v); !strings.Contains(callText(last), s) {
							t.Errorf("the last result lacks the answer's %q: %.300s", s, callText(last))
						}
					}
				}
			})
		}
	}
	// The setup tool's own name: an error naming both MCP names.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: sqltools.InitTool, Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "bird-slot__"+sqltools.InitTool) || !strings.Contains(err.Error(), "bird-sel__"+sqltools.InitTool) {
		t.Errorf("calling %s: %v", sqltools.InitTool, err)
	}
	// A session client calling a SLOT tool before the setup call: the
	// hint names the setup tool's MCP name, which answers.
	old, err := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	res, err := old.CallTool(ctx, &mcp.CallToolParams{Name: "bird-slot__group_data_by", Arguments: map[string]any{"data_source": "$starting_table$", "key_name": "member_first_name"}})
	text := callText(res)
	if err != nil || !res.IsError || !strings.Contains(text, "bird-slot__"+sqltools.InitTool) || strings.Contains(strings.ReplaceAll(text, "bird-slot__"+sqltools.InitTool, ""), sqltools.InitTool) {
		t.Errorf("a call before the setup call: %v %s", err, text)
	}
}

func readTasks(t *testing.T, path string) []*toolenv.Task {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*toolenv.Task
	for line := range bytes.Lines(raw) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var task toolenv.Task
		if err := toolenv.DecodeJSON(line, &task); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, &task)
	}
	return tasks
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// callText is the text of a result's content blocks.
func callText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
