package mapeval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/mapping/structural"
)

// driftedDemo writes the demo's next version (seed 1) into a folder.
func driftedDemo(t *testing.T) string {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	d, err := drift.Drift(drift.NewLineage(c), drift.Options{Seed: 1, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "demo-v2")
	if err := drift.Write(dir, d, drift.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDriftReportRecordsProvenance: drift-eval.json holds the scores and
// which toolenv made them with which settings; drift-eval.md names the
// version.
func TestDriftReportRecordsProvenance(t *testing.T) {
	ctx := context.Background()
	v2 := driftedDemo(t)
	rs, err := Drift(ctx, []string{v2}, structural.Options{}, nil)
	if err != nil || len(rs) != 1 || rs[0].Scores == nil || rs[0].Tools == 0 {
		t.Fatalf("%v %+v", err, rs)
	}
	out := t.TempDir()
	prov := &toolenv.Provenance{Version: "v9.9.9-test", Config: map[string]any{"min_score": 0.55}}
	if err := WriteDrift(out, rs, prov); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Provenance *toolenv.Provenance `json:"provenance"`
		Results    []json.RawMessage   `json:"results"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "drift-eval.json"))
	if err := json.Unmarshal(b, &rep); err != nil || rep.Provenance == nil || rep.Provenance.Version != "v9.9.9-test" || len(rep.Results) != 1 {
		t.Errorf("drift-eval.json: %v %.300s", err, b)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "drift-eval.md")); !strings.Contains(string(md), "toolenv v9.9.9-test") {
		t.Errorf("drift-eval.md does not name the version:\n%s", md)
	}
	// Not drifted: an invalid-arguments error naming the folder.
	dir := t.TempDir()
	c, _ := demo.Collection()
	if err := toolenv.WriteCollection(dir, c); err != nil {
		t.Fatal(err)
	}
	if _, err := Drift(ctx, []string{dir}, structural.Options{}, nil); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), "is not a drifted collection") {
		t.Errorf("undrifted: %v", err)
	}
}

// TestRepairAtWork: the oracle's old calls complete more often with the
// repair adapter than without it; every run is counted and the report
// says how it was made.
func TestRepairAtWork(t *testing.T) {
	v2 := driftedDemo(t)
	for _, tc := range []struct {
		name   string
		tasks  string
		agents []string
	}{
		{"one call per documented API", "", []string{AgentOracle, AgentDirectReplay}},
		{"the old tasks, both agents", oldTasks(t), []string{AgentOracle, AgentDirectReplay}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Repair(context.Background(), RepairOptions{WorkOptions: WorkOptions{Tasks: tc.tasks}, Collection: v2, Agents: tc.agents})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Provenance == nil || rep.Provenance.Version == "" || len(rep.Runs)%2 != 0 || len(rep.Runs) == 0 {
				t.Fatalf("report %+v", rep)
			}
			for i := 0; i < len(rep.Runs); i += 2 {
				without, with := rep.Runs[i], rep.Runs[i+1]
				if without.Tasks == 0 || with.Tasks != without.Tasks || with.CallsOK <= without.CallsOK || with.Rerouted == 0 {
					t.Errorf("%s: without %+v, with %+v", without.Agent, without, with)
				}
			}
			var b strings.Builder
			rep.Markdown(&b)
			if !strings.Contains(b.String(), "| oracle | strict + repair adapter |") || !strings.Contains(b.String(), "Made by toolenv ") {
				t.Errorf("markdown:\n%s", b.String())
			}
		})
	}
	if _, err := Repair(context.Background(), RepairOptions{WorkOptions: WorkOptions{Tasks: filepath.Join(v2, toolenv.TasksFile)}, Collection: v2, Agents: []string{"nobody"}}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments {
		t.Errorf("unknown agent: %v", err)
	}
	// The title names the collection and both versions, as the folder's
	// own manifest says (read here apart from Repair's environment).
	c, err := toolenv.ReadCollection(v2)
	if err != nil {
		t.Fatal(err)
	}
	lin, err := drift.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Repair(context.Background(), RepairOptions{Collection: v2, WorkOptions: WorkOptions{Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Old-documentation calls on %s %s (drifted from %s)", c.Name, lin.Manifest.Version, lin.Manifest.BaseVersion); rep.Title != want || lin.Manifest.Version == lin.Manifest.BaseVersion {
		t.Errorf("title %q, want %q", rep.Title, want)
	}
	// Not drifted: an invalid-arguments error naming the folder.
	dir := t.TempDir()
	demoC, _ := demo.Collection()
	if err := toolenv.WriteCollection(dir, demoC); err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(context.Background(), RepairOptions{Collection: dir}); toolenv.StatusOf(err) != toolenv.StatusInvalidArguments || !strings.Contains(err.Error(), dir+" is not a drifted collection") {
		t.Errorf("undrifted: %v", err)
	}
	if _, err := Repair(context.Background(), RepairOptions{Collection: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing folder: no error")
	}
}

// TestRunsDoNotDependOnParallel: RunTasks runs episodes at once, and
// what a measurement reports does not depend on how many: Repair with
// one episode at a time and with eight gives the same runs (the time
// taken aside), for both agents and both settings.
func TestRunsDoNotDependOnParallel(t *testing.T) {
	v2 := driftedDemo(t)
	tasks := oldTasks(t)
	var reports [][]Run
	for _, parallel := range []int{1, 8} {
		rep, err := Repair(context.Background(), RepairOptions{WorkOptions: WorkOptions{Tasks: tasks, Parallel: parallel}, Collection: v2,
			Agents: []string{AgentOracle, AgentDirectReplay}})
		if err != nil {
			t.Fatal(err)
		}
		var runs []Run
		for _, r := range rep.Runs {
			c := *r
			c.Elapsed = 0
			runs = append(runs, c)
		}
		reports = append(reports, runs)
	}
	one, eight := fmt.Sprintf("%+v", reports[0]), fmt.Sprintf("%+v", reports[1])
	if one != eight {
		t.Errorf("one at a time:\n%s\neight at once:\n%s", one, eight)
	}
	if len(reports[0]) != 4 || reports[0][3].Rerouted == 0 || reports[0][3].Tasks == 0 {
		t.Errorf("the runs measured nothing: %s", one)
	}
}

// oldTasks writes the demo's tasks (written against its first version)
// to a file.
func oldTasks(t *testing.T) string {
	tasks, err := demo.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, task := range tasks {
		line, _ := json.Marshal(task)
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
