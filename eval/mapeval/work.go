package mapeval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/faults"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/failover"
	"github.com/toolenv/toolenv/mapping/repair"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
	"github.com/toolenv/toolenv/mapping/verify"
)

// Run is one setting's outcome over a set of tasks.
type Run struct {
	Setting string `json:"setting"`
	Agent   string `json:"agent"`
	Tasks   int    `json:"tasks"`
	// CallsOK counts the tasks whose every call succeeded (at least as
	// many calls as gold ones).
	CallsOK int `json:"all_calls_ok"`
	// Correct of Checkable tasks (those with a gold answer) reached it.
	Correct   int `json:"correct_answers"`
	Checkable int `json:"checkable_answers"`
	Calls     int `json:"calls"`
	// Rerouted counts the calls a mapping repaired or failed over.
	Rerouted int `json:"rerouted_calls"`
	// Statuses counts the failed calls by status.
	Statuses map[string]int `json:"failed_statuses,omitempty"`
	Elapsed  time.Duration  `json:"elapsed_ns"`
}

// Rate is n as a share of the run's tasks.
func (r *Run) Rate(n int) float64 {
	if r.Tasks == 0 {
		return 0
	}
	return float64(n) / float64(r.Tasks)
}

// WorkOptions are what both measurements at work share.
type WorkOptions struct {
	// Tasks is the tasks file to run; Limit keeps only its first N tasks
	// (0: all).
	Tasks string
	Limit int
	// Logger logs skipped tasks; EnvLogger is the logger of the
	// environments opened (nil: none).
	Logger, EnvLogger *slog.Logger
	// Getenv reads credentials (nil: os.Getenv).
	Getenv func(string) string
	// Progress receives a progress bar per setting (nil: none).
	Progress io.Writer
	// Parallel is how many episodes run at once (0: one per core); the
	// figures do not depend on it.
	Parallel int

	// images shares the indexed databases between the environments a
	// measurement opens (one per setting; made by defaults).
	images *rodb.Images
}

