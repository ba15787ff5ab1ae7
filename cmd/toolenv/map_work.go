package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/faults"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/failover"
	"github.com/toolenv/toolenv/mapping/repair"
	"github.com/toolenv/toolenv/mapping/structural"
	"github.com/toolenv/toolenv/mapping/truth"
)

// This file measures mappings at work: drift repair (the oracle and a
// replaying agent with old documentation against a drifted collection)
// and failover (tasks of a collection whose backend is down, with an
// alternative provider mapped structurally).

// workRun is one configuration's outcome over a set of tasks.
type workRun struct {
	Setting   string         `json:"setting"`
	Agent     string         `json:"agent"`
	Tasks     int            `json:"tasks"`
	CallsOK   int            `json:"all_calls_ok"`
	Correct   int            `json:"correct_answers"`
	Checkable int            `json:"checkable_answers"`
	Calls     int            `json:"calls"`
	Rerouted  int            `json:"rerouted_calls"`
	Statuses  map[string]int `json:"failed_statuses,omitempty"`
	Elapsed   time.Duration  `json:"elapsed_ns"`
}

func (r *workRun) rate(n int) float64 {
	if r.Tasks == 0 {
		return 0
	}
	return float64(n) / float64(r.Tasks)
}

// workEnv opens an environment of the given collection folders with
// default flags changed by set.
func workEnv(ctx context.Context, e *env, dirs []string, set func(*environment.Config)) (*environment.Environment, error) {
	cfg := environment.Default()
	cfg.Store, cfg.Collections = ":memory:", dirs
	if set != nil {
		set(&cfg)
	}
	quiet := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv, logJSON: e.logJSON}
	quiet.logLevel.Set(max(e.logLevel.Level(), slog.LevelWarn)) // environment chatter only at warn
	cfg.Logger, cfg.Getenv = quiet.logger(), e.getenv
	return environment.Open(ctx, &cfg)
}

// runTasks runs an agent over tasks in env and scores each episode: all
// calls succeeded, and (NL2SQL) the answer equals the gold one.
func runTasks(ctx context.Context, env *environment.Environment, ag agent.Agent, model agent.Model, tasks []*toolenv.Task, r *workRun, bar *progress.Bar) {
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
	for _, t := range tasks {
		if ctx.Err() != nil {
			return
		}
		r.Tasks++
		s, err := local.Start(ctx, t)
		if err != nil {
			r.Statuses["start: "+string(toolenv.StatusOf(err))]++
			bar.Add(1)
			continue
		}
		o := ag.Run(ctx, &agent.Episode{Task: t, Session: s, Model: model, ModelName: "replay", Collection: env.Registry.Collection(t.Collection)})
		s.Close(ctx)
		allOK := len(o.Results) > 0
		for _, res := range o.Results {
			r.Calls++
			if res.Status != toolenv.StatusOK {
				allOK = false
				r.Statuses[string(res.Status)]++
			}
		}
		if allOK && len(o.Results) >= len(t.Gold) {
			r.CallsOK++
		}
		if gold, ok, err := answer.Gold(t); err == nil && ok {
			r.Checkable++
			var ls []answer.Labeled
			for _, res := range o.Results {
				ls = append(ls, answer.Labeled{Label: res.Label, OK: res.Status == toolenv.StatusOK, Body: res.Body})
			}
			if got, err := answer.FromResults(t, ls); err == nil {
				if eq, _ := answer.Equal(gold, got, answer.Options{}); eq {
					r.Correct++
				}
			}
		}
		bar.Add(1)
	}
	r.Elapsed = time.Since(start)
}

// countingEnv wraps an environment's pipeline to count calls a mapping
// re-routed (repaired or failed over).
func countRerouted(env *environment.Environment, n *int) {
	inner := env.Pipeline
	env.Pipeline = toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		res := inner.Invoke(ctx, call)
		if res.Meta[repair.MetaRepaired] == "true" || res.Meta[failover.MetaTo] != "" {
			*n++
		}
		return res
	})
}

// replayModel starts a loopback OpenAI-compatible server (package
// llmtest) that answers each task's prompt with the calls a model shown
// the old documentation writes: the task's gold calls, as a fenced JSON
// list with a sentence before it. It stands in for a hosted model that
// learned the old documentation.
func replayModel(tasks []*toolenv.Task) (*llmtest.Server, agent.Model) {
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
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		for i := len(req.Messages) - 1; i >= 0; i-- {
			for q, reply := range byQuery {
				if q != "" && strings.Contains(req.Messages[i].Content, q) {
					return llmtest.Reply{Content: reply}
				}
			}
		}
		return llmtest.Reply{Content: "[]"}
	})
	return srv, llm.New(srv.URL(), llm.Options{MaxRetries: -1})
}

