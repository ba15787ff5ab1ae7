package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/toolbench"
)

// The environments of the comparison (§4.3, Figure 3).
const (
	EnvReal      = "real"      // the real APIs (Engine.Invoker)
	EnvCached    = "cached"    // their recorded answers, then the simulator
	EnvSimulated = "simulated" // the simulator alone
)

// AgentModel is a model agents are run with.
type AgentModel struct {
	Name  string
	Model agent.Model
}

// CompareOptions configure Compare.
type CompareOptions struct {
	// Out is the folder written: tasks.jsonl, runs/<env>/<agent>-<model>,
	// functioning.jsonl and compare.{json,md,html}.
	Out string
	// Queries is how many queries to ask for (Table 14); default 20.
	Queries int
	// MinAPIs and MaxAPIs bound the APIs sampled per query; default 2
	// and 5, the paper's.
	MinAPIs, MaxAPIs int
	// Example fills the prompt's {Example}; default toolenv's own (the
	// paper does not print its examples).
	Example string
	Seed    int64
	// Agents are run with each of Models in each environment.
	Agents []agent.Agent
	Models []AgentModel
	// Simulated answers the simulated environment and the cached one's
	// misses: a handler over the same tools (SimulatedInvoker).
	Simulated toolenv.Handler
	// Judge scores the final answers (SoPR, and FAC); nil counts an
	// episode as passed when it ends with a final answer.
	Judge *judge.Judge
	// Concurrency is how many episodes run at once; default 4.
	Concurrency int
}

// CompareStats is the comparison's result.
type CompareStats struct {
	// Queries is how many queries were written; Kept how many remained
	// after the tool-functioning check of the real runs.
	Queries int `json:"queries"`
	Kept    int `json:"kept"`
	// Dropped lists the queries dropped, with why.
	Dropped map[string]string `json:"dropped"`
	// Rejected counts model answers that gave no query, by reason.
	Rejected map[string]int `json:"rejected"`
	// Rows are the pass rates, one row per agent and model.
	Rows []CompareRow `json:"rows"`
	// Scoring is "sopr" (with a judge) or "answered".
	Scoring string `json:"scoring"`
}

// CompareRow is one agent and model in the three environments.
type CompareRow struct {
	Agent string `json:"agent"`
	Model string `json:"model"`
	// Pass is the pass rate (%) per environment over the kept queries;
	// FAC the FAC solved rate, with a judge.
	Pass     map[string]float64 `json:"pass"`
	FAC      map[string]float64 `json:"fac,omitempty"`
	Episodes map[string]int     `json:"episodes"`
}

// SimulatedInvoker returns the call path of the simulated environment:
// the collections' tools answered by the virtual backend — the LLM
// simulator when model is set (a call it cannot answer fails: the
// synthesizer never stands in for it), else the offline synthesizer —
// with no upstream.
func SimulatedInvoker(colls []*toolenv.Collection, model simulate.ChatModel, modelName, prompt string) (toolenv.Handler, error) {
	reg := invoke.NewRegistry()
	for _, c := range colls {
		sc := *c
		sc.Backend = toolenv.BackendSpec{Type: "virtual"}
		sc.Policy.Sessions = false
		vo := virtual.Options{LLM: model, Model: modelName, Prompt: prompt, Tools: c.Tools}
		if model != nil {
			// The simulator named answers, or the call fails: the
			// synthesizer never stands in for it.
			vo.OnSimulatorFailure = virtual.FallbackError
		}
		b, err := virtual.Build(vo)
		if err != nil {
			return nil, err
		}
		if err := reg.Add(&sc, b); err != nil {
			return nil, err
		}
	}
	return invoke.New(reg, invoke.Options{}), nil
}

// recorder passes calls to the real environment and keeps its successful
// answers, which the cached environment serves.
type recorder struct {
	next toolenv.Handler
	mu   sync.Mutex
	seen map[string]*toolenv.Result
}