func (o *WorkOptions) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.images == nil {
		o.images = &rodb.Images{}
	}
	if o.EnvLogger == nil {
		o.EnvLogger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// open opens an in-memory environment of the given collection folders
// with the default configuration changed by set.
func (o *WorkOptions) open(ctx context.Context, dirs []string, set func(*environment.Config)) (*environment.Environment, error) {
	cfg := environment.Default()
	cfg.Store, cfg.Collections = ":memory:", dirs
	set(&cfg)
	cfg.Logger, cfg.Getenv, cfg.Images = o.EnvLogger, o.Getenv, o.images
	return environment.Open(ctx, &cfg)
}

// Agents of Repair.
const (
	// AgentOracle executes the old gold calls.
	AgentOracle = "oracle"
	// AgentDirectReplay is the direct agent with a model that replays what
	// a model shown the old documentation writes.
	AgentDirectReplay = "direct-replay"
)

// RepairOptions say what Repair runs.
type RepairOptions struct {
	WorkOptions
	// Collection is the drifted collection folder.
	Collection string
	// Agents to run (AgentOracle, AgentDirectReplay). Without Tasks, one
	// call per documented API is run by the oracle alone.
	Agents []string
}

// Report is what a measurement at work returns: its runs, with a title
// saying what was measured, and how it was made.
type Report struct {
	Title      string              `json:"title"`
	Provenance *toolenv.Provenance `json:"provenance"`
	// Mapped and Tools are Failover's mapped endpoints of the primary's.
	Mapped int `json:"mapped,omitempty"`
	Tools  int `json:"tools,omitempty"`
	// Mapping says how Failover's mapping was made: the endpoints mapped
	// by each evidence, the probes, and the endpoints left unmapped with
	// the reason.
	Mapping *MappingSummary `json:"mapping,omitempty"`
	Runs    []*Run          `json:"runs"`
}

// MappingSummary is how Failover mapped the primary onto the alternative.
type MappingSummary struct {
	// ByStructure counts the endpoints the documentation alone mapped
	// (one clear candidate); ByProbe those mapped because calls of both
	// endpoints agreed (candidates the documentation could not tell
	// apart, or a weak one).
	ByStructure int `json:"by_structure"`
	ByProbe     int `json:"by_probe"`
	// Probed counts the candidate pairs probed, by outcome (agree,
	// disagree, inconclusive); Calls every call the probes made.
	Probed map[string]int `json:"probed"`
	Calls  int            `json:"calls"`
	// Unmapped are the primary's endpoints left without a stand-in.
	Unmapped []verify.Unmapped `json:"unmapped,omitempty"`
	// Verdicts are the probed pairs.
	Verdicts []*verify.Verdict `json:"verdicts,omitempty"`
	// Pairs are the mappings failover used, by primary endpoint.
	Pairs []MappedPair `json:"pairs"`
}

// MappedPair is one endpoint of the primary and its stand-in.
type MappedPair struct {
	From     string          `json:"from"`
	To       string          `json:"to"`
	Score    float64         `json:"score"`
	Evidence verify.Evidence `json:"evidence"`
}

// Repair runs the tasks of a collection's old version against its
// drifted version (strict mode), once as it is and once with the repair
// adapter, for each agent.
func Repair(ctx context.Context, o RepairOptions) (*Report, error) {
	o.defaults()
	// One environment per setting, shared by the agents: opening the
	// repair setting's maps the old documentation onto the current tools,
	// the costly part. Both are needed (every agent runs both settings),
	// so they open at once; the first gives the collection and its lineage.
	type setting struct {
		env     *environment.Environment
		counted *atomic.Int64 // the run counting the calls a mapping re-routed
	}
	settings := map[bool]*setting{}
	defer func() {
		for _, st := range settings {
			st.env.Close()
		}
	}()
	var openErr [2]error
	var opened [2]*environment.Environment
	var wg sync.WaitGroup
	for i, rep2 := range []bool{false, true} {
		wg.Go(func() {
			opened[i], openErr[i] = o.open(ctx, []string{o.Collection}, func(c *environment.Config) { c.Drift.Mode = drift.ModeStrict; c.Repair.Base = rep2 })
		})
	}
	wg.Wait()
	for i, rep2 := range []bool{false, true} {
		if opened[i] != nil {
			st := &setting{env: opened[i], counted: new(atomic.Int64)}
			countRerouted(st.env, st.counted)
			settings[rep2] = st
		}
	}
	// The plain setting's error first (both fail alike on a bad folder),
	// then whether the collection is drifted, then the repair setting's.
	if openErr[0] != nil {
		return nil, openErr[0]
	}
	first := settings[false]
	cols := first.env.Collections()
	if len(cols) != 1 || !drift.IsDrifted(cols[0]) {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%s is not a drifted collection", o.Collection)
	}
	if openErr[1] != nil {
		return nil, openErr[1]
	}
	c := cols[0]
	lin := first.env.Lineage(c.Name)
	if lin == nil {
		return nil, fmt.Errorf("drifted collection %s: the environment opened no lineage for it", c.Name)
	}
	var tasks []*toolenv.Task
	agents := o.Agents
	if o.Tasks != "" {
		ts, problems, err := toolenv.ReadTasks(o.Tasks)
		if err != nil {
			return nil, err
		}
		for _, p := range problems {
			o.Logger.Warn("task skipped", "err", p)
		}
		tasks = ts
	} else {
		tasks = ExampleTasks(lin.Base)
		agents = []string{AgentOracle}
	}
	for _, ag := range agents {
		if ag != AgentOracle && ag != AgentDirectReplay {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--agent %q: want oracle or direct-replay", ag)
		}
	}
	if o.Limit > 0 && len(tasks) > o.Limit {
		tasks = tasks[:o.Limit]
	}
	if len(tasks) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "no tasks to run (give --tasks, or a collection whose APIs document example values)")
	}
	rep := &Report{Title: fmt.Sprintf("Old-documentation calls on %s %s (drifted from %s)", c.Name, lin.Manifest.Version, lin.Manifest.BaseVersion),
		Provenance: buildinfo.Provenance(nil, map[string]any{"collection": o.Collection, "tasks": o.Tasks, "limit": o.Limit, "agents": agents})}
	for _, ag := range agents {
		for _, rep2 := range []bool{false, true} {
			st := settings[rep2]
			name := "strict, no repair"
			if rep2 {
				name = "strict + repair adapter"
			}
			r := &Run{Setting: name, Agent: ag}
			st.counted.Store(0)
			bar := progress.New(o.Progress, len(tasks), ag+", "+name)
			if ag == AgentOracle {
				RunTasks(ctx, st.env, agent.Oracle{}, nil, tasks, r, bar, o.Parallel)
			} else {
				RunTasks(ctx, st.env, agent.Direct{}, ReplayModel(tasks), tasks, r, bar, o.Parallel)
			}
			bar.Finish()
			r.Rerouted = int(st.counted.Load())
			rep.Runs = append(rep.Runs, r)
		}
	}
	return rep, ctx.Err()
}

