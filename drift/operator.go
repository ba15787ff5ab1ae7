package drift

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// Operator is one kind of drift: a planner that looks at a tool and
// decides, with a seeded random source, which exact changes to make.
// Operators only plan; the changes they return are data (see Change) that
// apply the same way whenever a manifest is replayed.
type Operator struct {
	// Name is how --ops and --rate name it.
	Name string
	// Summary says what it does.
	Summary string
	// Changes are the change kinds it makes.
	Changes []string
	// DefaultRate is the probability with which each eligible site (a
	// tool, a parameter, a field) is changed when --rate does not say.
	DefaultRate float64
	plan        func(p *planner, t *toolenv.Tool) []Change
}

// Operators returns the operators in the order a step runs them:
// deprecation and endpoint evolution first (they rename tools), then
// nesting (it recognises parameters by their original names), renames,
// type drift, required/optional swaps, default flips, response field
// renames and error formats.
func Operators() []Operator {
	return []Operator{
		{Name: "deprecate", Summary: "retire a tool: its successor gets a new name and endpoint; the old one stays documented as deprecated and answers 410 Gone pointing to it", Changes: []string{OpRenameTool, OpEndpoint, OpDeprecate}, DefaultRate: 0.05, plan: planDeprecate},
		{Name: "endpoint", Summary: "endpoint evolution: version bump (/v1→/v2), path and host migration, action renames (get→fetch, list→search, post→submit, …)", Changes: []string{OpRenameTool, OpEndpoint}, DefaultRate: 0.3, plan: planEndpoint},
		{Name: "nest", Summary: "group related flat parameters into one object (address parts, latitude/longitude, page/limit, date ranges)", Changes: []string{OpNest}, DefaultRate: 0.5, plan: planNest},
		{Name: "rename", Summary: "rename parameters by synonym, abbreviation or case style (camelCase↔snake_case), never onto a name in use", Changes: []string{OpRenameParam}, DefaultRate: 0.3, plan: planRename},
		{Name: "type", Summary: "type drift: integer, number and boolean to string and back where lossless; enum value case", Changes: []string{OpRetype, OpEnumCase}, DefaultRate: 0.25, plan: planType},
		{Name: "required", Summary: "required↔optional swaps; a parameter made optional gets a documented default", Changes: []string{OpMakeOptional, OpMakeRequired}, DefaultRate: 0.25, plan: planRequired},
		{Name: "default", Summary: "default flips (asc↔desc, true↔false, page sizes)", Changes: []string{OpFlipDefault}, DefaultRate: 0.5, plan: planDefault},
		{Name: "response", Summary: "rename documented response fields", Changes: []string{OpRenameField}, DefaultRate: 0.2, plan: planResponse},
		{Name: "errors", Summary: "error-format drift: error messages and codes written in a new style", Changes: []string{OpErrorFormat}, DefaultRate: 1, plan: planErrors},
	}
}

// OperatorNames returns the operators' names in order.
func OperatorNames() []string {
	ops := Operators()
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

// planner is what an operator sees while planning the changes to one
// tool: the rules, its random source and rate, and the names it must not
// collide with.
type planner struct {
	rules *Rules
	rng   *rand.Rand
	rate  float64
	from  string
	to    string
	kind  string
	// sessions: the collection keeps labelled results (NL2SQL SLOT/SEL),
	// whose "label" argument is the harness's, not the API's.
	sessions bool
	// toolNames are every tool name of every version so far, plus the
	// names this step has given.
	toolNames map[string]bool
	// history are the names this tool's parameters had in any version.
	history map[string]bool
	// refs are the parameters that receive "$label$" references in task
	// gold calls: their values are only known at run time.
	refs map[string]bool
	// style is the error format this step switches to.
	style *ErrorStyle
	// renamed says the tool was already renamed in this step.
	renamed bool
	// validator checks documented defaults.
	validator *validate.Validator
}

// hit draws whether one site is changed.
func (p *planner) hit() bool { return p.rate > 0 && p.rng.Float64() < p.rate }

// pick returns a seeded choice among n things.
func (p *planner) pick(n int) int { return p.rng.IntN(n) }

// shuffled returns a seeded permutation of list.
func (p *planner) shuffled(list []string) []string {
	out := append([]string(nil), list...)
	p.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// isToolBench reports whether t is a ToolBench API (named after its title).
func isToolBench(t *toolenv.Tool) bool { return t.Meta["toolbench_name"] != "" }

// protected reports whether an argument belongs to the harness rather than
// the API: the session label of SLOT/SEL tools.
func (p *planner) protected(name string) bool { return p.sessions && name == "label" }

// paramTaken reports whether a parameter name would collide with one of
// tool t: an existing parameter (also when they differ only in case and
// separators), or a name the tool's parameters had in an earlier version.
func (p *planner) paramTaken(t *toolenv.Tool, name, self string) bool {
	if p.history[name] {
		return true
	}
	n := normName(name)
	for _, x := range t.Input.Names() {
		if x == self {
			continue
		}
		if x == name || normName(x) == n {
			return true
		}
	}
	return false
}

// newName picks a new name for old among the rename rules, in a seeded
// order of rules, that ok accepts. It returns "" when none fits.
func (p *planner) newName(old string, ok func(string) bool) (string, string) {
	base, prefix := old, ""
	// ToolBench prefixes reserved words with "is_" ("is_from"): rename
	// the word itself.
	if strings.HasPrefix(old, "is_") && toolbench.ChangeName(strings.TrimPrefix(old, "is_")) == old {
		base, prefix = strings.TrimPrefix(old, "is_"), "is_"
	}
	cands := p.rules.renameCandidates(base)
	for _, rule := range p.shuffled([]string{"synonym", "abbreviation", "case"}) {
		var valid []string
		for _, c := range cands[rule] {
			name := c.name
			if prefix != "" {
				name = toolbench.ChangeName(name) // "since", or "is_from" again
			}
			if name == old || !validIdent(name) || !ok(name) || contains(valid, name) {
				continue
			}
			valid = append(valid, name)
		}
		if len(valid) > 0 {
			return valid[p.pick(len(valid))], rule
		}
	}
	return "", ""
}

// paramNameOK returns the acceptance test of new parameter names of t.
func (p *planner) paramNameOK(t *toolenv.Tool, self string) func(string) bool {
	return func(name string) bool {
		if p.paramTaken(t, name, self) {
			return false
		}
		if isToolBench(t) && toolbench.ParamName(name) != name {
			return false // ToolBench clients send standardized names
		}
		return true
	}
}

// validDefault reports whether v is a valid value of parameter schema s.
func (p *planner) validDefault(name string, s *toolenv.Schema, v any) bool {
	if v == nil {
		return false
	}
	if str, ok := v.(string); ok && str == "" {
		return false
	}
	obj := toolenv.ObjectSchema()
	obj.SetProp(name, s)
	out := p.validator.Args(obj, map[string]any{name: v}, false)
	return len(out.Problems) == 0
}

// seedFor derives the random source of one operator on one tool.
func seedFor(seed uint64, to, tool, op string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", to, tool, op)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
