package drift

import (
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// Problem codes the enforcer adds to validation's.
const (
	// CodeRenamed is an argument an older version had under this name.
	CodeRenamed = "renamed"
	// CodeMoved is an argument an older version had at the top level,
	// now inside an object.
	CodeMoved = "moved"
)

// paramFate is what became of a parameter name of an older version.
type paramFate struct {
	// New is its path now ("town", "coordinates.lat").
	New string
	// Since is the version that changed it; Op how (OpRenameParam or
	// OpNest).
	Since, Op string
}

// note is a change that touched a current parameter.
type note struct {
	c     Change
	since string
}

// paramFates maps each parameter name the tool (current name) had in an
// older version, and no longer has, to where it went.
func (l *Lineage) paramFates(name string) map[string]paramFate {
	vs := l.Versions()
	cur := len(vs) - 1
	now := l.ToolAt(cur, name)
	if now == nil || cur == 0 {
		return nil
	}
	out := map[string]paramFate{}
	for i := 0; i < cur; i++ {
		t := l.ToolAt(i, l.Manifest.NameAt(vs[i], name))
		if t == nil || t.Meta[MetaStub] == "true" {
			continue
		}
		for _, p := range t.Input.Names() {
			if now.Input.Prop(p) != nil {
				continue
			}
			path, tn, fate := p, t.Name, paramFate{}
			for k := i; k < cur; k++ {
				tc := l.Manifest.Steps[k].change(tn)
				if tc == nil {
					continue
				}
				for _, c := range tc.Changes {
					top, rest, nested := strings.Cut(path, ".")
					switch {
					case c.Op == OpRenameParam && c.Param == top:
						path = c.To
						if nested {
							path += "." + rest
						}
						fate = paramFate{Since: l.Manifest.Steps[k].To, Op: c.Op}
					case c.Op == OpNest && !nested:
						for _, m := range c.Members {
							if m.Param == path {
								path = c.Param + "." + m.Key
								fate = paramFate{Since: l.Manifest.Steps[k].To, Op: c.Op}
								break
							}
						}
					}
				}
				tn = tc.Name
			}
			if path != p {
				fate.New = path
				out[p] = fate
			}
		}
	}
	return out
}

// paramNotes lists, per current parameter path, the changes that touched
// it (type, enum case, requiredness, default), oldest first.
func (l *Lineage) paramNotes(name string) map[string][]note {
	vs := l.Versions()
	notes := map[string][]note{}
	for k := range l.Manifest.Steps {
		tc := l.Manifest.Steps[k].change(l.Manifest.NameAt(vs[k], name))
		if tc == nil {
			continue
		}
		for _, c := range tc.Changes {
			switch c.Op {
			case OpRenameParam:
				if n, ok := notes[c.Param]; ok {
					notes[c.To] = n
					delete(notes, c.Param)
				}
			case OpNest:
				for _, m := range c.Members {
					if n, ok := notes[m.Param]; ok {
						notes[c.Param+"."+m.Key] = n
						delete(notes, m.Param)
					}
				}
			case OpRetype, OpEnumCase, OpMakeRequired, OpMakeOptional, OpFlipDefault:
				notes[c.Param] = append(notes[c.Param], note{c: c, since: l.Manifest.Steps[k].To})
			}
		}
	}
	return notes
}

// reject is the result of a call whose arguments do not match the
// current schema: validation's problems, each explained by what the
// manifest says changed, rendered at the call's feedback level.
func (e *Enforcer) reject(call *toolenv.Call, l *Lineage, probs []toolenv.Problem) *toolenv.Result {
	level := feedbackLevel(call, l)
	probs = e.explain(call, l, probs, level == toolenv.FeedbackHelpful)
	msg, hint := validate.Feedback(level, call.Tool, probs)
	res := &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: msg, Hint: hint, Source: toolenv.SourcePipeline}
	if level != toolenv.FeedbackNone {
		res.Problems = probs
	}
	return res
}

// explain rewrites validation problems with what changed: an old name is
// "renamed" (or "moved" into an object) — naming the new one only when
// helpful —, a missing argument that an old name already supplies is
// dropped, and type, enum and requiredness problems say since when.
func (e *Enforcer) explain(call *toolenv.Call, l *Lineage, probs []toolenv.Problem, helpful bool) []toolenv.Problem {
	fates := e.fatesOf(call.Tool.ID)
	var notes map[string][]note
	covered := map[string]bool{} // current params an old name in the call supplies
	for k := range call.Args {
		if f, ok := fates[k]; ok {
			top, _, _ := strings.Cut(f.New, ".")
			covered[f.New], covered[top] = true, true
		}
	}
	var out []toolenv.Problem
	for _, p := range probs {
		switch p.Code {
		case validate.CodeUnknownParam:
			if f, ok := fates[p.Param]; ok {
				p = renamedProblem(p.Param, f, helpful)
			}
		case validate.CodeMissingRequired:
			if covered[p.Param] {
				continue
			}
			if helpful {
				if n := lastNote(e.notes(l, call, &notes), p.Param, OpMakeRequired); n != nil {
					p.Message += fmt.Sprintf(" (required since %s; leaving it out used to mean %s)", n.since, showValue(n.c.OldValue))
				}
			}
		case validate.CodeWrongType, validate.CodeBadFormat:
			if helpful {
				if n := lastNote(e.notes(l, call, &notes), p.Param, OpRetype); n != nil {
					p.Message += fmt.Sprintf(" (its type is %s since %s; it was %s)", n.c.ToType, n.since, article(n.c.FromType))
				}
			}
		case validate.CodeNotInEnum:
			if helpful {
				if n := lastNote(e.notes(l, call, &notes), p.Param, OpEnumCase); n != nil {
					p.Message += fmt.Sprintf(" (enum values are %s case since %s)", n.c.Rule, n.since)
				}
			}
		}
		out = append(out, p)
	}
	return out
}

func (e *Enforcer) notes(l *Lineage, call *toolenv.Call, cache *map[string][]note) map[string][]note {
	if *cache == nil {
		*cache = l.paramNotes(call.Tool.Name)
	}
	return *cache
}

func renamedProblem(old string, f paramFate, helpful bool) toolenv.Problem {
	code, verb := CodeRenamed, "renamed"
	if f.Op == OpNest {
		code, verb = CodeMoved, "moved into an object"
	}
	p := toolenv.Problem{Param: old, Code: code, Message: fmt.Sprintf("argument `%s` was %s in %s", old, verb, f.Since)}
	if helpful {
		if f.Op == OpNest {
			p.Message = fmt.Sprintf("argument `%s` was moved to `%s` in %s", old, f.New, f.Since)
		} else {
			p.Message = fmt.Sprintf("argument `%s` was renamed to `%s` in %s", old, f.New, f.Since)
		}
		p.Expected = f.New
	}
	return p
}

func lastNote(notes map[string][]note, param, op string) *note {
	ns := notes[param]
	for i := len(ns) - 1; i >= 0; i-- {
		if ns[i].c.Op == op {
			return &ns[i]
		}
	}
	return nil
}

func article(t string) string {
	if t == "integer" {
		return "an integer"
	}
	return "a " + t
}