// FailoverOptions say what Failover runs.
type FailoverOptions struct {
	WorkOptions
	// Primary is the collection folder whose tasks are run (its
	// tasks.jsonl unless Tasks is set); Alternative is the alternative
	// provider's folder.
	Primary, Alternative string
	// NoProbe maps from the documentation alone (no probe calls).
	NoProbe bool
	// Probe configures the probes (package verify; zero: its defaults).
	Probe verify.Options
}

// Failover serves a primary collection and an alternative one, takes
// every endpoint of the primary down (faults: 503 on every call) and runs
// the primary's tasks with the oracle: with the primary up, down, and
// down with failover through the mapping of the primary onto the
// alternative. The mapping is made before the outage, as a mappings file
// is: structurally from the two collections' documentation, and, where
// the documentation does not decide, by probing both endpoints with the
// same sampled calls (package verify; NoProbe: not). The task's gold
// calls are never used to map.
func Failover(ctx context.Context, o FailoverOptions) (*Report, error) {
	o.defaults()
	pc, err := toolenv.ReadCollection(o.Primary)
	if err != nil {
		return nil, err
	}
	ac, err := toolenv.ReadCollection(o.Alternative)
	if err != nil {
		return nil, err
	}
	tasksPath := o.Tasks
	if tasksPath == "" {
		tasksPath = filepath.Join(o.Primary, toolenv.TasksFile)
	}
	tasks, _, err := toolenv.ReadTasks(tasksPath)
	if err != nil {
		return nil, err
	}
	if o.Limit > 0 && len(tasks) > o.Limit {
		tasks = tasks[:o.Limit]
	}
	ms, sum, err := o.mapFailover(ctx, pc, ac)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "toolenv-failover-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	mfile := filepath.Join(tmp, "failover-mappings.json")
	if err := mapping.WriteSet(mfile, &mapping.Set{Version: mapping.SetVersion, Mappings: ms}); err != nil {
		return nil, err
	}
	ffile := filepath.Join(tmp, "faults.json")
	cfg := faults.Config{Seed: 1, Rules: []faults.Rule{{Collection: pc.Name, Tool: "*", Errors: &faults.Errors{Rate: 1, Status: 503}}}}
	if err := toolenv.WriteJSONFile(ffile, cfg); err != nil {
		return nil, err
	}
	tools := 0
	for _, t := range pc.Tools {
		if !t.Hidden() {
			tools++
		}
	}
	rep := &Report{Title: fmt.Sprintf("Tasks of %s with its backend down; alternative %s (%d of %d endpoints mapped: %d by structure, %d by probe)", pc.Name, ac.Name, len(ms), tools, sum.ByStructure, sum.ByProbe),
		Provenance: buildinfo.Provenance(nil, map[string]any{"primary": o.Primary, "alternative": o.Alternative, "tasks": tasksPath, "limit": o.Limit, "probe": !o.NoProbe}),
		Mapped:     len(ms), Tools: tools, Mapping: sum}
	for _, s := range []struct {
		name           string
		down, failover bool
	}{{"primary up", false, false}, {"primary down, no failover", true, false}, {"primary down + failover", true, true}} {
		env, err := o.open(ctx, []string{o.Primary, o.Alternative}, func(c *environment.Config) {
			if s.down {
				c.Faults = ffile
			}
			if s.failover {
				c.Failover.Mappings = mfile
				c.Failover.MinScore = 0.5
			}
		})
		if err != nil {
			return nil, err
		}
		r := &Run{Setting: s.name, Agent: AgentOracle}
		var rerouted atomic.Int64
		countRerouted(env, &rerouted)
		bar := progress.New(o.Progress, len(tasks), s.name)
		RunTasks(ctx, env, agent.Oracle{}, nil, tasks, r, bar, o.Parallel)
		r.Rerouted = int(rerouted.Load())
		bar.Finish()
		env.Close()
		rep.Runs = append(rep.Runs, r)
	}
	return rep, ctx.Err()
}

