package episode

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/statecheck"
	"github.com/toolenv/toolenv/perturb"
	"github.com/toolenv/toolenv/store/epstore"
)

// Errors of episodes, wrapped in a *toolenv.Error whose status the
// front-ends map to their protocol; test them with errors.Is.
var (
	// ErrFull: the server holds Options.Max open episodes.
	ErrFull = errors.New("no room for another episode")
	// ErrUnknown: no episode of that id was issued to this client.
	ErrUnknown = errors.New("unknown episode")
	// ErrExpired: the episode was unused for Options.Idle and expired.
	ErrExpired = errors.New("episode expired")
	// ErrClosed: the episode was closed by its client.
	ErrClosed = errors.New("episode closed")
	// ErrDone: the episode has ended (final answer or step limit); only
	// its state and trajectory can still be read.
	ErrDone = errors.New("episode is done")
	// ErrConflict: another step of the episode was recorded at the same
	// time (by another replica or connection).
	ErrConflict = errors.New("concurrent step")
)

// Options configure an Env. The zero value means the defaults.
type Options struct {
	// Max caps the open episodes of this process (default 10,000;
	// negative: no cap). A reset over the cap is refused with ErrFull:
	// an open episode is never evicted to make room.
	Max int
	// Idle expires episodes unused this long (default 30 min; negative:
	// never); a later step is told ErrExpired.
	Idle time.Duration
	// MaxPerClient caps the open episodes of one client (its token, or
	// its address without tokens), so that one client cannot hold every
	// slot of Max (default half of Max; negative: no cap of its own).
	MaxPerClient int
	// MaxSteps is the step limit of episodes that set none (default 50).
	MaxSteps int
	// MaxStepsCeiling is the largest step limit a reset may ask for
	// (default 1000): an episode holds every step's answers.
	MaxStepsCeiling int
	// MaxCalls caps the tool calls of one step (default 32).
	MaxCalls int
	// MaxStepBytes caps the bytes of a step's answers (default 1 MiB): a
	// step whose calls answer more is cut — it does not happen — and
	// refused with a too_large error.
	MaxStepBytes int
	// RecordBytes bounds the memory the records of ended episodes hold
	// in this process (default 64 MiB; negative: none kept). Without
	// episodes in the store, every ended episode is also written to the
	// store (toolenv episodes export reads it there); with them, records
	// are read from the store.
	RecordBytes int64
	// StepTime is how far an episode's fault clock advances per step
	// (default 1 s): rate limits and flaky windows of per-episode faults
	// are on this clock, so they depend on the steps taken, never on
	// wall time.
	StepTime time.Duration
	// Persist is where episodes live: "memory" (this process) or
	// "store" (the environment's store, so that every replica sharing it
	// serves every episode and episodes survive restarts; it needs the
	// environment's task sessions in the store too). "" means store when
	// the environment keeps its task sessions in the store.
	Persist string
	// Judge, when set, offers the pass_rate reward: StableToolBench's
	// judge reads the episode's calls and final answer (nil: pass_rate
	// is refused at reset).
	Judge *judge.Judge
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger logs expiries; nil discards.
	Logger *slog.Logger
}

// The settings named in messages.
const (
	// MaxFlag raises Options.Max.
	MaxFlag = "--max-episodes"
	// MaxPerClientFlag raises Options.MaxPerClient.
	MaxPerClientFlag = "--max-episodes-per-client"
	// MaxStepsCeilingFlag raises Options.MaxStepsCeiling.
	MaxStepsCeilingFlag = "--episode-max-steps-ceiling"
	// MaxCallsFlag raises Options.MaxCalls.
	MaxCallsFlag = "--episode-max-calls"
	// MaxStepBytesFlag raises Options.MaxStepBytes.
	MaxStepBytesFlag = "--episode-max-step-bytes"
)

