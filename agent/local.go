package agent

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
)

// InitTool is the hidden tool that starts an NL2SQL task session
// (docs/nl2sql.md, session protocol): it is called once per entry of the
// task's meta.init before the agent's first call.
const InitTool = "initialize_active_data"

// Local is an Env over a toolenv.Handler in the same process — the call
// pipeline (invoke.New) with its backends — and the collections it
// serves.
type Local struct {
	h     toolenv.Handler
	opts  LocalOptions
	colls map[string]*toolenv.Collection
	only  *toolenv.Collection
	seq   atomic.Int64
	funcs sync.Map // *toolenv.Tool → its function definition (functionJSON)
}

var _ Env = (*Local)(nil)

// LocalOptions configure a Local environment.
type LocalOptions struct {
	// TaskTools returns the tools a task offers, as the task shows them
	// (NL2SQL collections narrow column enums to the task's starting
	// table: sqltools.TaskTools). Nil means TaskTools.
	TaskTools func(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error)
	// StartSession, when set, starts each session from its task's
	// initial state before its first call (environment.StartSession: an
	// MCP server's own instance for the episode); an error fails Start.
	StartSession func(ctx context.Context, coll, id string, init *toolenv.InitialState) error
	// EndSession, when set, is called when a session closes, to release
	// what the backends hold of it (environment.EndSession).
	EndSession func(id string)
}

// NewLocal returns an environment that invokes h for the tools of colls.
// A task names its collection (Task.Collection); with a single collection
// it may leave it empty.
func NewLocal(h toolenv.Handler, colls []*toolenv.Collection, opts LocalOptions) *Local {
	l := &Local{h: h, opts: opts, colls: map[string]*toolenv.Collection{}}
	for _, c := range colls {
		l.colls[c.Name] = c
	}
	if len(colls) == 1 {
		l.only = colls[0]
	}
	return l
}

// Start opens a session for task, offers its tools (Task.Tools, or every
// tool of its collection not marked hidden) and runs its hidden
// initialisation calls (meta.init) through h.
func (l *Local) Start(ctx context.Context, task *toolenv.Task) (Session, error) {
	c := l.colls[task.Collection]
	if c == nil {
		c = l.only
	}
	if c == nil {
		return nil, toolenv.Errorw(toolenv.StatusNotFound, "load the collection the task names, or pass its folder with --tasks", "task %s: collection %q is not loaded", task.ID, task.Collection)
	}
	s := &localSession{env: l, coll: c, id: "eval-" + strconv.FormatInt(l.seq.Add(1), 10) + "-" + task.ID}
	if l.opts.TaskTools != nil {
		tools, err := l.opts.TaskTools(c, task)
		if err != nil {
			return nil, toolenv.Errorw(toolenv.StatusNotFound, "check the task's tools against the collection", "%v", err)
		}
		s.tools = tools
	} else {
		s.tools = TaskTools(c, task)
	}
	if len(s.tools) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusNotFound, "check the task's tools against the collection", "task %s: none of its tools is in collection %s", task.ID, c.Name)
	}
	if l.opts.StartSession != nil {
		if err := l.opts.StartSession(ctx, c.Name, s.id, task.Initial); err != nil {
			s.Close(ctx)
			return nil, fmt.Errorf("task %s: %w", task.ID, err)
		}
	}
	for i, g := range InitCalls(task) {
		res := s.invoke(ctx, g.Name, WithLabel(c.Tool(g.Name), g.Args, g.Label))
		if !res.OK() {
			s.Close(ctx)
			return nil, toolenv.Errorw(res.Status, res.Hint, "task %s: initialisation call %d (%s) failed: %s", task.ID, i+1, g.Name, res.Error)
		}
	}
	return s, nil
}

// TaskTools returns the tools offered for task: the tools it names, in
// its order, else every listed tool of c (not hidden), sorted by name.
func TaskTools(c *toolenv.Collection, task *toolenv.Task) []*toolenv.Tool {
	if len(task.Tools) > 0 {
		var out []*toolenv.Tool
		for _, n := range task.Tools {
			if t := c.Tool(n); t != nil {
				out = append(out, t)
			}
		}
		return out
	}
	out := c.Listed()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InitCalls returns a task's hidden initialisation calls (meta.init: a
// list of NESTful calls; an entry with no "name" is the arguments of a
// call to InitTool).
//
// A task naming an initial state for an SQL collection (Task.Initial's
// SQL, Database or Name, and no Files) starts with a call to the hidden
// WorldInitTool that makes the session's world from it, unless meta.init
// makes that call itself.
func InitCalls(task *toolenv.Task) []toolenv.GoldCall {
	list, _ := task.Meta["init"].([]any)
	var out []toolenv.GoldCall
	if in := task.Initial; in != nil && in.Files == "" && (in.SQL != "" || in.Database != "" || in.Name != "") && !initsWorld(list) {
		args := map[string]any{}
		for k, v := range map[string]string{"sql": in.SQL, "from_file": in.Database, "initial_state": in.Name} {
			if v != "" {
				args[k] = v
			}
		}
		out = append(out, toolenv.GoldCall{Name: WorldInitTool, Args: args})
	}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if name == "" {
			out = append(out, toolenv.GoldCall{Name: InitTool, Args: m})
			continue
		}
		g := toolenv.GoldCall{Name: name}
		g.Args, _ = m["arguments"].(map[string]any)
		g.Label, _ = m["label"].(string)
		out = append(out, g)
	}
	return out
}

