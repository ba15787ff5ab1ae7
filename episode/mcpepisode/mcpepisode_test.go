package mcpepisode_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/mcpepisode"
)

const (
	tokenA = "alice-0123456789abcdef0123456789abcdef"
	tokenB = "bobby-0123456789abcdef0123456789abcdef"
)

type served struct {
	env *environment.Environment
	eps *episode.Env
	url string
}

func serve(t *testing.T, opts episode.Options) *served {
	t.Helper()
	dir := t.TempDir()
	f := episodetest.Corpus(t, dir, 13)
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{
		Collections: []string{f["slot"], f["sel"], f["rest"]},
		Store:       filepath.Join(dir, "store.db"),
		Server:      environment.ServerConfig{AuthTokenEnv: "TOKENS"},
		Getenv:      func(k string) string { return map[string]string{"TOKENS": tokenA + "," + tokenB}[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	eps, err := episode.New(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eps.Close() })
	g, _ := env.Guard()
	mux := http.NewServeMux()
	mux.Handle("/openenv/mcp", g.Handler(mcpepisode.NewHandler(eps, mcpepisode.Options{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &served{env: env, eps: eps, url: srv.URL + "/openenv/mcp"}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session at 2025-11-25, where a session is the
// episode (the sessionless protocol is sessionless_test.go's).
func connect(ctx context.Context, endpoint, token string, q url.Values) (*mcp.ClientSession, error) {
	return connectAt(ctx, endpoint, token, q, "2025-11-25")
}

// connectAt connects the go-sdk's client asking for protocol version
// (its newest, 2026-07-28, when "").
func connectAt(ctx context.Context, endpoint, token string, q url.Values, version string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "trainer", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint + "?" + q.Encode(),
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

// structured decodes a result's structured content.
func structured(t *testing.T, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// playMCP runs the oracle of task as an MCP client: an MCP session is
// the episode.
func playMCP(t *testing.T, endpoint string, coll *toolenv.Collection, task *toolenv.Task) map[string]any {
	t.Helper()
	ctx := context.Background()
	s, err := connect(ctx, endpoint, tokenA, url.Values{"collection": {coll.Name}, "task_id": {task.ID}})
	if err != nil {
		t.Fatalf("%s: connect: %v", task.ID, err)
	}
	defer s.Close()
	if !strings.Contains(s.InitializeResult().Instructions, task.Query) {
		t.Fatalf("%s: the instructions do not hold the query: %q", task.ID, s.InitializeResult().Instructions)
	}
	o := episodetest.NewOracle(coll, task)
	for {
		g, ok, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		args := g.Args
		if g.Label != "" && coll.Tool(g.Name).LabelArg() != "" {
			args = withLabel(args, coll.Tool(g.Name).LabelArg(), g.Label)
		}
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: g.Name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %s: %v %s", task.ID, g.Name, err, text(r))
		}
		o.Observe(g.Label, json.RawMessage(text(r)))
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("%s: submit_answer: %v %s", task.ID, err, text(r))
	}
	return structured(t, r)
}

func withLabel(args map[string]any, key, label string) map[string]any {
	out := map[string]any{key: label}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// TestOracleOverMCP: through the official MCP Go SDK client, the oracle
// reaches reward 1.0 on every task of the SLOT, SEL and REST builds.
func TestOracleOverMCP(t *testing.T) {
	s := serve(t, episode.Options{})
	for _, coll := range s.env.Collections() {
		tasks := s.env.Tasks[coll.Name]
		for _, task := range tasks {
			out := playMCP(t, s.url, coll, task)
			if out["reward"] != 1.0 || out["done"] != true || out["success_kind"] != "completion" {
				t.Fatalf("%s %s: %v", coll.Name, task.ID, out)
			}
		}
		t.Logf("%s: %d tasks at reward 1 over MCP", coll.Name, len(tasks))
	}
	// A session's end ends its episode (as soon as the SDK notices).
	deadline := time.Now().Add(2 * time.Minute) // a hang guard, not a pace: a busy machine may take long
	for s.eps.Open() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.eps.Open(); n != 0 {
		t.Fatalf("%d episodes still open after their sessions closed", n)
	}
}

// TestMCPBadInput: an unknown task refuses the session; a tool not
// offered is a protocol error; a step after the end and a final answer
// of the wrong shape are error results that change nothing; another
// client cannot use the session.
func TestMCPBadInput(t *testing.T) {
	s := serve(t, episode.Options{MaxSteps: 2})
	ctx := context.Background()
	coll := s.env.Registry.Collection("bird-slot")
	task := s.env.Tasks[coll.Name][0]
	if _, err := connect(ctx, s.url, tokenA, url.Values{"collection": {coll.Name}, "task_id": {"nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown task: %v", err)
	}
	if _, err := connect(ctx, s.url, tokenA, url.Values{"collection": {coll.Name}, "tsak_id": {task.ID}}); err == nil || !strings.Contains(err.Error(), "task_id") {
		t.Fatalf("misspelt option: %v", err)
	}
	sess, err := connect(ctx, s.url, tokenA, url.Values{"collection": {coll.Name}, "task_id": {task.ID}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	if !names[episode.SubmitTool] || !names[mcpepisode.GetTaskTool] || !names[task.Gold[0].Name] {
		t.Fatalf("tools %v", names)
	}
	gt, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.GetTaskTool, Arguments: map[string]any{}})
	if err != nil || structured(t, gt)["query"] != task.Query {
		t.Fatalf("get_task: %v %v", err, gt)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "not_offered", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a tool not offered was called")
	}
	d := sha256.Sum256([]byte(tokenA))
	principal := "token-" + hex.EncodeToString(d[:6]) // guard's name for the token
	before, err := s.eps.State(ctx, principal, sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	// tools/list is the episode's tools and get_task, each once, sorted
	// by name, each with an object input schema.
	offered, err := s.eps.Tools(ctx, principal, sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(offered)+1 {
		t.Fatalf("tools/list has %d tools, want the episode's %d and %s", len(tools.Tools), len(offered), mcpepisode.GetTaskTool)
	}
	for i, tl := range tools.Tools {
		if i > 0 && tools.Tools[i-1].Name >= tl.Name {
			t.Fatalf("tools/list is not sorted by name, once each: %q before %q", tools.Tools[i-1].Name, tl.Name)
		}
		b, _ := json.Marshal(tl.InputSchema)
		var in struct{ Type string }
		if json.Unmarshal(b, &in); in.Type != "object" {
			t.Fatalf("%s's input schema: %s", tl.Name, b)
		}
	}
	for _, o := range offered {
		if !names[o.Name] {
			t.Fatalf("tools/list lacks the episode's tool %s: %v", o.Name, names)
		}
	}
	bad, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: map[string]any{"answer": map[string]any{"no": "rows"}}})
	if err != nil || !bad.IsError {
		t.Fatalf("a final answer of the wrong shape: %v %v", err, bad)
	}
	if after, _ := s.eps.State(ctx, principal, sess.ID()); after.StepCount != before.StepCount || after.Done {
		t.Fatalf("a bad final answer changed the episode: %+v", after)
	}
	// Another client's requests on this session are refused.
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+tokenB)
	req.Header.Set("Mcp-Session-Id", sess.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another client's request on the session: HTTP %d, want 404", resp.StatusCode)
	}
	// Two steps reach the limit; a third is an error result.
	for i := 0; i < 2; i++ {
		if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: task.Gold[0].Name, Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: map[string]any{}})
	if err != nil || !after.IsError || !strings.Contains(text(after), "done") {
		t.Fatalf("a step after the step limit: %v %s", err, text(after))
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