// mapFailover maps the primary onto the alternative one-to-one:
// structurally, then probing the undecided endpoints through an
// environment serving both (the primary up) unless NoProbe.
func (o *FailoverOptions) mapFailover(ctx context.Context, pc, ac *toolenv.Collection) ([]*mapping.Mapping, *MappingSummary, error) {
	m, a, b := truth.NewMatcher(pc.Tools, ac.Tools, structural.Options{})
	if o.NoProbe {
		ms, err := m.Between(ctx, a, b)
		if err != nil {
			return nil, nil, err
		}
		sum := &MappingSummary{ByStructure: len(ms), Probed: map[string]int{}}
		mapped := map[string]bool{}
		for _, mp := range ms {
			mapped[mp.From] = true
		}
		for _, t := range pc.Tools {
			if !t.Hidden() && !mapped[t.ID] {
				sum.Unmapped = append(sum.Unmapped, verify.Unmapped{Tool: t.ID, Reason: "no candidate scored high enough or was free (probes off)"})
			}
		}
		for _, mp := range ms {
			sum.Pairs = append(sum.Pairs, MappedPair{From: mp.From, To: mp.To, Score: mp.Score, Evidence: verify.Structure})
		}
		return ms, sum, nil
	}
	env, err := o.open(ctx, []string{o.Primary, o.Alternative}, func(*environment.Config) {})
	if err != nil {
		return nil, nil, err
	}
	defer env.Close()
	res, err := verify.Between(ctx, verify.Pipeline{Handler: env.Pipeline, Collection: env.Registry.Collection}, m, a, b, o.Probe)
	if err != nil {
		return nil, nil, err
	}
	sum := &MappingSummary{ByStructure: res.Count(verify.Structure), ByProbe: res.Count(verify.Probe), Probed: map[string]int{},
		Calls: res.Calls, Unmapped: res.Unmapped, Verdicts: res.Verdicts}
	for _, v := range res.Verdicts {
		sum.Probed[v.Outcome]++
	}
	for _, mp := range res.Mappings {
		sum.Pairs = append(sum.Pairs, MappedPair{From: mp.From, To: mp.To, Score: mp.Score, Evidence: res.Evidence[mp.From]})
	}
	return res.Mappings, sum, nil
}

// RunTasks runs an agent over tasks in env and adds each episode's score
// to r: all calls succeeded, and (NL2SQL) the answer equals the gold
// one. Up to parallel episodes run at once (0: one per core); each is
// its own session, and the scores are summed in the tasks' order, so r
// is the same however many run at once. bar may be nil.
func RunTasks(ctx context.Context, env *environment.Environment, ag agent.Agent, model agent.Model, tasks []*toolenv.Task, r *Run, bar *progress.Bar, parallel int) {
	if bar == nil {
		bar = progress.New(io.Discard, len(tasks), "")
	}
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	tt := func(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error) {
		if ts, err := harness.TaskTools(c, t); err == nil && len(ts) > 0 {
			return ts, nil
		}
		return agent.TaskTools(c, t), nil
	}
	local := agent.NewLocal(env.Pipeline, env.Registry.Collections(), agent.LocalOptions{TaskTools: tt})
	if r.Statuses == nil {
		r.Statuses = map[string]int{}
	}
	outcomes := make([]*episodeScore, len(tasks))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(parallel, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(tasks) || ctx.Err() != nil {
					return
				}
				outcomes[i] = runEpisode(ctx, env, local, ag, model, tasks[i])
				bar.Add(1)
			}
		}()
	}
	wg.Wait()
	for _, o := range outcomes {
		if o == nil { // not run: the context ended
			break
		}
		r.Tasks++
		if o.startStatus != "" {
			r.Statuses["start: "+o.startStatus]++
			continue
		}
		r.Calls += o.calls
		for _, st := range o.failed {
			r.Statuses[st]++
		}
		if o.callsOK {
			r.CallsOK++
		}
		if o.checkable {
			r.Checkable++
		}
		if o.correct {
			r.Correct++
		}
	}
	r.Elapsed = time.Since(start)
}

