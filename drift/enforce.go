package drift

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/validate"
)

// The modes of a drifted collection (Policy.Mode).
const (
	// ModeStrict rejects calls written against an older version, each
	// problem precise (an old parameter name is reported as renamed, and
	// at the helpful level its new name is given).
	ModeStrict = "strict"
	// ModeCompat accepts calls written against an older version by
	// translating them through the manifest, with a deprecation warning;
	// their responses are translated back into the old format.
	ModeCompat = "compat"
)

// The Result.Meta keys the enforcer sets.
const (
	// MetaClientArgs holds the arguments the client sent (canonical JSON)
	// on calls translated to the base tool: Call.Doc documents them, so a
	// simulator can show both side by side.
	MetaClientArgs = "drift_client_args"
	// MetaTranslatedFrom names the version a compat-mode call was written
	// against.
	MetaTranslatedFrom = "drift_translated_from"
	// MetaSuccessor names the tool that replaces a deprecated one.
	MetaSuccessor = "successor"
)

// CacheProbe is what the enforcer needs of the cache to find an answer
// recorded under an alternative form of a translated call. store.Store
// implements it.
type CacheProbe interface {
	Get(ctx context.Context, tool, args string) (*store.Entry, bool, error)
}

var _ CacheProbe = (store.Store)(nil)

// EnforcerOptions configure an Enforcer.
type EnforcerOptions struct {
	// Mode, when set, overrides every drifted collection's Policy.Mode.
	Mode string
	// Cache, when set, is probed for answers recorded under the
	// alternative base form of a call (an old default spelled out).
	Cache CacheProbe
	// Validator checks arguments; nil means a fresh one.
	Validator *validate.Validator
	// Logger logs translations at debug level; nil discards.
	Logger *slog.Logger
}

// Enforcer enforces drifted collections at call time. Before is the
// pipeline middleware ahead of argument validation, After the one between
// validation and the cache (invoke.Options.BeforeValidate and
// AfterValidate). Calls to other collections pass through untouched.
type Enforcer struct {
	opts  EnforcerOptions
	log   *slog.Logger
	v     *validate.Validator
	state atomic.Pointer[enforced]
	setMu sync.Mutex // serialises Set and Remove
}

// enforced is what an Enforcer enforces; it is replaced whole by Set and
// Remove, so calls never see half a change.
type enforced struct {
	byCol map[string]*Lineage
	fates map[string]map[string]paramFate // current tool ID → old param name → fate
}

// NewEnforcer returns the enforcer of the drifted collections ls.
func NewEnforcer(opts EnforcerOptions, ls ...*Lineage) *Enforcer {
	e := &Enforcer{opts: opts, log: opts.Logger, v: opts.Validator}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.v == nil {
		e.v = &validate.Validator{}
	}
	st := &enforced{byCol: map[string]*Lineage{}, fates: map[string]map[string]paramFate{}}
	for _, l := range ls {
		st.add(l)
	}
	e.state.Store(st)
	return e
}

func (st *enforced) add(l *Lineage) {
	st.byCol[l.Current.Name] = l
	for _, t := range l.Current.Tools {
		if f := l.paramFates(t.Name); len(f) > 0 {
			st.fates[t.ID] = f
		}
	}
}

// change makes the next state from a copy of the current one without
// collection name.
func (e *Enforcer) change(name string, l *Lineage) {
	e.setMu.Lock()
	defer e.setMu.Unlock()
	old := e.state.Load()
	st := &enforced{byCol: make(map[string]*Lineage, len(old.byCol)+1), fates: make(map[string]map[string]paramFate, len(old.fates))}
	for n, x := range old.byCol {
		if n != name {
			st.add(x)
		}
	}
	if l != nil {
		st.add(l)
	}
	e.state.Store(st)
}

// Set enforces l from now on, in place of the lineage of the collection of
// the same name if there was one: a drifted version hot-loaded into a
// running server (invoke.Registry.Replace).
func (e *Enforcer) Set(l *Lineage) { e.change(l.Current.Name, l) }

// Remove stops enforcing the collection named name (it was replaced by a
// version that is not drifted).
func (e *Enforcer) Remove(name string) { e.change(name, nil) }

// Lineage returns the lineage of the drifted collection named name, or nil.
func (e *Enforcer) Lineage(name string) *Lineage { return e.state.Load().byCol[name] }

func (e *Enforcer) lineage(call *toolenv.Call) *Lineage {
	if call.Tool == nil {
		return nil
	}
	return e.state.Load().byCol[call.Tool.Collection]
}

// fatesOf returns the fates of the old parameters of a current tool.
func (e *Enforcer) fatesOf(id string) map[string]paramFate { return e.state.Load().fates[id] }