func (o *Options) defaults() {
	switch {
	case o.Max == 0:
		o.Max = 10000
	case o.Max < 0:
		o.Max = 0
	}
	switch {
	case o.MaxPerClient == 0:
		o.MaxPerClient = o.Max / 2
	case o.MaxPerClient < 0:
		o.MaxPerClient = 0
	}
	if o.MaxStepsCeiling <= 0 {
		o.MaxStepsCeiling = 1000
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = 32
	}
	if o.MaxStepBytes <= 0 {
		o.MaxStepBytes = 1 << 20
	}
	switch {
	case o.RecordBytes == 0:
		o.RecordBytes = 64 << 20
	case o.RecordBytes < 0:
		o.RecordBytes = 0
	}
	switch {
	case o.Idle == 0:
		o.Idle = 30 * time.Minute
	case o.Idle < 0:
		o.Idle = 0
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 50
	}
	o.MaxSteps = min(o.MaxSteps, o.MaxStepsCeiling)
	if o.StepTime <= 0 {
		o.StepTime = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Tasks returns the tasks episodes can be reset to, by collection, in
// the order a split's seed draws from.
func (e *Env) Tasks() map[string][]*toolenv.Task { return e.tasks }

// pick resolves the task of o.
func (e *Env) pick(o *ResetOptions, seed int64) (*toolenv.Collection, *toolenv.Task, error) {
	names := make([]string, 0, len(e.tasks))
	for n := range e.tasks {
		if e.env.Registry.Collection(n) != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	coll := o.Collection
	if coll == "" && o.TaskID != "" {
		var found []string
		for _, n := range names {
			if e.byID[n][o.TaskID] != nil {
				found = append(found, n)
			}
		}
		switch len(found) {
		case 0:
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("no task %q in any collection served (%s)", o.TaskID, strings.Join(names, ", ")), Hint: "list the tasks with GET /openenv/tasks"}
		case 1:
			coll = found[0]
		default:
			return nil, nil, invalid(fmt.Sprintf("task %q is in several collections (%s)", o.TaskID, strings.Join(found, ", ")), "name the collection too")
		}
	}
	if coll == "" {
		switch len(names) {
		case 0:
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: "no collection served has tasks", Hint: "serve a collection folder with a tasks.jsonl (toolenv build bird writes them) or StableToolBench queries"}
		case 1:
			coll = names[0]
		default:
			return nil, nil, invalid("several collections have tasks: "+strings.Join(names, ", "), "name the collection in the reset options")
		}
	}
	c := e.env.Registry.Collection(coll)
	if c == nil {
		hint := "the collections with tasks are " + strings.Join(names, ", ")
		return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("no collection %q is served", coll), Hint: hint}
	}
	if o.TaskID != "" {
		t := e.byID[coll][o.TaskID]
		if t == nil {
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no task %q", coll, o.TaskID), Hint: "list its tasks with GET /openenv/tasks?collection=" + coll}
		}
		return c, t, nil
	}
	pool := e.tasks[coll]
	if o.Split != "" {
		var in []*toolenv.Task
		for _, t := range pool {
			if t.Group == o.Split {
				in = append(in, t)
			}
		}
		if len(in) == 0 {
			return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no split %q", coll, o.Split), Hint: "its splits are " + strings.Join(e.Splits(coll), ", ")}
		}
		pool = in
	}
	if len(pool) == 0 {
		return nil, nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("collection %s has no tasks", coll), Hint: "serve its folder with its tasks.jsonl"}
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x746f6f6c656e76)) // "toolenv"
	return c, pool[r.IntN(len(pool))], nil
}

// Splits returns the task groups of a collection, sorted.
func (e *Env) Splits(coll string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range e.tasks[coll] {
		if t.Group != "" && !seen[t.Group] {
			seen[t.Group] = true
			out = append(out, t.Group)
		}
	}
	sort.Strings(out)
	return out
}

// newID returns a fresh unguessable episode id.
func newID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "ep_" + hex.EncodeToString(b[:])
}