// episodeScore is one task's episode as RunTasks counts it.
type episodeScore struct {
	startStatus                 string   // the session did not start: its status
	calls                       int      // calls made
	failed                      []string // the failed calls' statuses
	callsOK, checkable, correct bool
}

// runEpisode runs one task in its own session and scores it.
func runEpisode(ctx context.Context, env *environment.Environment, local *agent.Local, ag agent.Agent, model agent.Model, t *toolenv.Task) *episodeScore {
	sc := &episodeScore{}
	s, err := local.Start(ctx, t)
	if err != nil {
		sc.startStatus = string(toolenv.StatusOf(err))
		return sc
	}
	o := ag.Run(ctx, &agent.Episode{Task: t, Session: s, Model: model, ModelName: "replay", Collection: env.Registry.Collection(t.Collection)})
	s.Close(ctx)
	allOK := len(o.Results) > 0
	for _, res := range o.Results {
		sc.calls++
		if res.Status != toolenv.StatusOK {
			allOK = false
			sc.failed = append(sc.failed, string(res.Status))
		}
	}
	sc.callsOK = allOK && len(o.Results) >= len(t.Gold)
	if gold, ok, err := answer.Gold(t); err == nil && ok {
		sc.checkable = true
		var ls []answer.Labeled
		for _, res := range o.Results {
			ls = append(ls, answer.Labeled{Label: res.Label, OK: res.Status == toolenv.StatusOK, Body: res.Body})
		}
		if got, err := answer.FromResults(t, ls); err == nil {
			sc.correct, _ = answer.Equal(gold, got, answer.Options{})
		}
	}
	return sc
}

// countRerouted wraps an environment's pipeline to count the calls a
// mapping re-routed (repaired or failed over) in *n.
func countRerouted(env *environment.Environment, n *atomic.Int64) {
	inner := env.Pipeline
	env.Pipeline = toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		res := inner.Invoke(ctx, call)
		if res.Meta[repair.MetaRepaired] == "true" || res.Meta[failover.MetaTo] != "" {
			n.Add(1)
		}
		return res
	})
}

// ReplayModel is a model that answers each task's prompt with the calls
// a model shown the old documentation writes: the task's gold calls, as a
// fenced JSON list with a sentence before it. It stands in for a hosted
// model that learned the old documentation, in process: the agent's
// prompt, parser and executor are what is measured, not a loopback HTTP
// round trip of every prompt (which cost a third of map eval repair's
// direct-replay runs). It is safe for concurrent use.
func ReplayModel(tasks []*toolenv.Task) agent.Model {
	byQuery := map[string]string{}
	for _, t := range tasks {
		calls := make([]map[string]any, 0, len(t.Gold))
		for _, g := range t.Gold {
			c := map[string]any{"name": g.Name, "arguments": g.Args}
			if g.Label != "" {
				c["label"] = g.Label
			}
			calls = append(calls, c)
		}
		b, _ := json.MarshalIndent(calls, "", "  ")
		byQuery[t.Query] = "I will call the APIs in this order:\n```json\n" + string(b) + "\n```"
	}
	return replayModel(byQuery)
}

// replayModel answers a prompt holding a task's query with its reply.
type replayModel map[string]string

