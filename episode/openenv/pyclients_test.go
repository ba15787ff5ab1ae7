package openenv_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/eval/answer"
)

// openEnvSrc is OpenEnv's client code, unmodified (see its NOTICE.md).
var openEnvSrc = filepath.Join("testdata", "openenv", "src")

// debianPython is where Debian's python3-websockets (10.4) lives
// (scripts/install-python.sh installs it).
const debianPython = "/usr/lib/python3/dist-packages"

// needPython skips (fails under CI) unless a python3 with pydantic 2
// and requests, and Debian's websockets are there.
func needPython(t *testing.T) string {
	t.Helper()
	missing := ""
	py, err := exec.LookPath("python3")
	switch {
	case err != nil:
		missing = "python3"
	case exec.Command(py, "-c", "import pydantic, requests, sys; sys.exit(0 if pydantic.VERSION >= '2' else 1)").Run() != nil:
		missing = "pydantic 2 and requests for python3"
	}
	if _, err := os.Stat(filepath.Join(debianPython, "websockets", "client.py")); err != nil && missing == "" {
		missing = "Debian's python3-websockets (bash scripts/install-python.sh)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing", missing)
		}
		t.Skipf("%s is missing", missing)
	}
	return py
}

// TestOpenEnvClients plays every SLOT and SEL task of the generated
// corpus with OpenEnv's own client modules, unmodified
// (testdata/openenv_clients.py says what is shimmed: the package
// __init__ files that import OpenEnv's server, and websockets 15's import
// path onto Debian's 10.4): GenericEnvClient with either tool_format,
// MCPToolClient with either tool_format (no labels given: the final
// answer names the labels the server assigned), the WebSocket's mcp
// message, and HTTP /reset and /step (each answer validated by OpenEnv's
// ResetResponse and StepResponse, a resent request_id answered as the
// first time). Every episode must reach reward 1, and OpenEnv's
// validator (openenv validate --url) must pass its 6 checks.
func TestOpenEnvClients(t *testing.T) {
	py := needPython(t)
	f := folders(t)
	ctx := context.Background()
	env, err := environment.Open(ctx, &environment.Config{Collections: []string{f["slot"], f["sel"]}, Store: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eps.Close()
	g, err := env.Guard() // no tokens: OpenEnv's client sends none
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(openenv.Mount(http.NotFoundHandler(), g, eps, openenv.Options{Version: "test"}))
	defer srv.Close()

	type gold struct {
		Name  string         `json:"name"`
		Args  map[string]any `json:"arguments"`
		Label string         `json:"label"`
	}
	type planned struct {
		Collection   string   `json:"collection"`
		TaskID       string   `json:"task_id"`
		Gold         []gold   `json:"gold"`
		AnswerLabels []string `json:"answer_labels"`
	}
	var plan []planned
	for _, name := range []string{"bird-slot", "bird-sel"} {
		for i, task := range env.Tasks[name] {
			if i%3 != 0 { // a third of each: six modes each play every one
				continue
			}
			p := planned{Collection: name, TaskID: task.ID, AnswerLabels: answer.AnswerLabels(task)}
			for _, c := range task.Gold {
				p.Gold = append(p.Gold, gold{Name: c.Name, Args: c.Args, Label: strings.Trim(c.Label, "$")})
			}
			if len(p.Gold) == 0 {
				continue
			}
			if len(p.AnswerLabels) == 0 {
				p.AnswerLabels = []string{p.Gold[len(p.Gold)-1].Label}
			}
			plan = append(plan, p)
		}
	}
	if len(plan) < 4 {
		t.Fatalf("the corpus has %d SLOT and SEL tasks with gold calls; the test needs some", len(plan))
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	b, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "openenv_clients.py"), openEnvSrc, debianPython, srv.URL+openenv.Prefix, planFile)
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1,localhost", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("openenv_clients.py: %v\n%s\n%s", err, out, stderr)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("openenv_clients.py printed %s: %v", out, err)
	}
	t.Logf("OpenEnv's clients: %s", out)
	var problems []string
	_ = json.Unmarshal(got["problems"], &problems)
	for _, mode := range []string{"generic_openai", "generic_mcp", "mcptool_openai", "mcptool_mcp", "ws_mcp", "http"} {
		var c struct{ Episodes, Rewarded int }
		_ = json.Unmarshal(got[mode], &c)
		if c.Episodes != len(plan) || c.Rewarded != len(plan) {
			t.Errorf("%s: %d of %d episodes at reward 1 (of %d played)", mode, c.Rewarded, len(plan), c.Episodes)
		}
	}
	var v struct {
		Passed  bool `json:"passed"`
		Summary struct {
			Passed int `json:"passed_count"`
			Total  int `json:"total_count"`
		} `json:"summary"`
		Failed []map[string]any `json:"failed"`
	}
	_ = json.Unmarshal(got["validator"], &v)
	if !v.Passed || v.Summary.Passed != 6 || v.Summary.Total != 6 {
		t.Errorf("OpenEnv's validator: %d of %d checks passed: %v", v.Summary.Passed, v.Summary.Total, v.Failed)
	}
	if len(problems) > 0 {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
}
