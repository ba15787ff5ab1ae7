package repair

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/validate"
)

// The Result.Meta keys a repair sets.
const (
	MetaRepaired = "repaired"
	MetaFrom     = "repair_from"
	MetaTo       = "repair_to"
)

// Tools resolves tool IDs to the tools served now. *invoke.Registry
// implements it.
type Tools interface {
	Tool(id string) *toolenv.Tool
}

// Options configure an Adapter.
type Options struct {
	// Validator checks arguments; nil means a fresh one.
	Validator *validate.Validator
	// Old is the old documentation: the tools the mappings' From IDs
	// name. With it, an argument an old call leaves out gets the old
	// documented default (what leaving it out meant then).
	Old []*toolenv.Tool
	// MinScore is the lowest mapping score used; default 0.5.
	MinScore float64
	// Logger logs repairs at debug level; nil discards.
	Logger *slog.Logger
}

// Adapter repairs calls written against old documentation.
type Adapter struct {
	tools Tools
	opts  Options
	log   *slog.Logger
	// byOld maps a served collection and an old tool name to the mapping
	// from that old tool to a current one.
	byOld map[string]map[string]*mapping.Mapping
	docs  map[string]*toolenv.Tool // old documentation by ID
}

// New returns an adapter over the mappings in set whose To tools are
// served (tools resolves them); each mapping's From names a tool of the
// old documentation by its name (its collection part is ignored: old
// versions share the served collection's name or carry a suffix such as
// "bird-rest@v1").
func New(tools Tools, set *mapping.Set, opts Options) *Adapter {
	if opts.Validator == nil {
		opts.Validator = &validate.Validator{}
	}
	if opts.MinScore <= 0 {
		opts.MinScore = 0.5
	}
	a := &Adapter{tools: tools, opts: opts, log: opts.Logger, byOld: map[string]map[string]*mapping.Mapping{}, docs: map[string]*toolenv.Tool{}}
	for _, t := range opts.Old {
		a.docs[t.ID] = t
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if set == nil {
		return a
	}
	for _, m := range set.Mappings {
		if m.Score < opts.MinScore {
			continue
		}
		to := tools.Tool(m.To)
		if to == nil {
			continue
		}
		_, oldName, ok := toolenv.SplitToolID(m.From)
		if !ok {
			continue
		}
		t := a.byOld[to.Collection]
		if t == nil {
			t = map[string]*mapping.Mapping{}
			a.byOld[to.Collection] = t
		}
		if cur, dup := t[oldName]; !dup || m.Score > cur.Score {
			t[oldName] = m
		}
	}
	return a
}

// Len is the number of old tools the adapter can repair calls to.
func (a *Adapter) Len() int {
	n := 0
	for _, t := range a.byOld {
		n += len(t)
	}
	return n
}

// Middleware repairs each call that needs it, before validation.
func (a *Adapter) Middleware() toolenv.Middleware {
	return func(next toolenv.Handler) toolenv.Handler {
		return toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
			fixed, notes := a.Repair(call)
			if fixed == nil {
				return next.Invoke(ctx, call)
			}
			res := next.Invoke(ctx, fixed)
			what := call.Tool.Name
			if fixed.Tool.Name != call.Tool.Name {
				what += " → " + fixed.Tool.Name
			}
			msg := "repaired a call written against older documentation (" + what + ")"
			if len(notes) > 0 {
				msg += ": " + strings.Join(notes, "; ")
			}
			res.Warnings = append(res.Warnings, msg)
			res.SetMeta(MetaRepaired, "true")
			res.SetMeta(MetaFrom, call.Tool.ID)
			res.SetMeta(MetaTo, fixed.Tool.ID)
			a.log.Debug("repaired call", "from", call.Tool.ID, "to", fixed.Tool.ID, "notes", notes)
			return res
		})
	}
}

// Repair returns the repaired call and what was done, or nil when the
// call needs no repair or none would help.
func (a *Adapter) Repair(call *toolenv.Call) (*toolenv.Call, []string) {
	if call.Tool == nil {
		return nil, nil
	}
	m := a.byOld[call.Tool.Collection][call.Tool.Name]
	if m == nil {
		return nil, nil
	}
	target := a.tools.Tool(m.To)
	if target == nil {
		return nil, nil
	}
	moved := target.ID != call.Tool.ID
	before := a.problems(target, call.Args)
	if !moved && before == 0 {
		return nil, nil
	}
	from := a.docs[m.From]
	if from == nil {
		from = call.Tool
	}
	tr, err := mapping.TranslateFrom(m, call.Args, from, target)
	if err != nil {
		a.log.Debug("repair: cannot translate", "tool", call.Tool.ID, "err", err)
		return nil, nil
	}
	after := a.problems(target, tr.Args)
	if after > 0 && after >= before {
		return nil, nil // the translation does not help: let the call fail as it is
	}
	fixed := call.Clone()
	fixed.Tool = target
	fixed.Args = tr.Args
	notes := tr.Notes
	if after > 0 {
		notes = append(notes, fmt.Sprintf("%d problem(s) left", after))
	}
	return fixed, notes
}

// problems counts what is wrong with args for tool under strict
// validation.
func (a *Adapter) problems(t *toolenv.Tool, args map[string]any) int {
	return len(a.opts.Validator.Args(t.Input, args, false).Problems)
}