// Chat answers with the reply of the first query found in the messages,
// last message first, or with an empty list of calls.
func (m replayModel) Chat(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	content := "[]"
	prompt := 0
	for _, msg := range req.Messages {
		prompt += len(msg.Content)
	}
find:
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for q, reply := range m {
			if q != "" && strings.Contains(req.Messages[i].Content, q) {
				content = reply
				break find
			}
		}
	}
	usage := llm.Usage{PromptTokens: prompt / 4, CompletionTokens: len(content)/4 + 1}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	return &llm.Response{Model: req.Model, Usage: usage, Choices: []llm.Choice{{
		Message:      llm.Message{Role: "assistant", Content: content},
		FinishReason: "stop",
	}}}, nil
}

// ExampleTasks makes one single-call task per tool of c: its first
// documented example, else its documented example values (ToolBench's
// example_value) and defaults when they cover the required arguments.
func ExampleTasks(c *toolenv.Collection) []*toolenv.Task {
	var out []*toolenv.Task
	for _, t := range c.Tools {
		if t.Hidden() || t.Deprecated != nil {
			continue
		}
		if len(t.Examples) > 0 && t.Examples[0].Args != nil {
			out = append(out, &toolenv.Task{ID: t.Name, Collection: c.Name, Query: "call " + t.Name, Tools: []string{t.Name},
				Gold: []toolenv.GoldCall{{Name: t.Name, Args: t.Examples[0].Args}}})
			continue
		}
		args := map[string]any{}
		ok := true
		for _, n := range t.Input.Names() {
			p := t.Input.Properties[n]
			var v any
			if raw, has := p.Extra["example_value"]; has && toolenv.DecodeJSON(raw, &v) == nil && v != nil && v != "" {
				if c, changed := mapping.Coerce(v, p.Type); changed {
					v = c
				}
				args[n] = v
			} else if p.Default != nil {
				args[n] = p.Default
			} else if t.Input.IsRequired(n) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		out = append(out, &toolenv.Task{ID: t.Name, Collection: c.Name, Query: "call " + t.Name, Tools: []string{t.Name},
			Gold: []toolenv.GoldCall{{Name: t.Name, Args: args}}})
	}
	return out
}

// Markdown writes the report's runs as a Markdown table under its title,
// and the toolenv version that made them.
func (rep *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# %s\n\n", rep.Title)
	fmt.Fprintf(w, "| agent | setting | tasks | all calls succeeded | answer = gold | calls re-routed by a mapping | failed calls by status |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rep.Runs {
		correct := "n/a"
		if r.Checkable > 0 {
			correct = fmt.Sprintf("%d (%.1f%%)", r.Correct, 100*float64(r.Correct)/float64(r.Checkable))
		}
		var st []string
		for k, v := range r.Statuses {
			st = append(st, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(st)
		fmt.Fprintf(w, "| %s | %s | %d | %d (%.1f%%) | %s | %d | %s |\n", r.Agent, r.Setting, r.Tasks, r.CallsOK, 100*r.Rate(r.CallsOK), correct, r.Rerouted, strings.Join(st, ", "))
	}
	if s := rep.Mapping; s != nil {
		fmt.Fprintf(w, "\nMapped %d of %d endpoints: %d by structure (the documentation alone), %d by probe (calls of both endpoints agreed).", rep.Mapped, rep.Tools, s.ByStructure, s.ByProbe)
		if n := s.Probed[verify.Agree] + s.Probed[verify.Disagree] + s.Probed[verify.Inconclusive]; n > 0 {
			fmt.Fprintf(w, " Probed %d candidate pairs with %d calls: %d agreed, %d disagreed, %d inconclusive.", n, s.Calls, s.Probed[verify.Agree], s.Probed[verify.Disagree], s.Probed[verify.Inconclusive])
		}
		fmt.Fprintln(w)
		if len(s.Unmapped) > 0 {
			fmt.Fprintf(w, "\nUnmapped endpoints:\n\n")
			for _, u := range s.Unmapped {
				fmt.Fprintf(w, "- %s: %s\n", u.Tool, u.Reason)
			}
		}
	}
	if rep.Provenance != nil {
		fmt.Fprintf(w, "\nMade by toolenv %s.\n", rep.Provenance.Version)
	}
}
