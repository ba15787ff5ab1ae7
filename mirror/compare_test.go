package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
)

// TestCompare runs the real-versus-simulated comparison over a real HTTP
// API on loopback, with queries, a ReAct agent and the tool-functioning
// check answered by a model on loopback: a query that met a broken real
// API is dropped, the others are scored in all three environments.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	m := newModel(t)
	st := newStore(t)
	c := weatherTools(srv.URL, "forecast", "cities", "flaky", "missing")
	e := engine(t, st, c, 1<<20)
	client := llm.New(m.srv.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1})
	e.Model, e.ModelName = client, "test-model"
	sim, err := mirror.SimulatedInvoker(e.Collections, nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opts := mirror.CompareOptions{Out: out, Queries: 12, MinAPIs: 2, MaxAPIs: 2, Seed: 1, Agents: []agent.Agent{agent.ReAct{Budget: 6}},
		Models: []mirror.AgentModel{{Name: "agent-model", Model: client}}, Simulated: sim, Concurrency: 2}
	cs, err := e.Compare(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Queries == 0 || cs.Rejected["unparseable"] == 0 || cs.Kept == 0 || cs.Kept >= cs.Queries || len(cs.Dropped) != cs.Queries-cs.Kept {
		t.Fatalf("compare: %+v", cs)
	}
	for id, why := range cs.Dropped {
		if !strings.Contains(why, "missing") {
			t.Errorf("query %s dropped for %q; only queries that called the missing API should be", id, why)
		}
	}
	if len(cs.Rows) != 1 {
		t.Fatalf("rows %+v", cs.Rows)
	}
	row := cs.Rows[0]
	for _, env := range []string{mirror.EnvReal, mirror.EnvCached, mirror.EnvSimulated} {
		if row.Episodes[env] != cs.Kept || row.Pass[env] != 100 {
			t.Errorf("%s: %d episodes, pass %.1f; want %d and 100", env, row.Episodes[env], row.Pass[env], cs.Kept)
		}
	}
	for _, f := range []string{"tasks.jsonl", "functioning.jsonl", "compare.json", "compare.md", "compare.html", "runs/real/react-agent-model/episodes.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// Again: the queries and episodes are read back, nothing is asked.
	before := m.count("agent") + m.count("query")
	if _, err := e.Compare(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if after := m.count("agent") + m.count("query"); after != before {
		t.Fatalf("a second run asked the model %d more times", after-before)
	}
}