func (e *Enforcer) mode(l *Lineage) string {
	if e.opts.Mode != "" {
		return e.opts.Mode
	}
	if l.Current.Policy.Mode == ModeCompat {
		return ModeCompat
	}
	return ModeStrict
}

func feedbackLevel(call *toolenv.Call, l *Lineage) string {
	if call.Options.Feedback != "" {
		return call.Options.Feedback
	}
	if l.Current.Policy.Feedback != "" {
		return l.Current.Policy.Feedback
	}
	return toolenv.FeedbackHelpful
}

// Before returns the middleware that runs ahead of argument validation:
// in strict mode it rejects calls that do not match the current schema
// with problems that say what changed; in compat mode it translates calls
// written against an older version (and calls to deprecated tools) into
// the current one and their responses back. Either way, errors leave in
// the error format of the version the client speaks.
func (e *Enforcer) Before() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			l := e.lineage(call)
			if l == nil {
				return next.Invoke(ctx, call)
			}
			cur := len(l.versions) - 1
			if call.Tool.Meta[MetaStub] == "true" {
				return e.stubCall(ctx, call, l, next)
			}
			if e.mode(l) == ModeCompat && len(e.check(l, cur, call.Tool, call.Args)) > 0 {
				if i, ok := e.oldForm(l, call.Tool.Name, call.Args); ok {
					return e.compatCall(ctx, call, l, i, l.Manifest.NameAt(l.Versions()[i], call.Tool.Name), next)
				}
			}
			if probs := e.check(l, cur, call.Tool, call.Args); len(probs) > 0 {
				return e.finish(e.reject(call, l, probs), l, cur, call.Tool.Name)
			}
			return e.finish(next.Invoke(ctx, call), l, cur, call.Tool.Name)
		})
	}
}

// check validates args against the tool of version i. Under the lenient
// policy unknown arguments pass, but in the current version an argument
// under an old name is still a problem: it is known to be wrong.
func (e *Enforcer) check(l *Lineage, i int, t *toolenv.Tool, args map[string]any) []toolenv.Problem {
	lenient := l.Current.Policy.Validation == toolenv.ValidationLenient
	if i == 0 {
		lenient = l.Base.Policy.Validation == toolenv.ValidationLenient
	}
	probs := e.v.Args(t.Input, args, lenient).Problems
	if lenient && i == len(l.versions)-1 {
		fates := e.fatesOf(t.ID)
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if _, old := fates[k]; old && t.Input.Prop(k) == nil {
				probs = append(probs, toolenv.Problem{Param: k, Code: validate.CodeUnknownParam, Message: fmt.Sprintf("unknown argument `%s`", k)})
			}
		}
	}
	return probs
}

// oldForm finds the newest older version whose schema args match.
func (e *Enforcer) oldForm(l *Lineage, name string, args map[string]any) (int, bool) {
	vs := l.Versions()
	for i := len(vs) - 2; i >= 0; i-- {
		t := l.ToolAt(i, l.Manifest.NameAt(vs[i], name))
		if t != nil && t.Meta[MetaStub] != "true" && len(e.check(l, i, t, args)) == 0 {
			return i, true
		}
	}
	return 0, false
}

// compatCall runs a call written against version i (tool name oldName
// there) as a call of the current version and translates its response
// back.
func (e *Enforcer) compatCall(ctx context.Context, call *toolenv.Call, l *Lineage, i int, oldName string, next toolenv.Handler) *toolenv.Result {
	v := l.Versions()[i]
	name, args, err := l.Manifest.Forward(v, oldName, call.Args)
	cur := len(l.versions) - 1
	t := l.ToolAt(cur, name)
	if err != nil || t == nil {
		return toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv", "drift: cannot translate %s from %s: %v", oldName, v, err)
	}
	c2 := call.Clone()
	c2.Tool, c2.Args = t, args
	res := next.Invoke(ctx, c2)
	res.Body = l.Manifest.BackwardBody(v, name, res.Body)
	res.Warnings = append(res.Warnings, fmt.Sprintf("deprecated: this call is written against %s %s; it was translated to %s %s (%s). Update it: %s mode will reject it.",
		oldName, v, name, l.Manifest.Version, argDiff(call.Args, args), ModeStrict))
	res.SetMeta(MetaTranslatedFrom, v)
	e.log.Debug("drift: compat translation", "collection", l.Current.Name, "tool", oldName, "from", v, "to", name)
	return e.finish(res, l, i, oldName)
}