// WorldInitTool is the hidden tool that starts a session's world from a
// task's initial state (SQL collections: backend/sqltools, sqlrest).
const WorldInitTool = "initialize_world"

// initsWorld reports whether meta.init calls WorldInitTool itself.
func initsWorld(list []any) bool {
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && m["name"] == WorldInitTool {
			return true
		}
	}
	return false
}

type localSession struct {
	env   *Local
	coll  *toolenv.Collection
	id    string
	tools []*toolenv.Tool
}

// FunctionsJSON is FunctionsJSON(tools), each tool's definition encoded
// once for all the environment's sessions.
func (s *localSession) FunctionsJSON(tools []*toolenv.Tool) string {
	return functionsJSON(tools, func(t *toolenv.Tool) string {
		if v, ok := s.env.funcs.Load(t); ok {
			return v.(string)
		}
		f := functionJSON(t)
		s.env.funcs.Store(t, f)
		return f
	})
}

func (s *localSession) ID() string             { return s.id }
func (s *localSession) Tools() []*toolenv.Tool { return s.tools }

func (s *localSession) Close(ctx context.Context) error {
	if s.env.opts.EndSession != nil {
		s.env.opts.EndSession(s.id)
	}
	return nil
}

func (s *localSession) Call(ctx context.Context, c Call) *toolenv.Result {
	return s.invoke(ctx, c.Name, WithLabel(s.coll.Tool(c.Name), c.Args, c.Label))
}

func (s *localSession) invoke(ctx context.Context, name string, args map[string]any) *toolenv.Result {
	t := s.coll.Tool(name)
	if t == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, fmt.Sprintf("the tools offered are listed in the prompt; %s has %d", s.coll.Name, len(s.tools)), "no tool %q in collection %s", name, s.coll.Name)
	}
	if args == nil {
		args = map[string]any{}
	}
	call := &toolenv.Call{Tool: t, Collection: s.coll, Args: args, Session: s.id, Frontend: "go", RequestID: s.id}
	res := s.env.h.Invoke(ctx, call)
	if res == nil {
		return toolenv.Errorf(toolenv.StatusInternal, "", "the handler returned no result")
	}
	return res
}

// WithLabel returns args with the NESTful label added as the argument
// the tool takes labels through (t.LabelArg(): the NL2SQL SLOT/SEL tools
// store their result under it), unless the arguments already hold it. A
// tool that takes no label gets args unchanged, even when one of its own
// parameters is called "label".
func WithLabel(t *toolenv.Tool, args map[string]any, label string) map[string]any {
	name := t.LabelArg()
	if label == "" || name == "" {
		return args
	}
	if _, ok := args[name]; ok {
		return args
	}
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	out[name] = label
	return out
}

// SplitLabel moves the label argument (t.LabelArg()) into the call's
// NESTful label when the tool takes labels (the NL2SQL SLOT/SEL tools),
// so that a model that writes the label among the arguments is scored
// like one that writes it beside them. An argument of a tool that takes
// no label is the API's own and stays where it is, whatever its name.
func SplitLabel(t *toolenv.Tool, c toolenv.GoldCall) toolenv.GoldCall {
	name := t.LabelArg()
	if name == "" {
		return c
	}
	l, ok := c.Args[name].(string)
	if !ok {
		return c
	}
	args := make(map[string]any, len(c.Args))
	for k, v := range c.Args {
		if k != name {
			args[k] = v
		}
	}
	c.Args = args
	if c.Label == "" {
		c.Label = strings.Trim(l, "$")
	}
	return c
}

// toolNamed returns the offered tool called name, or nil.
func toolNamed(s Session, name string) *toolenv.Tool {
	for _, t := range s.Tools() {
		if t.Name == name {
			return t
		}
	}
	return nil
}