func (r *recorder) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	res := r.next.Invoke(ctx, call)
	if res.OK() && call.Tool != nil {
		if key, err := toolenv.CacheKey(call.Tool.ID, call.Args); err == nil {
			r.mu.Lock()
			r.seen[key] = res.Clone()
			r.mu.Unlock()
		}
	}
	return res
}

// cached answers from the real runs' answers, then from the dataset's
// kept real pairs, then from the simulator.
type cached struct {
	e    *Engine
	rec  *recorder
	next toolenv.Handler
}

func (c *cached) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call.Tool != nil {
		if key, err := toolenv.CacheKey(call.Tool.ID, call.Args); err == nil {
			c.rec.mu.Lock()
			res := c.rec.seen[key]
			c.rec.mu.Unlock()
			if res != nil {
				out := res.Clone()
				out.Source = toolenv.SourceCache
				return out
			}
			_, canon, _ := strings.Cut(key, "\x00")
			if c.e.Store != nil {
				if p, ok, err := c.e.Store.GetPair(ctx, c.e.Dataset, call.Tool.ID, canon); err == nil && ok && p.Origin == OriginReal && p.Filter == FilterKept {
					return &toolenv.Result{Status: p.Status, Body: p.Body, Error: p.Error, Source: toolenv.SourceCache}
				}
			}
		}
	}
	return c.next.Invoke(ctx, call)
}

