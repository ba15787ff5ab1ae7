package openenv_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/openenv"
)

const (
	tokenA = "alice-0123456789abcdef0123456789abcdef"
	tokenB = "bobby-0123456789abcdef0123456789abcdef"
)

var (
	corpusOnce sync.Once
	corpus     map[string]string
	corpusDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if corpusDir != "" {
		os.RemoveAll(corpusDir)
	}
	os.Exit(code)
}

// folders builds the generated corpus once for the package's tests.
func folders(t testing.TB) map[string]string {
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "openenv-corpus-")
		if err != nil {
			t.Fatal(err)
		}
		corpusDir = dir
		corpus = episodetest.Corpus(t, dir, 11)
	})
	if corpus == nil {
		t.Fatal("the corpus was not built")
	}
	return corpus
}

// served is an environment over the corpus's three flavors with its
// episodes, served with tokens as toolenv serve mounts them.
type served struct {
	env *environment.Environment
	eps *episode.Env
	url string
	srv *httptest.Server
}

func serve(t *testing.T, opts episode.Options) *served { return serveTB(t, opts) }

func serveB(b *testing.B) *served { return serveTB(b, episode.Options{}) }

// principalA is the guard's name for tokenA.
var principalA = func() string { d := sha256.Sum256([]byte(tokenA)); return "token-" + hex.EncodeToString(d[:6]) }()

