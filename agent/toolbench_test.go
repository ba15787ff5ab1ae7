package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// runEpisode runs a with the model at srv on task in env.
func runEpisode(t *testing.T, a agent.Agent, srv *llmtest.Server, env agent.Env, c *toolenv.Collection, task *toolenv.Task) *agent.Outcome {
	t.Helper()
	ctx := context.Background()
	sess, err := env.Start(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	ep := &agent.Episode{Task: task, Session: sess, Model: llm.New(srv.URL(), llm.Options{MaxRetries: -1}), ModelName: "replay", Seed: 1, Collection: c}
	return a.Run(ctx, ep)
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := toolenv.DecodeJSON(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// TestCoTReplaysStableToolBench drives the CoT agent with the model
// outputs of StableToolBench's recorded CoT runs (the replies of its
// ChatGPT model, the API responses of its virtual server) and checks that
// it asks what ToolBench asked, ends as the recorded run ended, and that
// its trajectory converts to the very answer StableToolBench evaluated.
func TestCoTReplaysStableToolBench(t *testing.T) {
	for _, tt := range []struct {
		id       string
		finished bool
	}{{"608", true}, {"1073", true}, {"588", false}} {
		t.Run(tt.id, func(t *testing.T) {
			c, task := stbTask(t, tt.id)
			raw := readAnswer(t, "virtual_chatgpt_cot", tt.id+"_CoT@1.json")
			back := newRecorded()
			var replies []llmtest.Reply
			if ag := raw.AnswerGeneration; ag.ValidData {
				replies = conversationReplies(t, ag.TrainMessages[len(ag.TrainMessages)-1], back)
			} else {
				replies = chainReplies(t, raw.Trys[0].Chain, back)
			}
			srv := llmtest.New(llmtest.Script(replies...))
			defer srv.Close()
			out := runEpisode(t, agent.CoT{}, srv, agent.NewLocal(back, []*toolenv.Collection{c}, agent.LocalOptions{}), c, task)
			tr := out.Trajectory
			if tr.Error != "" {
				t.Fatal(tr.Error)
			}
			if tr.Finished != tt.finished || out.OutOfBudget == tt.finished {
				t.Errorf("finished = %v, out of budget = %v; want %v", tr.Finished, out.OutOfBudget, tt.finished)
			}
			if got := len(srv.Requests()); got != len(replies) {
				t.Errorf("%d model calls, recorded run made %d", got, len(replies))
			}
			ag := raw.AnswerGeneration
			if tt.finished {
				if out.FinalAnswerRaw != ag.FinalAnswer {
					t.Errorf("final answer = %q, want %q", out.FinalAnswerRaw, ag.FinalAnswer)
				}
				// The conversation sent on the last turn is the recorded one.
				conv := ag.TrainMessages[len(ag.TrainMessages)-1]
				last := srv.Requests()[len(srv.Requests())-1].Messages
				sys := conv[0].Text()
				prefix := sys[:strings.Index(sys, "following tools:\n")]
				if !strings.HasPrefix(last[0].Content, prefix+"following tools:\n1."+c.Tool(task.Tools[0]).Meta["std_tool"]+": ") {
					t.Errorf("system prompt differs from ToolBench's:\n%s", last[0].Content)
				}
				if last[1].Content != conv[1].Text() {
					t.Errorf("user message = %q, want %q", last[1].Content, conv[1].Text())
				}
				var sent, want []string
				for _, m := range last {
					if m.Role == "tool" {
						sent = append(sent, m.Content)
					}
				}
				for _, m := range conv {
					if m.Role == "function" {
						want = append(want, m.Text())
					}
				}
				if !reflect.DeepEqual(sent, want) {
					t.Errorf("observations sent differ from StableToolBench's:\n got %q\nwant %q", sent, want)
				}
				var finish any
				for _, f := range srv.Requests()[0].Tools {
					if f.Function.Name == "Finish" {
						finish = f.Function
					}
				}
				if !sameJSON(t, finish, ag.Function[len(ag.Function)-1]) {
					t.Errorf("Finish function differs from ToolBench's")
				}
			}
			finalRaw := ""
			if tt.finished {
				finalRaw = out.FinalAnswerRaw
			}
			got := stb.FromTrajectory("CoT@1", task.Query, finalRaw, tr, nil)
			want := readConverted(t, "virtual_chatgpt_cot", tt.id)
			if !sameJSON(t, got.Answer, want.Answer) {
				g, _ := json.MarshalIndent(got.Answer, "", " ")
				w2, _ := json.MarshalIndent(want.Answer, "", " ")
				t.Errorf("converted trajectory differs from StableToolBench's:\n%.6000s\nWANT\n%.6000s", g, w2)
			}
		})
	}
}

// TestDFSDTReplaysStableToolBench replays the recorded DFS runs: the
// model's replies in the order ToolBench's search asked for them. The
// search must grow the same tree, send ToolBench's diversity prompt
// verbatim when it expands a state again, and end with the recorded
// answer.
func TestDFSDTReplaysStableToolBench(t *testing.T) {
	for _, id := range []string{"588", "608", "1073"} {
		t.Run(id, func(t *testing.T) {
			c, task := stbTask(t, id)
			raw := readAnswer(t, "virtual_chatgpt_dfs", id+"_DFS_woFilter_w2.json")
			back := newRecorded()
			replies := treeReplies(t, raw.Tree.Tree, back)
			srv := llmtest.New(llmtest.Script(replies...))
			defer srv.Close()
			out := runEpisode(t, agent.DFSDT{}, srv, agent.NewLocal(back, []*toolenv.Collection{c}, agent.LocalOptions{}), c, task)
			if out.Trajectory.Error != "" {
				t.Fatal(out.Trajectory.Error)
			}
			var want []string
			var walk func(n *stb.Node)
			walk = func(n *stb.Node) {
				for _, ch := range n.Children {
					want = append(want, ch.NodeType+": "+ch.Description)
					walk(ch)
				}
			}
			walk(raw.Tree.Tree)
			var got []string
			for _, n := range out.Tree {
				got = append(got, n.Type+": "+n.Description)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("search tree differs from the recorded one:\n got %d nodes %q\nwant %d nodes %q", len(got), got, len(want), want)
			}
			if !out.Trajectory.Finished || out.FinalAnswerRaw != raw.AnswerGeneration.FinalAnswer {
				t.Errorf("final answer = %q (finished %v), want %q", out.FinalAnswerRaw, out.Trajectory.Finished, raw.AnswerGeneration.FinalAnswer)
			}
			// Every diversity prompt ToolBench sent appears, verbatim, in
			// the requests.
			sent := map[string]bool{}
			for _, r := range srv.Requests() {
				for _, m := range r.Messages {
					if m.Role == "user" && strings.HasPrefix(m.Content, "This is not the first time") {
						sent[m.Content] = true
					}
				}
			}
			for _, conv := range raw.AnswerGeneration.TrainMessages {
				for _, m := range conv {
					if m.Role == "user" && strings.HasPrefix(m.Text(), "This is not the first time") && !sent[m.Text()] {
						t.Errorf("diversity prompt not sent as recorded:\n%.1500s", m.Text())
					}
				}
			}
			got2 := stb.FromTrajectory("DFS_woFilter_w2", task.Query, out.FinalAnswerRaw, out.Trajectory, nil)
			if w := readConverted(t, "virtual_chatgpt_dfs", id); !sameJSON(t, got2.Answer, w.Answer) {
				g, _ := json.MarshalIndent(got2.Answer, "", " ")
				w2, _ := json.MarshalIndent(w.Answer, "", " ")
				t.Errorf("converted trajectory differs from StableToolBench's:\n%.6000s\nWANT\n%.6000s", g, w2)
			}
		})
	}
}
