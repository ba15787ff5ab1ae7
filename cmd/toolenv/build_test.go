package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api/answer"
)

func TestBuildBirdUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "bird", "--out", "x"}, "--data and --out are required"},
		{[]string{"build", "bird", "--data", "x", "--out", "y", "--flavors", "slot,graph"}, "unknown flavor"},
		{[]string{"build", "bird", "--data", "x", "--out", "y", "--shrink", "10,200"}, "percentage"},
	} {
		code, _, stderr := run(t, context.Background(), tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestBuildAndServeBird builds the superhero questions, serves the SLOT and
// REST collections and answers a task over HTTP: the SLOT one in a session
// the server issues (the init step, sent without X-Toolenv-Session, gets
// one; the following calls send it), the REST one at its own path.
func TestBuildAndServeBird(t *testing.T) {
	data := shareddata.Require(t, "bird")
	out := t.TempDir()
	code, stdout, stderr := run(t, context.Background(), "build", "bird", "--data", data, "--out", out, "--db", "superhero", "--flavors", "slot,rest")
	if code != 0 {
		t.Fatalf("build exited %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "│ slot") || !strings.Contains(stdout, "report:") || !strings.Contains(stderr, "verify slot") {
		t.Fatalf("no summary or progress:\n%s\n%s", stdout, stderr)
	}
	base, stop := serveInBackground(t, "--store", ":memory:", "--collection", filepath.Join(out, "slot"), "--collection", filepath.Join(out, "rest"))
	defer stop()

	session := ""
	post := func(path string, args map[string]any) []byte {
		t.Helper()
		raw, _ := json.Marshal(args)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("X-Toolenv-Session", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		if session == "" {
			if session = resp.Header.Get("X-Toolenv-Session"); session == "" {
				t.Fatalf("%s: the first init call got no session", path)
			}
		}
		return b
	}
	// SLOT: a task with a subquery (two init calls).
	tasks, _, err := toolenv.ReadTasks(filepath.Join(out, "slot", "tasks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var task *toolenv.Task
	for _, tk := range tasks {
		if inits, _ := sqltools.InitCalls(tk); len(inits) > 1 {
			task = tk
			break
		}
	}
	if task == nil {
		t.Fatal("no SLOT task with a subquery")
	}
	inits, _ := sqltools.InitCalls(task)
	for _, g := range inits {
		args := g.Args
		args["label"] = g.Label
		post("/tools/bird-slot/"+g.Name, args)
	}
	bodies := map[string]json.RawMessage{}
	for _, g := range task.Gold {
		args := g.Args
		args["label"] = g.Label
		bodies[g.Label] = post("/tools/bird-slot/"+g.Name, args)
	}
	var answerBodies []json.RawMessage
	for _, l := range sqltools.AnswerLabels(task) {
		answerBodies = append(answerBodies, bodies[l])
	}
	checkAnswer(t, task, answerBodies...)

	// REST: the first task, at its binding's path.
	rtasks, _, _ := toolenv.ReadTasks(filepath.Join(out, "rest", "tasks.jsonl"))
	rc, err := toolenv.ReadCollection(filepath.Join(out, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	rt := rtasks[0]
	tool := rc.Tool(rt.Gold[0].Name)
	q := url.Values{}
	for k, v := range rt.Gold[0].Args {
		q.Set(k, toString(v))
	}
	resp, err := http.Get(base + tool.Binding.Path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", tool.Binding.Path, resp.StatusCode, b)
	}
	checkAnswer(t, rt, b)
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Fatal(err)
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

func checkAnswer(t *testing.T, task *toolenv.Task, bodies ...json.RawMessage) {
	t.Helper()
	got, err := answer.FromBodies(bodies...)
	if err != nil {
		t.Fatalf("%s: %v", task.ID, err)
	}
	var gold answer.Table
	if err := toolenv.DecodeJSON(task.Answer, &gold); err != nil {
		t.Fatal(err)
	}
	ordered, _ := task.Meta[sqltools.MetaOrdered].(bool)
	if ok, why := answer.Equal(&gold, got, answer.Options{Ordered: ordered}); !ok {
		t.Fatalf("%s over HTTP: %s", task.ID, why)
	}
}
