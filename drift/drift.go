package drift

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/validate"
)

// Options configure one drift step.
type Options struct {
	// Seed seeds every choice; the same seed, options and input give
	// byte-identical output.
	Seed uint64
	// Operators are the operators to run, by name; nil runs them all.
	Operators []string
	// Rates override operators' default rates (each in [0, 1]).
	Rates map[string]float64
	// Version names the new version; empty means the next one ("v1" →
	// "v2").
	Version string
	// Rules are the operators' data; nil means DefaultRules.
	Rules *Rules
	// Tasks are the tasks of the version drifted: they are translated to
	// the new version, and parameters their gold calls fill with
	// "$label$" references are spared type drift and nesting.
	Tasks []*toolenv.Task
	// Validation is the new version's validation policy; empty means
	// strict (drifted schemas are exact, and enforcing them is the point).
	Validation string
	// Mode is the new version's mode, "strict" (default) or "compat".
	Mode string
	// Feedback is the new version's feedback level; empty keeps the
	// drifted collection's.
	Feedback string
}

// Drifted is the outcome of a drift step.
type Drifted struct {
	// Lineage is the new version with its history: Lineage.Current is the
	// new collection, Lineage.Manifest the whole chain.
	Lineage *Lineage
	// From is the version that was drifted.
	From *toolenv.Collection
	// Step is the step just made (the manifest's last).
	Step *Step
	// Tasks are Options.Tasks translated to the new version.
	Tasks []*toolenv.Task
}