// Compare runs the paper's real-versus-simulated comparison (§4.3):
// queries over 2–5 APIs from the Query Generation prompt (Table 14), the
// same agents and models in the real environment, a cached one and a
// simulated one, the tool-functioning check of the real runs (queries
// whose real APIs failed are dropped), and the pass rates side by side.
// Every stage resumes: the queries and episodes are files in Out.
func (e *Engine) Compare(ctx context.Context, opts CompareOptions) (*CompareStats, error) {
	if opts.Out == "" {
		return nil, usage("compare: no output folder")
	}
	if e.Model == nil {
		return nil, usage("compare: the queries need a model (Table 14's prompt): give --llm-url and --llm-model")
	}
	if len(opts.Agents) == 0 || len(opts.Models) == 0 || opts.Simulated == nil || e.Invoker == nil {
		return nil, usage("compare: give agents, agent models, the real call path and a simulated one")
	}
	if opts.Queries <= 0 {
		opts.Queries = 20
	}
	if opts.MinAPIs <= 0 {
		opts.MinAPIs = 2
	}
	if opts.MaxAPIs < opts.MinAPIs {
		opts.MaxAPIs = max(5, opts.MinAPIs)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Example == "" {
		opts.Example = compareExample
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	st := &CompareStats{Dropped: map[string]string{}, Rejected: map[string]int{}, Scoring: "answered"}
	if opts.Judge != nil {
		st.Scoring = "sopr"
	}
	tasks, err := e.compareQueries(ctx, opts, st)
	if err != nil {
		return st, err
	}
	st.Queries = len(tasks)
	if len(tasks) == 0 {
		return st, errors.New("compare: the model wrote no usable query (see the rejected counts)")
	}
	if err := toolenv.WriteTasks(filepath.Join(opts.Out, toolenv.TasksFile), tasks); err != nil {
		return st, err
	}
	colls := map[string]*toolenv.Collection{}
	for _, c := range e.Collections {
		colls[c.Name] = c
	}
	rec := &recorder{next: e.Invoker, seen: map[string]*toolenv.Result{}}
	envs := []struct {
		name string
		h    toolenv.Handler
	}{{EnvReal, rec}, {EnvCached, &cached{e: e, rec: rec, next: opts.Simulated}}, {EnvSimulated, opts.Simulated}}
	episodes := map[string]map[string][]*eval.Episode{} // env → agent/model → episodes
	for _, env := range envs {
		episodes[env.name] = map[string][]*eval.Episode{}
		for _, a := range opts.Agents {
			for _, m := range opts.Models {
				key := a.Name() + "/" + m.Name
				bar := e.bar(len(tasks), "compare: "+env.name+" environment, "+key)
				res, err := eval.Run(ctx, eval.Config{
					Tasks: tasks, Collections: colls, Env: agent.NewLocal(env.h, e.Collections, agent.LocalOptions{}),
					Agent: a, Model: m.Model, ModelName: m.Name, Concurrency: opts.Concurrency, Seed: opts.Seed,
					Judge: opts.Judge, FAC: opts.Judge != nil, Out: filepath.Join(opts.Out, "runs", env.name, safeName(a.Name()+"-"+m.Name)), Resume: true,
					Logger: e.log(), Progress: func(int, int, *eval.Episode) { bar.Add(1) },
				})
				bar.Finish()
				if err != nil {
					return st, fmt.Errorf("compare: %s %s: %w", env.name, key, err)
				}
				if res.Interrupted {
					return st, ErrInterrupted
				}
				episodes[env.name][key] = res.Episodes
			}
		}
	}
	// The tool-functioning check of the real runs.
	keep, err := e.functioning(ctx, opts, tasks, episodes[EnvReal], st)
	if err != nil {
		return st, err
	}
	st.Kept = len(keep)
	for _, a := range opts.Agents {
		for _, m := range opts.Models {
			key := a.Name() + "/" + m.Name
			row := CompareRow{Agent: a.Name(), Model: m.Name, Pass: map[string]float64{}, Episodes: map[string]int{}}
			if opts.Judge != nil {
				row.FAC = map[string]float64{}
			}
			for _, env := range envs {
				n, pass, fac := 0, 0, 0
				for _, ep := range episodes[env.name][key] {
					if !keep[ep.TaskID] {
						continue
					}
					n++
					if passed(ep, opts.Judge != nil) {
						pass++
					}
					if len(ep.FAC) > 0 && ep.FAC[0].Label == metrics.Solved {
						fac++
					}
				}
				row.Episodes[env.name] = n
				if n > 0 {
					row.Pass[env.name] = 100 * float64(pass) / float64(n)
					if row.FAC != nil {
						row.FAC[env.name] = 100 * float64(fac) / float64(n)
					}
				}
			}
			st.Rows = append(st.Rows, row)
		}
	}
	if err := writeCompare(opts.Out, st); err != nil {
		return st, err
	}
	return st, nil
}

// passed is the episode's pass: the first SoPR label when judged (Solved
// passes, Unsure half as StableToolBench counts it is left to the judge
// report: here it does not pass), else a final answer.
func passed(ep *eval.Episode, judged bool) bool {
	if judged {
		return len(ep.SoPR) > 0 && ep.SoPR[0].Label == metrics.Solved
	}
	tr := ep.Outcome.Trajectory
	return tr != nil && tr.Finished && tr.Error == "" && strings.TrimSpace(tr.Answer+ep.Outcome.FinalAnswerRaw) != ""
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// compareExample is toolenv's {Example} for Table 14's prompt: the paper
// shows its examples' shape only.
const compareExample = `{"query": "I'm planning a weekend in Lisbon with my sister. Find the weather forecast for Lisbon for the next 3 days, and list the museums open on Sunday near the Alfama district.", "related_apis": [["weather_service", "Forecast"], ["city_guide", "Museums Open"]]}`

// fileRejected keeps the counts of model answers that gave no query, so
// that a resumed comparison reports them as the first run did.
const fileRejected = "queries.rejected.json"

// compareQueries asks for the queries, or reads them back (with the
// counts of rejected answers) from an earlier run.
func (e *Engine) compareQueries(ctx context.Context, opts CompareOptions, st *CompareStats) ([]*toolenv.Task, error) {
	path := filepath.Join(opts.Out, toolenv.TasksFile)
	if tasks, _, err := toolenv.ReadTasks(path); err == nil && len(tasks) > 0 {
		if raw, err := os.ReadFile(filepath.Join(opts.Out, fileRejected)); err == nil {
			if err := json.Unmarshal(raw, &st.Rejected); err != nil {
				return nil, fmt.Errorf("compare: %s: %w (delete it and %s to ask for the queries again)", fileRejected, err, toolenv.TasksFile)
			}
		}
		return tasks, nil
	}
	defer func() {
		// Written before tasks.jsonl, which marks the queries done.
		_ = toolenv.WriteJSONFile(filepath.Join(opts.Out, fileRejected), st.Rejected)
	}()
	byColl := map[string][]*toolenv.Tool{}
	var names []string
	for _, t := range e.sortedTools() {
		if byColl[t.Collection] == nil {
			names = append(names, t.Collection)
		}
		byColl[t.Collection] = append(byColl[t.Collection], t)
	}
	rng := rand.New(rand.NewPCG(uint64(opts.Seed), 14))
	var tasks []*toolenv.Task
	bar := e.bar(opts.Queries, "compare: queries (Table 14)")
	defer bar.Finish()
	for i := range opts.Queries {
		bar.Add(1)
		coll := names[rng.IntN(len(names))]
		pool := byColl[coll]
		k := opts.MinAPIs + rng.IntN(opts.MaxAPIs-opts.MinAPIs+1)
		k = min(k, len(pool))
		perm := rng.Perm(len(pool))[:k]
		sort.Ints(perm)
		var picked []*toolenv.Tool
		for _, j := range perm {
			picked = append(picked, pool[j])
		}
		user := promptfile.Fill(promptQueryGeneration.Text, map[string]string{"Example": opts.Example, "tools_json": toolsJSON(picked)})
		text, err := e.chat(ctx, e.ModelName, nil, user, 0.7, opts.Seed+int64(i), 2048)
		if err != nil {
			var bad *badAnswer
			if errors.As(err, &bad) {
				st.Rejected[bad.reason]++
				continue
			}
			return nil, err
		}
		q, related, reason := parseQuery(text, picked)
		if reason != "" {
			st.Rejected[reason]++
			continue
		}
		task := &toolenv.Task{ID: "mirror-q" + strconv.Itoa(i+1), Collection: coll, Query: q, Source: "mirror-compare"}
		for _, t := range related {
			task.Tools = append(task.Tools, t.Name)
		}
		tasks = append(tasks, task)
	}
	return tasks, nil
}

// toolsJSON is the INPUT of Table 14's prompt: the sampled APIs grouped
// by tool, as ToolBench's query generation lists them.
func toolsJSON(tools []*toolenv.Tool) string {
	type api struct {
		Name               string               `json:"name"`
		Description        string               `json:"description"`
		RequiredParameters []toolbench.ParamDoc `json:"required_parameters"`
		OptionalParameters []toolbench.ParamDoc `json:"optional_parameters"`
	}
	type tool struct {
		ToolName        string `json:"tool_name"`
		ToolDescription string `json:"tool_description"`
		APIList         []api  `json:"api_list"`
	}
	var out []*tool
	idx := map[string]*tool{}
	for _, t := range tools {
		d := toolbench.DocOf(t)
		g := t.GroupOrCollection()
		tl := idx[g]
		if tl == nil {
			tl = &tool{ToolName: g, ToolDescription: d.ToolDescription}
			idx[g] = tl
			out = append(out, tl)
		}
		tl.APIList = append(tl.APIList, api{Name: t.TitleOrName(), Description: d.APIDescription, RequiredParameters: d.RequiredParameters, OptionalParameters: d.OptionalParameters})
	}
	b, _ := toolenv.MarshalJSONNoHTML(out)
	return string(b)
}

// parseQuery reads {"query", "related_apis"} from a reply; the related
// APIs must be among the offered ones, two at least.
func parseQuery(text string, offered []*toolenv.Tool) (string, []*toolenv.Tool, string) {
	v, ok := firstJSON(text, '{')
	if !ok {
		return "", nil, RejectUnparseable
	}
	obj := dictOf(v)
	q, _ := obj["query"].(string)
	if strings.TrimSpace(q) == "" {
		return "", nil, RejectUnparseable
	}
	rel, _ := obj["related_apis"].([]any)
	seen := map[string]bool{}
	var related []*toolenv.Tool
	for _, r := range rel {
		pair, _ := r.([]any)
		if len(pair) == 0 {
			continue
		}
		name, _ := pair[len(pair)-1].(string)
		for _, t := range offered {
			if !seen[t.ID] && sameAPI(t, name) {
				seen[t.ID] = true
				related = append(related, t)
			}
		}
	}
	if len(related) < 2 {
		return "", nil, "fewer_than_two_apis"
	}
	return strings.TrimSpace(q), related, ""
}

// functioningVerdict is a line of functioning.jsonl.
type functioningVerdict struct {
	TaskID string   `json:"task_id"`
	Agent  string   `json:"agent"`
	Model  string   `json:"model"`
	OK     bool     `json:"all_functioning"`
	Broken []string `json:"broken_apis,omitempty"`
	Reason string   `json:"reason,omitempty"`
	By     string   `json:"by"` // "model" or "rule"
	Raw    string   `json:"raw,omitempty"`
}

// functioning checks every real episode: with the model, the tool-
// functioning prompt (toolenv's: the paper's is not printed); a reply
// with no verdict falls back on the rule — a call whose status says the
// API, not the caller, failed. A query is kept when every real episode
// of it found every API working.
func (e *Engine) functioning(ctx context.Context, opts CompareOptions, tasks []*toolenv.Task, real map[string][]*eval.Episode, st *CompareStats) (map[string]bool, error) {
	keep := map[string]bool{}
	for _, t := range tasks {
		keep[t.ID] = true
	}
	f, err := newAtomicFile(filepath.Join(opts.Out, "functioning.jsonl"))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, eps := range real {
		n += len(eps)
	}
	bar := e.bar(n, "compare: tool-functioning check of the real runs")
	defer bar.Finish()
	for _, key := range sortedKeys(real) {
		for _, ep := range real[key] {
			bar.Add(1)
			v := functioningVerdict{TaskID: ep.TaskID, Agent: ep.Agent, Model: ep.Model, OK: true, By: "rule"}
			var lines []string
			for _, s := range ep.Outcome.Trajectory.Steps {
				if s.Call == nil {
					continue
				}
				args, _ := json.Marshal(s.Call.Args)
				lines = append(lines, fmt.Sprintf("- %s %s → %s", s.Call.Name, args, clip(s.Observation, 600)))
				if apiFailed(s.Status) {
					v.OK = false
					v.Broken = append(v.Broken, s.Call.Name)
				}
			}
			if len(lines) > 0 {
				user := promptfile.Fill(promptToolFunctioning.Text, map[string]string{"query": ep.Query, "trajectory": strings.Join(lines, "\n")})
				text, err := e.chat(ctx, e.judgeModel(), nil, user, 0, opts.Seed, 512)
				var bad *badAnswer
				if err != nil && !errors.As(err, &bad) {
					f.abort()
					return nil, err
				}
				if obj := dictOf(firstValue(text)); obj != nil {
					if ok, parsed := truthOf(obj["all_functioning"]); parsed {
						v.OK, v.By, v.Raw = ok, "model", clip(text, 2000)
						v.Reason, _ = obj["reason"].(string)
						v.Broken = nil
						if list, isList := obj["broken_apis"].([]any); isList {
							for _, b := range list {
								if s, isStr := b.(string); isStr {
									v.Broken = append(v.Broken, s)
								}
							}
						}
					}
				}
			}
			if !v.OK {
				keep[ep.TaskID] = false
				st.Dropped[ep.TaskID] = "a real API failed (" + strings.Join(v.Broken, ", ") + ") in the " + ep.Agent + "/" + ep.Model + " run, by " + v.By
			}
			if err := f.writeJSON(v); err != nil {
				f.abort()
				return nil, err
			}
		}
	}
	for id, k := range keep {
		if !k {
			delete(keep, id)
		}
	}
	return keep, f.close()
}

// apiFailed reports whether a call's status says the API failed rather
// than the caller.
func apiFailed(s toolenv.Status) bool {
	switch s {
	case toolenv.StatusNotFound, toolenv.StatusUnauthorized, toolenv.StatusRateLimited, toolenv.StatusTimeout, toolenv.StatusUpstreamError,
		toolenv.StatusUnavailable, toolenv.StatusGone, toolenv.StatusTooLarge, toolenv.StatusInternal:
		return true
	}
	return false
}

func truthOf(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case json.Number:
		return x == "1", x == "1" || x == "0"
	case float64:
		return x == 1, x == 1 || x == 0
	case string:
		return x == "1", x == "1" || x == "0"
	}
	return false, false
}

// writeCompare writes compare.json, compare.md and compare.html.
func writeCompare(dir string, st *CompareStats) error {
	if err := toolenv.WriteJSONFile(filepath.Join(dir, "compare.json"), st); err != nil {
		return err
	}
	envs := []string{EnvReal, EnvCached, EnvSimulated}
	var b strings.Builder
	fmt.Fprintf(&b, "# Real and simulated environments (MirrorAPI §4.3)\n\n%d queries written (Table 14), %d kept after the tool-functioning check of the real runs. Pass rates (%%, %s):\n\n",
		st.Queries, st.Kept, map[string]string{"sopr": "SoPR, the judge's first round", "answered": "episodes ending with a final answer; no judge"}[st.Scoring])
	b.WriteString("| Agent | Model | " + strings.Join(envs, " | ") + " |\n|---|---|---|---|---|\n")
	for _, r := range st.Rows {
		fmt.Fprintf(&b, "| %s | %s |", r.Agent, r.Model)
		for _, env := range envs {
			fmt.Fprintf(&b, " %.1f (%d) |", r.Pass[env], r.Episodes[env])
		}
		b.WriteString("\n")
	}
	if len(st.Dropped) > 0 {
		b.WriteString("\n## Dropped queries\n\n")
		for _, id := range sortedKeys(st.Dropped) {
			fmt.Fprintf(&b, "- %s: %s\n", id, st.Dropped[id])
		}
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "compare.md"), []byte(b.String())); err != nil {
		return err
	}
	var h strings.Builder
	h.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>toolenv mirror compare</title><style>body{font:14px system-ui,sans-serif;margin:2em auto;max-width:900px}</style></head><body><h1>Real and simulated environments</h1>`)
	const rowH, barH, labelW, plotW = 54, 14, 220, 480
	fmt.Fprintf(&h, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">`, labelW+plotW+60, len(st.Rows)*rowH+30)
	colors := map[string]string{EnvReal: "#4e79a7", EnvCached: "#59a14f", EnvSimulated: "#f28e2b"}
	for i, env := range envs {
		fmt.Fprintf(&h, `<rect x="%d" y="4" width="10" height="10" fill="%s"/><text x="%d" y="13" font-size="12">%s</text>`, labelW+i*110, colors[env], labelW+i*110+14, env)
	}
	for i, r := range st.Rows {
		y := 24 + i*rowH
		fmt.Fprintf(&h, `<text x="%d" y="%d" font-size="12" text-anchor="end">%s</text>`, labelW-6, y+24, html.EscapeString(r.Agent+" / "+r.Model))
		for j, env := range envs {
			w := plotW * r.Pass[env] / 100
			fmt.Fprintf(&h, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/><text x="%.1f" y="%d" font-size="11">%.1f</text>`, labelW, y+j*barH, w, barH-2, colors[env], float64(labelW)+w+4, y+j*barH+11, r.Pass[env])
		}
	}
	h.WriteString(`</svg><pre>` + html.EscapeString(b.String()) + `</pre></body></html>`)
	return toolenv.WriteFileAtomic(filepath.Join(dir, "compare.html"), []byte(h.String()))
}
