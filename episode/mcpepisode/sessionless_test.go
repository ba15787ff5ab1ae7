package mcpepisode_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/mcpepisode"
)

// playSessionless runs the oracle of task with the go-sdk's client at
// 2026-07-28, where no session exists: start_episode mints the episode,
// whose id every later call passes as an argument.
func playSessionless(t *testing.T, cs *mcp.ClientSession, coll *toolenv.Collection, task *toolenv.Task) map[string]any {
	t.Helper()
	ctx := context.Background()
	start, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.StartTool, Arguments: map[string]any{"collection": coll.Name, "task_id": task.ID}})
	if err != nil || start.IsError {
		t.Fatalf("%s: start_episode: %v %s", task.ID, err, text(start))
	}
	st := structured(t, start)
	id, _ := st[mcpepisode.EpisodeArg].(string)
	if id == "" || st["query"] != task.Query || !strings.Contains(text(start), id) {
		t.Fatalf("%s: start_episode gave %v", task.ID, st)
	}
	// Its tools are the task's and submit_answer, each taking episode_id.
	offered := map[string]bool{}
	for _, raw := range st["tools"].([]any) {
		tl := raw.(map[string]any)
		schema, _ := json.Marshal(tl["inputSchema"])
		if !strings.Contains(string(schema), `"`+mcpepisode.EpisodeArg+`"`) {
			t.Fatalf("%s: tool %v does not take %s", task.ID, tl["name"], mcpepisode.EpisodeArg)
		}
		offered[tl["name"].(string)] = true
	}
	if !offered[episode.SubmitTool] {
		t.Fatalf("%s: no %s among %v", task.ID, episode.SubmitTool, offered)
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
		if !offered[g.Name] {
			t.Fatalf("%s: the gold tool %s is not offered", task.ID, g.Name)
		}
		args := map[string]any{mcpepisode.EpisodeArg: id}
		for k, v := range g.Args {
			args[k] = v
		}
		if g.Label != "" && coll.Tool(g.Name).LabelArg() != "" {
			args[coll.Tool(g.Name).LabelArg()] = g.Label
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: g.Name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %s: %v %s", task.ID, g.Name, err, text(r))
		}
		o.Observe(g.Label, json.RawMessage(text(r)))
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: map[string]any{mcpepisode.EpisodeArg: id}})
	if err != nil || r.IsError {
		t.Fatalf("%s: submit_answer: %v %s", task.ID, err, text(r))
	}
	return structured(t, r)
}

// TestOracleOverSessionlessMCP: with the go-sdk's client at MCP
// 2026-07-28 (no initialize, no Mcp-Session-Id), the oracle reaches
// reward 1.0 on every task of the SLOT, SEL and REST builds, an episode
// being a handle passed as the episode_id argument; episodes of one
// client run side by side.
func TestOracleOverSessionlessMCP(t *testing.T) {
	s := serve(t, episode.Options{})
	ctx := context.Background()
	cs, err := connectAt(ctx, s.url, tokenA, url.Values{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
		t.Fatalf("negotiated %q, session %q", v, cs.ID())
	}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lr.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != strings.Join([]string{mcpepisode.EndTool, mcpepisode.GetTaskTool, mcpepisode.StartTool}, ",") {
		t.Fatalf("tools/list: %v", names)
	}
	for _, coll := range s.env.Collections() {
		tasks := s.env.Tasks[coll.Name]
		for _, task := range tasks {
			out := playSessionless(t, cs, coll, task)
			if out["reward"] != 1.0 || out["done"] != true || out["success_kind"] != "completion" {
				t.Fatalf("%s %s: %v", coll.Name, task.ID, out)
			}
		}
		t.Logf("%s: %d tasks at reward 1 over sessionless MCP", coll.Name, len(tasks))
	}
}

// TestSessionlessMCPBadInput: a call without episode_id, with another
// client's episode, of a tool the episode does not offer, after
// end_episode, and a start with a misspelt option are refused, saying
// what to do; the URL's query gives the reset defaults.
func TestSessionlessMCPBadInput(t *testing.T) {
	s := serve(t, episode.Options{})
	ctx := context.Background()
	coll := s.env.Registry.Collection("bird-slot")
	task := s.env.Tasks[coll.Name][0]
	a, err := connectAt(ctx, s.url, tokenA, url.Values{"collection": {coll.Name}, "task_id": {task.ID}}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := connectAt(ctx, s.url, tokenB, url.Values{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start, err := a.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.StartTool, Arguments: map[string]any{}})
	if err != nil || start.IsError || structured(t, start)["task_id"] != task.ID {
		t.Fatalf("start_episode with the URL's defaults: %v %s", err, text(start))
	}
	id := structured(t, start)[mcpepisode.EpisodeArg].(string)
	gold := task.Gold[0]
	if r, err := a.CallTool(ctx, &mcp.CallToolParams{Name: gold.Name, Arguments: gold.Args}); err == nil || !strings.Contains(err.Error(), mcpepisode.EpisodeArg) {
		t.Errorf("a step without episode_id: %v %v", err, r)
	}
	if r, err := b.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.GetTaskTool, Arguments: map[string]any{mcpepisode.EpisodeArg: id}}); err != nil || !r.IsError {
		t.Errorf("another client's episode: %v %s", err, text(r))
	}
	if _, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "not_offered", Arguments: map[string]any{mcpepisode.EpisodeArg: id}}); err == nil || !strings.Contains(err.Error(), "offers no tool") {
		t.Errorf("a tool the episode does not offer: %v", err)
	}
	if r, err := a.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.StartTool, Arguments: map[string]any{"tsak_id": "x"}}); err != nil || !r.IsError || !strings.Contains(text(r), "task_id") {
		t.Errorf("a misspelt option: %v %s", err, text(r))
	}
	if r, err := a.CallTool(ctx, &mcp.CallToolParams{Name: mcpepisode.EndTool, Arguments: map[string]any{mcpepisode.EpisodeArg: id}}); err != nil || r.IsError {
		t.Fatalf("end_episode: %v %s", err, text(r))
	}
	args := map[string]any{mcpepisode.EpisodeArg: id}
	for k, v := range gold.Args {
		args[k] = v
	}
	if r, err := a.CallTool(ctx, &mcp.CallToolParams{Name: episode.SubmitTool, Arguments: args}); err != nil || !r.IsError {
		t.Errorf("a step after end_episode: %v %s", err, text(r))
	}
	if n := s.eps.Open(); n != 0 {
		t.Errorf("%d episodes open after end_episode", n)
	}
}