// build makes an episode of o (not yet initialised, not yet live).
func (e *Env) build(ctx context.Context, principal, id string, o *ResetOptions) (*Episode, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	var seed int64
	if o.Seed != nil {
		seed = *o.Seed
	}
	c, task, err := e.pick(o, seed)
	if err != nil {
		return nil, err
	}
	if o.Version != "" && o.Version != c.Version {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound,
			Message: fmt.Sprintf("collection %s is served at version %q, not %q", c.Name, c.Version, o.Version),
			Hint:    "serve the folder of that version (toolenv drift writes each version's folder), or leave version out"}
	}
	info, err := e.taskInfo(c, task)
	if err != nil {
		return nil, err
	}
	// The reset's rendering of the tools, made (or its failure told)
	// before anything is written.
	if _, err := info.resetTools(o.ToolFormat); err != nil {
		return nil, err
	}
	ep := &Episode{env: e, id: id, principal: epstore.Principal(principal), coll: c, task: task, info: info,
		spec: spec{Options: *o, Collection: c.Name, TaskID: task.ID, Seed: seed, Version: c.Version}}
	ep.maxSteps = e.opts.MaxSteps
	if o.MaxSteps != nil {
		if *o.MaxSteps > e.opts.MaxStepsCeiling {
			return nil, invalid(fmt.Sprintf("max_steps %d is over this server's ceiling of %d steps (%s)", *o.MaxSteps, e.opts.MaxStepsCeiling, MaxStepsCeilingFlag),
				"ask for fewer steps: an episode keeps every step's answers")
		}
		ep.maxSteps = *o.MaxSteps
	}
	if o.Perturbation != "" {
		if o.Perturbation == perturb.Paraphrase || !containsStr(perturb.Modes, o.Perturbation) {
			return nil, invalid(fmt.Sprintf("perturbation %q", o.Perturbation), "want distractor, case_mix or punctuation (paraphrases need a model: make them with toolenv perturb and serve the tasks it writes)")
		}
		ts, _, err := perturb.Perturb(ctx, []*toolenv.Task{task}, perturb.Options{Mode: o.Perturbation, Seed: uint64(seed)})
		if err != nil {
			return nil, err
		}
		ep.query = ts[0].Query
	}
	if ep.success, ep.successWhy, err = successFor(&o.Reward, task, info.hasAnswer, e.opts.Judge != nil); err != nil {
		return nil, err
	}
	if len(o.Faults) > 0 {
		if ep.faults, err = newEpisodeFaults(o.Faults, seed, e.opts.StepTime); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// initialize runs the task's hidden initialisation calls (the NL2SQL
// starting table) in the episode's session.
func (e *Env) initialize(ctx context.Context, ep *Episode) error {
	for i, g := range agent.InitCalls(ep.task) {
		t := ep.coll.Tool(g.Name)
		if t == nil {
			return &toolenv.Error{Status: toolenv.StatusInternal, Message: fmt.Sprintf("task %s: initialisation call %d names tool %s, which collection %s lacks", ep.task.ID, i+1, g.Name, ep.coll.Name)}
		}
		res := e.invoke(ctx, ep, t, agent.WithLabel(t, g.Args, g.Label))
		if !res.OK() {
			return &toolenv.Error{Status: res.Status, Message: fmt.Sprintf("task %s: initialisation call %d (%s) failed: %s", ep.task.ID, i+1, g.Name, res.Error), Hint: res.Hint}
		}
	}
	return nil
}

// invoke runs one call of ep through the pipeline.
func (e *Env) invoke(ctx context.Context, ep *Episode, t *toolenv.Tool, args map[string]any) *toolenv.Result {
	if args == nil {
		args = map[string]any{}
	}
	call := &toolenv.Call{Tool: t, Collection: ep.coll, Args: args, Session: ep.id, Frontend: "episode", RequestID: ep.id,
		Options: toolenv.CallOptions{Feedback: ep.spec.Options.Feedback}}
	res := e.env.Pipeline.Invoke(ctx, call)
	if res == nil {
		return toolenv.Errorf(toolenv.StatusInternal, "", "the pipeline returned no result")
	}
	return res
}

// taskInfo is what every episode of one task shares: the tools offered
// and their renderings (shared by every task offering the same tools),
// the instructions.
type taskInfo struct {
	*toolset
	instructions string
	hasAnswer    bool
}

// toolset is a set of offered tools and its renderings, each made when
// first asked for (an episode needs one of the reset forms, and the
// list_tools form only if it lists them; a task's schemas run to
// hundreds of KB).
type toolset struct {
	offered []*toolenv.Tool // the task's tools, then SubmitTool
	byName  map[string]*toolenv.Tool
	openai  rendering
	mcp     rendering
	listed  rendering // OpenEnv's list_tools form
}

// rendering is one form of a toolset, made once.
type rendering struct {
	once sync.Once
	b    json.RawMessage
	err  error
}

func (r *rendering) get(make func() (json.RawMessage, error)) (json.RawMessage, error) {
	r.once.Do(func() { r.b, r.err = make() })
	return r.b, r.err
}

// openAITools is the toolset in OpenAI's function-calling form.
func (ts *toolset) openAITools() (json.RawMessage, error) {
	return ts.openai.get(func() (json.RawMessage, error) { return renderOpenAI(ts.offered) })
}

// mcpTools is the toolset as MCP tool definitions.
func (ts *toolset) mcpTools() (json.RawMessage, error) {
	return ts.mcp.get(func() (json.RawMessage, error) { return renderMCP(ts.offered, "inputSchema") })
}

// listedTools is the toolset in OpenEnv's list_tools form.
func (ts *toolset) listedTools() (json.RawMessage, error) {
	return ts.listed.get(func() (json.RawMessage, error) { return renderMCP(ts.offered, "input_schema") })
}

// resetTools is the toolset in the form a reset in format shows.
func (ts *toolset) resetTools(format string) (json.RawMessage, error) {
	if format == FormatMCP {
		return ts.mcpTools()
	}
	return ts.openAITools()
}

func (e *Env) taskInfo(c *toolenv.Collection, t *toolenv.Task) (*taskInfo, error) {
	key := c.Name + "\x00" + t.ID
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if in := e.infos[key]; in != nil {
		return in, nil
	}
	if err := statecheck.Validate(t.Checks, c); err != nil {
		return nil, invalid(fmt.Sprintf("task %s: %v", t.ID, err), "fix the task's checks")
	}
	_, hasAnswer, _ := answer.Gold(t)
	// Tasks offering the same tools (the same names, and for NL2SQL
	// tasks the same columns) share one rendering.
	cols, _ := json.Marshal(t.Meta["columns"])
	setKey := fmt.Sprintf("%s\x00%v\x00%s\x00%s\x00%t", c.Name, t.Tools, cols, c.Version, hasAnswer)
	ts := e.sets[setKey]
	if ts == nil {
		var err error
		if ts, err = newToolset(c, t, hasAnswer); err != nil {
			return nil, err
		}
		e.sets[setKey] = ts
	}
	in := &taskInfo{toolset: ts, hasAnswer: hasAnswer, instructions: instructions(c, t, hasAnswer)}
	e.infos[key] = in
	return in, nil
}

func newToolset(c *toolenv.Collection, t *toolenv.Task, hasAnswer bool) (*toolset, error) {
	tools, err := harness.TaskTools(c, t)
	if err != nil {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: err.Error(), Hint: "check the task's tools against the collection"}
	}
	if len(tools) == 0 {
		return nil, &toolenv.Error{Status: toolenv.StatusNotFound, Message: fmt.Sprintf("task %s offers no tool of collection %s", t.ID, c.Name), Hint: "check the task's tools against the collection"}
	}
	ts := &toolset{byName: map[string]*toolenv.Tool{}}
	for _, tl := range tools {
		if tl.Name == SubmitTool {
			return nil, &toolenv.Error{Status: toolenv.StatusInternal, Message: fmt.Sprintf("collection %s has a tool named %s, which episodes reserve", c.Name, SubmitTool)}
		}
		ts.byName[tl.Name] = tl
	}
	ts.offered = append(append([]*toolenv.Tool(nil), tools...), submitTool(hasAnswer))
	return ts, nil
}