func newMapEvalRepairCmd(e *env) *cobra.Command {
	var (
		dir       string
		tasksPath string
		limit     int
		agents    []string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Completion of calls written against old documentation on a drifted collection, without and with the repair adapter",
		Long: `Run the tasks of a collection's old version against its drifted version (strict
mode), once as it is and once with --repair (the adapter maps the old
documentation onto the current tools structurally, without the manifest), and
report the completion: every call succeeded, and for NL2SQL tasks the answer
equals the gold answer.

Agents: "oracle" executes the old gold calls; "direct-replay" is the direct agent
with a model that replays what a model shown the old documentation writes (the old
gold calls, in its answer format) from a loopback OpenAI-compatible server, so the
calls pass through the agent's parser and executor. Without --tasks, each API of
the old version with documented example values is called once (StableToolBench
has no gold call sequences).`,
		Example: `  toolenv drift --in out/bird/rest --out out/drift/rest-v2 --seed 1
  toolenv map eval repair --collection out/drift/rest-v2 --tasks out/bird/rest/tasks.jsonl
  toolenv map eval repair --collection out/drift/stb-v2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if dir == "" {
				return usagef("--collection DRIFTED_DIR is required (a folder written by toolenv drift)")
			}
			c, err := toolenv.ReadCollection(dir)
			if err != nil {
				return err
			}
			if !drift.IsDrifted(c) {
				return usagef("%s is not a drifted collection", dir)
			}
			lin, err := drift.Open(c)
			if err != nil {
				return err
			}
			var tasks []*toolenv.Task
			if tasksPath != "" {
				ts, problems, err := toolenv.ReadTasks(tasksPath)
				if err != nil {
					return err
				}
				for _, p := range problems {
					e.logger().Warn("task skipped", "err", p)
				}
				tasks = ts
			} else {
				tasks = exampleTasks(lin.Base)
				agents = []string{"oracle"}
			}
			if limit > 0 && len(tasks) > limit {
				tasks = tasks[:limit]
			}
			if len(tasks) == 0 {
				return usagef("no tasks to run (give --tasks, or a collection whose APIs document example values)")
			}
			var runs []*workRun
			for _, ag := range agents {
				for _, rep := range []bool{false, true} {
					env, err := workEnv(ctx, e, []string{dir}, func(c *environment.Config) { c.Drift.Mode = drift.ModeStrict; c.Repair.Base = rep })
					if err != nil {
						return err
					}
					setting := "strict, no repair"
					if rep {
						setting = "strict + repair adapter"
					}
					r := &workRun{Setting: setting, Agent: ag}
					countRerouted(env, &r.Rerouted)
					bar := progress.New(e.stderr, len(tasks), ag+", "+setting)
					switch ag {
					case "oracle":
						runTasks(ctx, env, agent.Oracle{}, nil, tasks, r, bar)
					case "direct-replay":
						srv, model := replayModel(tasks)
						runTasks(ctx, env, agent.Direct{}, model, tasks, r, bar)
						srv.Close()
					default:
						env.Close()
						return usagef("--agent %q: want oracle or direct-replay", ag)
					}
					bar.Finish()
					env.Close()
					runs = append(runs, r)
				}
			}
			if asJSON {
				return writeJSON(e.stdout, runs)
			}
			writeWorkRuns(e.stdout, fmt.Sprintf("Old-documentation calls on %s %s (drifted from %s)", c.Name, lin.Manifest.Version, lin.Manifest.BaseVersion), runs)
			return ctx.Err()
		},
	}
	cmd.Flags().StringVar(&dir, "collection", "", "the drifted collection folder")
	cmd.Flags().StringVar(&tasksPath, "tasks", "", "tasks of the old version (tasks.jsonl with gold calls); default: one call per documented API")
	cmd.Flags().IntVar(&limit, "limit", 0, "run only the first N tasks")
	cmd.Flags().StringSliceVar(&agents, "agent", []string{"oracle", "direct-replay"}, "agents: oracle, direct-replay")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

// exampleTasks makes one single-call task per tool of c: its first
// documented example, else its documented example values (ToolBench's
// example_value) and defaults when they cover the required arguments.
func exampleTasks(c *toolenv.Collection) []*toolenv.Task {
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

func writeWorkRuns(w io.Writer, title string, runs []*workRun) {
	fmt.Fprintf(w, "# %s\n\n", title)
	fmt.Fprintf(w, "| agent | setting | tasks | all calls succeeded | answer = gold | calls re-routed by a mapping | failed calls by status |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range runs {
		correct := "n/a"
		if r.Checkable > 0 {
			correct = fmt.Sprintf("%d (%.1f%%)", r.Correct, 100*float64(r.Correct)/float64(r.Checkable))
		}
		var st []string
		for k, v := range r.Statuses {
			st = append(st, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(st)
		fmt.Fprintf(w, "| %s | %s | %d | %d (%.1f%%) | %s | %d | %s |\n", r.Agent, r.Setting, r.Tasks, r.CallsOK, 100*r.rate(r.CallsOK), correct, r.Rerouted, strings.Join(st, ", "))
	}
}

func newMapEvalFailoverCmd(e *env) *cobra.Command {
	var (
		primary, alternative string
		tasksPath            string
		limit                int
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Completion of a collection's tasks when its backend is down, without and with failover to a structurally mapped alternative",
		Long: `Serve a primary collection and an alternative one, take every endpoint of the
primary down (faults: 503 on every call), and run the primary's tasks with the
oracle: once as it is, once with failover through the structural mapping from the
primary onto the alternative (computed here from their documentation alone).
Reports how many tasks still complete and reach the gold answer.

The NL2SQL build's obfuscated REST variant is a ready alternative provider: the
same queries behind endpoints named FUNC_n with arguments ARG_n, so the mapping
has only descriptions, types and values to go on.`,
		Example: `  toolenv build bird --data ../shared/data/bird --out out/bird --obfuscate
  toolenv map eval failover --primary out/bird/rest --alternative out/bird/rest-obfuscated`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if primary == "" || alternative == "" {
				return usagef("--primary and --alternative are required (collection folders)")
			}
			pc, err := toolenv.ReadCollection(primary)
			if err != nil {
				return err
			}
			ac, err := toolenv.ReadCollection(alternative)
			if err != nil {
				return err
			}
			if tasksPath == "" {
				tasksPath = filepath.Join(primary, toolenv.TasksFile)
			}
			tasks, _, err := toolenv.ReadTasks(tasksPath)
			if err != nil {
				return err
			}
			if limit > 0 && len(tasks) > limit {
				tasks = tasks[:limit]
			}
			ms, err := truth.MapVersions(ctx, pc.Tools, ac.Tools, structural.Options{})
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "toolenv-failover-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			mfile := filepath.Join(tmp, "failover-mappings.json")
			if err := mapping.WriteSet(mfile, &mapping.Set{Version: mapping.SetVersion, Mappings: ms}); err != nil {
				return err
			}
			ffile := filepath.Join(tmp, "faults.json")
			cfg := faults.Config{Seed: 1, Rules: []faults.Rule{{Collection: pc.Name, Tool: "*", Errors: &faults.Errors{Rate: 1, Status: 503}}}}
			if err := toolenv.WriteJSONFile(ffile, cfg); err != nil {
				return err
			}
			var runs []*workRun
			for _, s := range []struct {
				name           string
				down, failover bool
			}{{"primary up", false, false}, {"primary down, no failover", true, false}, {"primary down + failover", true, true}} {
				setting := s.name
				env, err := workEnv(ctx, e, []string{primary, alternative}, func(c *environment.Config) {
					if s.down {
						c.Faults = ffile
					}
					if s.failover {
						c.Failover.Mappings = mfile
						c.Failover.MinScore = 0.5
					}
				})
				if err != nil {
					return err
				}
				r := &workRun{Setting: setting, Agent: "oracle"}
				countRerouted(env, &r.Rerouted)
				bar := progress.New(e.stderr, len(tasks), setting)
				runTasks(ctx, env, agent.Oracle{}, nil, tasks, r, bar)
				bar.Finish()
				env.Close()
				runs = append(runs, r)
			}
			if asJSON {
				return writeJSON(e.stdout, map[string]any{"mapped": len(ms), "tools": len(pc.Tools), "runs": runs})
			}
			writeWorkRuns(e.stdout, fmt.Sprintf("Tasks of %s with its backend down; alternative %s (%d of %d endpoints mapped structurally)", pc.Name, ac.Name, len(ms), len(pc.Tools)), runs)
			return ctx.Err()
		},
	}
	cmd.Flags().StringVar(&primary, "primary", "", "the primary collection folder (its tasks are run)")
	cmd.Flags().StringVar(&alternative, "alternative", "", "the alternative provider's collection folder")
	cmd.Flags().StringVar(&tasksPath, "tasks", "", "tasks to run (default: the primary's tasks.jsonl)")
	cmd.Flags().IntVar(&limit, "limit", 0, "run only the first N tasks")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}