func serveTB(t testing.TB, opts episode.Options) *served {
	t.Helper()
	f := folders(t)
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{
		Collections: []string{f["slot"], f["sel"], f["rest"]},
		Store:       filepath.Join(t.TempDir(), "store.db"),
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
	g, err := env.Guard()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/openenv/", g.Handler(http.StripPrefix("/openenv", openenv.NewHandler(eps, openenv.Options{}))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &served{env: env, eps: eps, url: srv.URL + "/openenv", srv: srv}
}

func (s *served) client(token string) *openenv.Client {
	return openenv.NewClient(s.url, openenv.ClientOptions{Token: token})
}

// playWS runs the oracle of task over the WebSocket and returns the
// final answer's step.
func playWS(t *testing.T, c *openenv.Client, coll *toolenv.Collection, task *toolenv.Task) *openenv.StepResult {
	t.Helper()
	ctx := context.Background()
	r, err := c.Reset(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
	if err != nil {
		t.Fatalf("%s: reset: %v", task.ID, err)
	}
	if r.Done || r.Reward != nil || r.Observation["query"] != task.Query {
		t.Fatalf("%s: reset observation %v reward %v done %v", task.ID, r.Observation["query"], r.Reward, r.Done)
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
		r, err = c.Step(ctx, map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": g.Label})
		if err != nil {
			t.Fatalf("%s: step %s: %v", task.ID, g.Name, err)
		}
		if e := r.Observation["error"]; e != nil {
			t.Fatalf("%s: %s failed: %v", task.ID, g.Name, e)
		}
		body, _ := json.Marshal(r.Observation["result"].(map[string]any)["data"])
		o.Observe(g.Label, body)
	}
	r, err = c.Step(ctx, map[string]any{"type": "final_answer"})
	if err != nil {
		t.Fatalf("%s: final answer: %v", task.ID, err)
	}
	return r
}

// TestOracleOverWebSocket: the oracle reaches reward 1.0 on every task of
// the SLOT, SEL and REST builds, speaking OpenEnv's WebSocket protocol as
// its client does.
func TestOracleOverWebSocket(t *testing.T) {
	s := serve(t, episode.Options{})
	c := s.client(tokenA)
	defer c.Close()
	for _, coll := range s.env.Collections() {
		tasks := s.env.Tasks[coll.Name]
		if len(tasks) == 0 {
			t.Fatalf("%s has no tasks", coll.Name)
		}
		for _, task := range tasks {
			r := playWS(t, c, coll, task)
			if r.Reward == nil || *r.Reward != 1 || !r.Done {
				t.Fatalf("%s %s: reward %v done %v outcome %v", coll.Name, task.ID, r.Reward, r.Done, r.Observation["outcome"])
			}
		}
		t.Logf("%s: %d tasks at reward 1", coll.Name, len(tasks))
	}
	st, err := c.State(context.Background())
	if err != nil || st["done"] != true || st["step_count"] == nil {
		t.Fatalf("state after the last episode: %v %v", st, err)
	}
}

// TestHTTPEpisode: a multi-step episode over POST /reset and /step, its
// state and its trajectory in every export format.
func TestHTTPEpisode(t *testing.T) {
	s := serve(t, episode.Options{})
	ctx := context.Background()
	c := s.client(tokenA)
	coll := s.env.Registry.Collection("bird-slot")
	task := s.env.Tasks[coll.Name][0]
	r, err := c.ResetHTTP(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID, "tool_format": "mcp", "episode_id": "mine-1"})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.Metadata["episode_id"].(string)
	if !strings.HasPrefix(id, "ep_") {
		t.Fatalf("no episode id in the reset's metadata: %v", r.Metadata)
	}
	tools, _ := r.Observation["tools"].([]any)
	if len(tools) == 0 || tools[0].(map[string]any)["inputSchema"] == nil {
		t.Fatalf("tool_format mcp: tools %v", tools)
	}
	o := episodetest.NewOracle(coll, task)
	steps := 0
	for {
		g, ok, err := o.Next()
		if err != nil || !ok {
			break
		}
		r, err = c.StepHTTP(ctx, id, map[string]any{"type": "tool_calls", "calls": []any{map[string]any{"name": g.Name, "arguments": g.Args, "label": g.Label}}})
		if err != nil {
			t.Fatal(err)
		}
		steps++
	}
	r, err = c.StepHTTP(ctx, id, map[string]any{"type": "call_tool", "tool_name": "submit_answer", "arguments": map[string]any{}})
	if err != nil || r.Reward == nil || *r.Reward != 1 || !r.Done {
		t.Fatalf("final answer: %+v %v", r, err)
	}
	st, err := c.StateHTTP(ctx, id)
	if err != nil || st["step_count"] != json.Number(itoa(steps+1)) || st["client_episode_id"] != "mine-1" {
		t.Fatalf("state %v %v", st, err)
	}
	for _, format := range []string{"jsonl", "openai", "sharegpt"} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/trajectory?episode_id="+id+"&format="+format, nil)
		req.Header.Set("Authorization", "Bearer "+tokenA)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		err = json.NewDecoder(resp.Body).Decode(&rec)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", format, resp.StatusCode, err)
		}
		switch format {
		case "jsonl":
			if rec["return"] != 1.0 || len(rec["steps"].([]any)) != steps+1 || rec["reward"] == nil {
				t.Fatalf("record %v", rec)
			}
		case "openai":
			msgs := rec["messages"].([]any)
			if msgs[0].(map[string]any)["role"] != "system" || len(msgs) < 2+2*steps {
				t.Fatalf("openai messages %v", msgs)
			}
		case "sharegpt":
			if len(rec["conversations"].([]any)) < 1+2*steps {
				t.Fatalf("sharegpt %v", rec)
			}
		}
	}
	if err := c.CloseHTTP(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StepHTTP(ctx, id, map[string]any{"type": "list_tools"}); !isHTTP(err, http.StatusConflict) {
		t.Fatalf("a step after the episode is done (and closed): %v, want 409", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func isHTTP(err error, code int) bool {
	var se *openenv.ServerError
	return errors.As(err, &se) && se.HTTP == code
}

func wsCode(err error) string {
	var se *openenv.ServerError
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// TestBadInput: every kind of bad input is a clear error in the
// protocol's own form, and the episode's state is untouched.
func TestBadInput(t *testing.T) {
	s := serve(t, episode.Options{MaxSteps: 3})
	ctx := context.Background()
	coll := s.env.Registry.Collection("bird-sel")
	task := s.env.Tasks[coll.Name][0]

	c := s.client(tokenA)
	defer c.Close()
	for _, bad := range []map[string]any{
		{"collection": coll.Name, "task_id": "no-such-task"},
		{"collection": coll.Name, "split": "no-such-split"},
		{"collection": "no-such-collection"},
		{"collection": coll.Name, "taks_id": task.ID},
		{"collection": coll.Name, "reward": map[string]any{"success": "completoin"}},
		{"collection": coll.Name, "seed": -1},
	} {
		if _, err := c.Reset(ctx, bad); err == nil || wsCode(err) == "" {
			t.Fatalf("reset %v: %v", bad, err)
		} else {
			t.Logf("reset %v: %v", bad, err)
		}
	}
	r, err := c.Reset(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
	if err != nil {
		t.Fatal(err)
	}
	id := r.Observation["episode_id"].(string)
	before, _ := c.State(ctx)
	for _, bad := range []map[string]any{
		{"type": "call_tool", "tool_name": "no_such_tool", "arguments": map[string]any{}},
		{"type": "call_tool", "tool_name": task.Gold[0].Name, "arguments": "not an object"},
		{"type": "call_tool", "arguments": map[string]any{}},
		{"type": "tool_calls", "calls": []any{}},
		{"type": "final_answer", "answer": map[string]any{"not": "a table"}},
		{"type": "final_answer", "labels": []any{"NO_SUCH_LABEL"}},
		{"type": "jump"},
		{"type": "call_tool", "tool_name": task.Gold[0].Name, "arguments": map[string]any{}, "extra": 1},
	} {
		_, err := c.Step(ctx, bad)
		if code := wsCode(err); code != "VALIDATION_ERROR" {
			t.Fatalf("step %v: %v (code %q), want VALIDATION_ERROR", bad, err, code)
		}
		t.Logf("step %v: %v", bad, err)
	}
	after, _ := c.State(ctx)
	if !equalJSON(before, after) {
		t.Fatalf("bad input changed the state:\n%v\n%v", before, after)
	}
	// Another client cannot touch the episode over HTTP.
	other := s.client(tokenB)
	if _, err := other.StepHTTP(ctx, id, map[string]any{"type": "list_tools"}); !isHTTP(err, http.StatusNotFound) {
		t.Fatalf("another client's step: %v, want 404", err)
	}
	if _, err := other.StateHTTP(ctx, id); !isHTTP(err, http.StatusNotFound) {
		t.Fatalf("another client's state: %v, want 404", err)
	}
	// The step limit truncates; a step after done is refused and changes
	// nothing.
	for i := 0; i < 3; i++ {
		r, err = c.Step(ctx, map[string]any{"type": "call_tool", "tool_name": task.Gold[0].Name, "arguments": map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !r.Done || r.Metadata["truncated"] != true {
		t.Fatalf("after 3 steps of a 3-step episode: done %v metadata %v", r.Done, r.Metadata)
	}
	done, _ := c.State(ctx)
	if _, err := c.Step(ctx, map[string]any{"type": "final_answer"}); err == nil || !strings.Contains(err.Error(), "done") {
		t.Fatalf("a step after done: %v", err)
	}
	if again, _ := c.State(ctx); !equalJSON(done, again) {
		t.Fatal("a step after done changed the state")
	}
	// Over HTTP the same step is 409.
	if _, err := c.StepHTTP(ctx, id, map[string]any{"type": "final_answer"}); !isHTTP(err, http.StatusConflict) {
		t.Fatalf("HTTP step after done: %v, want 409", err)
	}
	// Malformed messages.
	for _, body := range []string{`not json`, `{"type": "dance"}`, `{"type": "step"}`} {
		resp := rawWS(t, s.url, tokenA, body)
		if resp["type"] != "error" {
			t.Fatalf("%s: %v", body, resp)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestCapAndExpiry: over the cap a reset is refused with 503 naming the
// flag, and no open episode is evicted; an idle episode expires with an
// error of its own.
func TestCapAndExpiry(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := serve(t, episode.Options{Max: 2, MaxPerClient: -1, Idle: time.Minute, Now: clock})
	ctx := context.Background()
	c := s.client(tokenA)
	coll := s.env.Registry.Collection("bird-rest")
	var ids []string
	for i := 0; i < 2; i++ {
		id, err := c.ResetEpisodeID(ctx, map[string]any{"collection": coll.Name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	_, err := c.ResetEpisodeID(ctx, map[string]any{"collection": coll.Name})
	var se *openenv.ServerError
	if !errors.As(err, &se) || se.HTTP != http.StatusServiceUnavailable || !strings.Contains(se.Hint, episode.MaxFlag) {
		t.Fatalf("a reset over the cap: %v", err)
	}
	for _, id := range ids {
		if _, err := c.StateHTTP(ctx, id); err != nil {
			t.Fatalf("an open episode was evicted: %v", err)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	_, err = c.StepHTTP(ctx, ids[0], map[string]any{"type": "list_tools"})
	if !errors.As(err, &se) || se.HTTP != http.StatusGone || se.Status != "expired" {
		t.Fatalf("a step on an idle episode: %v", err)
	}
	if n := s.eps.Sweep(ctx); n != 1 {
		t.Fatalf("the sweep expired %d episodes, want the other 1", n)
	}
	if _, err := c.ResetHTTP(ctx, map[string]any{"collection": coll.Name}); err != nil {
		t.Fatalf("a reset after expiry freed room: %v", err)
	}
}