// Drift makes the next version of the collection in: it runs the
// operators over every tool that is not a stub or hidden, records their
// changes in a new manifest step, and builds the new version by replaying
// that step, so the collection written is exactly what the manifest
// describes. Options are checked before anything is done.
func Drift(in *Lineage, opts Options) (*Drifted, error) {
	ops, rates, err := selectOperators(opts.Operators, opts.Rates)
	if err != nil {
		return nil, err
	}
	rules := opts.Rules
	if rules == nil {
		if rules, err = DefaultRules(); err != nil {
			return nil, err
		}
	}
	from := in.Current
	if len(from.Tools) == 0 {
		return nil, errNoTools
	}
	fromVersion := in.Manifest.Version
	to := opts.Version
	if to == "" {
		to = NextVersion(fromVersion)
	}
	if in.Manifest.VersionIndex(to) >= 0 {
		return nil, fmt.Errorf("drift: version %q already exists in the chain of %s (%s); pass another --version", to, from.Name, strings.Join(in.Versions(), ", "))
	}
	for _, v := range []struct{ what, val string }{{"validation", opts.Validation}, {"mode", opts.Mode}, {"feedback", opts.Feedback}} {
		if err := checkPolicyValue(v.what, v.val); err != nil {
			return nil, err
		}
	}

	toolNames := map[string]bool{}
	for i := range in.Versions() {
		for _, t := range in.ToolsAt(i) {
			toolNames[t.Name] = true
		}
	}
	refs := referencedParams(opts.Tasks)
	style := pickStyle(rules, opts.Seed, to)
	v := &validate.Validator{}
	step := Step{From: fromVersion, To: to, Seed: opts.Seed, Rates: map[string]float64{},
		Provenance: buildinfo.Provenance(nil, map[string]any{"seed": opts.Seed, "operators": opts.Operators, "rates": opts.Rates,
			"version": opts.Version, "validation": opts.Validation, "mode": opts.Mode, "feedback": opts.Feedback, "tasks": len(opts.Tasks)})}
	for _, op := range ops {
		step.Operators = append(step.Operators, op.Name)
		step.Rates[op.Name] = rates[op.Name]
	}
	env := applyEnv{from: fromVersion, to: to}
	for _, t := range from.Tools {
		if t.Meta[MetaStub] == "true" || t.Hidden() {
			continue
		}
		work := t.Clone()
		p := &planner{rules: rules, from: fromVersion, to: to, kind: from.Kind, sessions: from.Policy.Sessions,
			toolNames: toolNames, history: in.paramHistory(t.Name), refs: refs[t.Name], style: style, validator: v}
		var changes []Change
		for _, op := range ops {
			p.rng, p.rate = seedFor(opts.Seed, to, t.Name, op.Name), rates[op.Name]
			for _, c := range op.plan(p, work) {
				c.Operator = op.Name
				if err := c.apply(work, env); err != nil {
					return nil, fmt.Errorf("drift: operator %s on tool %s: %w (a bug in toolenv)", op.Name, t.Name, err)
				}
				changes = append(changes, c)
			}
		}
		if len(changes) == 0 {
			continue
		}
		tc := ToolChange{Tool: t.Name, Name: work.Name, Changes: changes}
		switch {
		case hasOp(changes, OpDeprecate):
			tc.Stub, tc.StubListed = t.Name, true
		case work.Name != t.Name:
			tc.Stub = t.Name
		case movedRoute(t, work) && from.Kind != "toolbench":
			tc.Stub = stubName(t.Name, fromVersion, toolNames)
			toolNames[tc.Stub] = true
		}
		step.Tools = append(step.Tools, tc)
	}
	sort.Slice(step.Tools, func(i, j int) bool { return step.Tools[i].Tool < step.Tools[j].Tool })

	tools, err := step.apply(from.Tools)
	if err != nil {
		return nil, fmt.Errorf("drift: %w (a bug in toolenv)", err)
	}
	m := &Manifest{Format: ManifestFormat, Collection: from.Name, Kind: from.Kind, BaseVersion: in.Manifest.BaseVersion, Version: to}
	m.Steps = append(append(m.Steps, in.Manifest.Steps...), step)
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("drift: %w (a bug in toolenv)", err)
	}

	c := toolenv.NewCollection(from.Name, from.Kind, tools)
	c.Version = to
	c.Description = from.Description
	c.Policy = from.Policy
	c.Policy.Validation = orDefault(opts.Validation, toolenv.ValidationStrict)
	c.Policy.Mode = orDefault(opts.Mode, "strict")
	c.Policy.Feedback = orDefault(opts.Feedback, orDefault(from.Policy.Feedback, toolenv.FeedbackHelpful))
	c.Backend = toolenv.BackendSpec{Type: BackendType}
	c.Meta = map[string]string{}
	for k, val := range in.Base.Meta {
		c.Meta[k] = val
	}
	c.Meta[MetaDerivedFrom] = from.Name + "@" + fromVersion
	c.Meta[MetaBase] = from.Name + "@" + m.BaseVersion
	c.Meta[MetaSeed] = strconv.FormatUint(opts.Seed, 10)
	c.Meta[MetaManifest] = ManifestFile

	base := in.Base
	if base.Version == "" {
		b := *base
		b.Version = m.BaseVersion
		base = &b
	}
	out := &Lineage{Current: c, Base: base, Manifest: m}
	versions := append(append([][]*toolenv.Tool(nil), in.order...), tools)
	out.index(versions)
	return &Drifted{Lineage: out, From: from, Step: &out.Manifest.Steps[len(out.Manifest.Steps)-1], Tasks: TranslateTasks(opts.Tasks, &step)}, nil
}

// selectOperators resolves operator names and rates, rejecting unknown
// names and rates outside [0, 1].
func selectOperators(names []string, rates map[string]float64) ([]Operator, map[string]float64, error) {
	all := Operators()
	byName := map[string]Operator{}
	for _, o := range all {
		byName[o.Name] = o
	}
	known := strings.Join(OperatorNames(), ", ")
	want := map[string]bool{}
	for _, n := range names {
		if _, ok := byName[n]; !ok {
			return nil, nil, fmt.Errorf("drift: unknown operator %q (known: %s)", n, known)
		}
		want[n] = true
	}
	out := map[string]float64{}
	for _, n := range slices.Sorted(maps.Keys(rates)) {
		r := rates[n]
		if _, ok := byName[n]; !ok {
			return nil, nil, fmt.Errorf("drift: --rate names unknown operator %q (known: %s)", n, known)
		}
		if r < 0 || r > 1 || r != r {
			return nil, nil, fmt.Errorf("drift: rate of %s is %v; rates are probabilities in [0, 1]", n, r)
		}
		if len(names) > 0 && !want[n] {
			return nil, nil, fmt.Errorf("drift: --rate sets %s, which --ops does not run", n)
		}
	}
	var ops []Operator
	for _, o := range all {
		if len(names) > 0 && !want[o.Name] {
			continue
		}
		ops = append(ops, o)
		out[o.Name] = o.DefaultRate
		if r, ok := rates[o.Name]; ok {
			out[o.Name] = r
		}
	}
	return ops, out, nil
}