// stubCall answers a call to a tool left at an old name or endpoint: 410
// Gone pointing to its successor (strict), or the call forwarded to it
// (compat).
func (e *Enforcer) stubCall(ctx context.Context, call *toolenv.Call, l *Lineage, next toolenv.Handler) *toolenv.Result {
	i, oldName := l.stubOrigin(call.Tool.Name)
	if i < 0 {
		return toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv", "drift: %s is marked as a stub but no step left it", call.Tool.Name)
	}
	if e.mode(l) == ModeCompat {
		return e.compatCall(ctx, call, l, i, oldName, next)
	}
	v := l.Versions()[i]
	succ, args, _ := l.Manifest.Forward(v, oldName, call.Args)
	since := l.Versions()[i+1]
	level := feedbackLevel(call, l)
	res := &toolenv.Result{Status: toolenv.StatusGone, Source: toolenv.SourcePipeline}
	res.SetMeta(MetaSuccessor, succ)
	switch level {
	case toolenv.FeedbackNone:
		res.Error = "gone"
	case toolenv.FeedbackTerse:
		res.Error = fmt.Sprintf("%s is gone since %s; use %s", call.Tool.Name, since, succ)
	default:
		res.Error = fmt.Sprintf("%s was replaced by %s in %s; call %s instead", call.Tool.Name, succ, since, succ)
		hint := ""
		if t := l.ToolAt(len(l.versions)-1, succ); t != nil {
			hint = validate.ParamHelp(t)
		}
		if canon, err := toolenv.Canonical(args); err == nil && len(call.Args) > 0 {
			hint = fmt.Sprintf("this call becomes %s %s; %s", succ, canon, hint)
		}
		res.Hint = hint
	}
	return e.finish(res, l, i, oldName)
}

// finish renders a failed result's error in the error format of version
// i of the tool (named name there).
func (e *Enforcer) finish(res *toolenv.Result, l *Lineage, i int, name string) *toolenv.Result {
	if res.OK() || res.Error == "" {
		return res
	}
	if st := styleOf(l.ToolAt(i, name)); st != nil {
		if _, _, already := st.Parse(res.Error); !already {
			res.Error = st.Render(res.Status, res.Error)
		}
	}
	return res
}

// After returns the middleware between validation and the cache: it
// translates each (valid, current) call of a drifted collection into the
// call of its base tool with base arguments — the cache key answers
// recorded before the drift are stored under, and what the base backend
// executes — gives the backend the current documentation (Call.Doc), and
// translates the response into the current format.
func (e *Enforcer) After() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			l := e.lineage(call)
			if l == nil {
				return next.Invoke(ctx, call)
			}
			baseName, alts := l.Manifest.BackwardAlternatives(call.Tool.Name, call.Args)
			bt := l.Base.Tool(baseName)
			if bt == nil {
				return toolenv.Errorf(toolenv.StatusInternal, "this is a bug in toolenv, or the base collection was edited", "drift: %s translates to %s, which the base collection does not have", call.Tool.Name, baseName)
			}
			args := alts[0]
			if len(alts) > 1 && e.opts.Cache != nil && l.Current.Policy.Cache && !call.Options.NoCache {
				for _, alt := range alts {
					if canon, err := toolenv.Canonical(alt); err == nil {
						if _, ok, _ := e.opts.Cache.Get(ctx, bt.ID, string(canon)); ok {
							args = alt
							break
						}
					}
				}
			}
			c2 := call.Clone()
			c2.Tool, c2.Args, c2.Doc = bt, args, call.Tool
			if canon, err := toolenv.Canonical(call.Args); err == nil {
				if c2.Meta == nil {
					c2.Meta = map[string]string{}
				}
				c2.Meta[MetaClientArgs] = string(canon)
			}
			res := next.Invoke(ctx, c2)
			res.Body = l.Manifest.ForwardBody(baseName, res.Body)
			return res
		})
	}
}

// FeedbackLevel returns middleware that sets the feedback level of every
// call that does not ask for one (toolenv serve --feedback).
func FeedbackLevel(level string) toolenv.Middleware {
	if level == "" {
		return nil
	}
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			if call.Options.Feedback == "" {
				call.Options.Feedback = level
			}
			return next.Invoke(ctx, call)
		})
	}
}

// argDiff describes how a call's arguments changed in translation.
func argDiff(old, nw map[string]any) string {
	var gone, added, changed []string
	for _, k := range slices.Sorted(maps.Keys(old)) {
		v, ok := nw[k]
		switch {
		case !ok:
			gone = append(gone, k)
		case mustCanon(v) != mustCanon(old[k]):
			changed = append(changed, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(nw)) {
		if _, ok := old[k]; !ok {
			added = append(added, k)
		}
	}
	var parts []string
	if len(gone) > 0 {
		parts = append(parts, "no longer sent: "+strings.Join(gone, ", "))
	}
	if len(added) > 0 {
		parts = append(parts, "now sent: "+strings.Join(added, ", "))
	}
	if len(changed) > 0 {
		parts = append(parts, "rewritten: "+strings.Join(changed, ", "))
	}
	if len(parts) == 0 {
		return "arguments unchanged"
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
