package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/internal/logtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
)

// TestCompare runs the real-versus-simulated comparison over a real HTTP
// API on loopback, with queries, a ReAct agent and the tool-functioning
// check answered by a model on loopback: a query that met a broken real
// API is dropped, the others are scored in all three environments. The
// comparison is then run again from the model's records alone, the model
// gone, and writes the same queries, verdicts and pass rates.
func TestCompare(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	m := newModel(t)
	st := newStore(t)
	c := weatherTools(srv.URL, "forecast", "cities", "flaky", "missing")
	e := engine(t, st, c, 1<<20)
	client := llm.New(m.srv.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1})
	e.Model, e.ModelName = client, "test-model"
	var progress logtest.Buffer
	e.Progress = &progress
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
	n := strconv.Itoa(cs.Queries)
	for _, bar := range []string{"compare: queries (Table 14): 12/12", "compare: real environment, react/agent-model: " + n + "/" + n,
		"compare: cached environment, react/agent-model: " + n + "/" + n, "compare: simulated environment, react/agent-model: " + n + "/" + n,
		"compare: tool-functioning check of the real runs: " + n + "/" + n} {
		if !strings.Contains(progress.String(), bar) {
			t.Errorf("no progress line %q in:\n%s", bar, progress.String())
		}
	}

	// Replay: a new store holding only the records, the model gone.
	m.srv.Close()
	st2 := newStore(t)
	copyRecords(t, st.Path(), st2.Path())
	e2 := engine(t, st2, c, 1<<20)
	replay := llm.New(m.srv.URL(), llm.Options{Recorder: st2, Replay: true, MaxRetries: -1})
	e2.Model, e2.ModelName = replay, "test-model"
	opts2 := opts
	opts2.Out = t.TempDir()
	opts2.Models = []mirror.AgentModel{{Name: "agent-model", Model: replay}}
	cs2, err := e2.Compare(ctx, opts2)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if cs2.Queries != cs.Queries || cs2.Kept != cs.Kept {
		t.Fatalf("replay: %+v, first run %+v", cs2, cs)
	}
	for _, f := range []string{"tasks.jsonl", "queries.rejected.json", "functioning.jsonl", "compare.json", "compare.md", "compare.html"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, err := os.ReadFile(filepath.Join(opts2.Out, f))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs between the run and its replay (%v):\n%s\n%s", f, err, a, b)
		}
	}
}