func checkPolicyValue(what, v string) error {
	if v == "" {
		return nil
	}
	allowed := map[string][]string{
		"validation": {toolenv.ValidationStrict, toolenv.ValidationLenient},
		"mode":       {"strict", "compat"},
		"feedback":   {toolenv.FeedbackNone, toolenv.FeedbackTerse, toolenv.FeedbackHelpful},
	}[what]
	if !contains(allowed, v) {
		return fmt.Errorf("drift: %s %q: want one of %s", what, v, strings.Join(allowed, ", "))
	}
	return nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func hasOp(cs []Change, op string) bool {
	for _, c := range cs {
		if c.Op == op {
			return true
		}
	}
	return false
}

// movedRoute reports whether a tool's HTTP route (method or path) changed.
func movedRoute(old, nw *toolenv.Tool) bool {
	if old.Binding == nil || nw.Binding == nil || !strings.HasPrefix(old.Binding.Path, "/") {
		return false
	}
	return old.Binding.Path != nw.Binding.Path || old.Binding.Method != nw.Binding.Method
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// stubName names the stub left at a moved route: the tool's name with the
// old version appended.
func stubName(name, version string, taken map[string]bool) string {
	v := nonIdent.ReplaceAllString(version, "_")
	for i := 1; ; i++ {
		s := name + "_" + v
		if i > 1 {
			s += "_" + strconv.Itoa(i)
		}
		if !taken[s] {
			return s
		}
	}
}

var trailingNumber = regexp.MustCompile(`^(.*?)([0-9]+)$`)

// NextVersion returns the version after v: "v1" → "v2", "2024.3" →
// "2024.4", "" → "v2", anything else gets ".1" appended.
func NextVersion(v string) string {
	if v == "" {
		return "v2"
	}
	if m := trailingNumber.FindStringSubmatch(v); m != nil {
		n, err := strconv.Atoi(m[2])
		if err == nil {
			return m[1] + strconv.Itoa(n+1)
		}
	}
	return v + ".1"
}

// paramHistory returns every parameter name the tool now named name had
// in any version of the chain (its nested keys included).
func (l *Lineage) paramHistory(name string) map[string]bool {
	out := map[string]bool{}
	for i, v := range l.Versions() {
		t := l.ToolAt(i, l.Manifest.NameAt(v, name))
		if t == nil {
			continue
		}
		for _, n := range t.Input.Names() {
			out[n] = true
		}
	}
	return out
}

// referencedParams finds, per tool, the parameters that task gold calls
// fill with "$label$" references.
func referencedParams(tasks []*toolenv.Task) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, t := range tasks {
		for _, g := range t.Gold {
			for k, v := range g.Args {
				if hasRef(v) {
					if out[g.Name] == nil {
						out[g.Name] = map[string]bool{}
					}
					out[g.Name][k] = true
				}
			}
		}
	}
	return out
}

var refPattern = regexp.MustCompile(`^\$[^$]+\$$`)

func hasRef(v any) bool {
	switch x := v.(type) {
	case string:
		return refPattern.MatchString(x)
	case toolenv.RawJSON: // an argument kept as text: as the value it holds
		return hasRef(toolenv.Decoded(x))
	case []any:
		for _, e := range x {
			if hasRef(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasRef(e) {
				return true
			}
		}
	}
	return false
}

// errNoTools is returned when there is nothing to drift.
var errNoTools = errors.New("drift: the collection has no tools")
