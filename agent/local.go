package agent

import (
	"context"
	"fmt"
	"sort"
	"strconv"
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
	colls map[string]*toolenv.Collection
	only  *toolenv.Collection
	seq   atomic.Int64
}

var _ Env = (*Local)(nil)

// NewLocal returns an environment that invokes h for the tools of colls.
// A task names its collection (Task.Collection); with a single collection
// it may leave it empty.
func NewLocal(h toolenv.Handler, colls ...*toolenv.Collection) *Local {
	l := &Local{h: h, colls: map[string]*toolenv.Collection{}}
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
	s.tools = TaskTools(c, task)
	if len(s.tools) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusNotFound, "check the task's tools against the collection", "task %s: none of its tools is in collection %s", task.ID, c.Name)
	}
	for i, args := range InitCalls(task) {
		res := s.invoke(ctx, InitTool, args)
		if !res.OK() {
			return nil, toolenv.Errorw(res.Status, res.Hint, "task %s: initialisation call %d failed: %s", task.ID, i+1, res.Error)
		}
	}
	return s, nil
}

// TaskTools returns the tools offered for task: the tools it names, in
// its order, else every tool of c not marked hidden (meta.hidden).
func TaskTools(c *toolenv.Collection, task *toolenv.Task) []*toolenv.Tool {
	var out []*toolenv.Tool
	if len(task.Tools) > 0 {
		for _, n := range task.Tools {
			if t := c.Tool(n); t != nil {
				out = append(out, t)
			}
		}
		return out
	}
	for _, t := range c.Tools {
		if t.Meta["hidden"] != "true" {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// InitCalls returns the arguments of a task's hidden initialisation calls
// (meta.init: a list of argument objects).
func InitCalls(task *toolenv.Task) []map[string]any {
	list, _ := task.Meta["init"].([]any)
	var out []map[string]any
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

type localSession struct {
	env   *Local
	coll  *toolenv.Collection
	id    string
	tools []*toolenv.Tool
}

func (s *localSession) ID() string             { return s.id }
func (s *localSession) Tools() []*toolenv.Tool { return s.tools }

func (s *localSession) Close(ctx context.Context) error { return nil }

func (s *localSession) Call(ctx context.Context, c Call) *toolenv.Result {
	return s.invoke(ctx, c.Name, WithLabel(s.coll, c.Args, c.Label))
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

// WithLabel returns args with the label added as the "label" argument
// when the collection keeps labelled results (Policy.Sessions, the
// NL2SQL SLOT/SEL protocol) and the arguments do not already name one.
func WithLabel(c *toolenv.Collection, args map[string]any, label string) map[string]any {
	if label == "" || !c.Policy.Sessions {
		return args
	}
	if _, ok := args["label"]; ok {
		return args
	}
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	out["label"] = label
	return out
}
