package metrics

import (
	toolenv "github.com/toolenv/toolenv"
)

// The BFCL error categories of a failed direct attempt, in the order
// they are checked: an attempt gets the first that applies (Live
// API-Bench, Appendix G.1.1).
const (
	ErrInstructionAlignment = "instruction_alignment_failure"
	ErrWrongFuncCount       = "wrong_func_count"
	ErrWrongFuncFormat      = "wrong_func_format"
	ErrHallucinatedFuncName = "hallucinated_func_name"
	ErrWrongFuncName        = "wrong_func_name"
	ErrMissingRequiredParam = "missing_required_parameter"
	ErrUnexpectedParam      = "unexpected_param"
	ErrValue                = "value_error"
	// ErrNone is returned when no check fails: the calls match the gold
	// sequence and yet the attempt failed (the environment disagreed).
	ErrNone = "other"
)

// ErrorCategories lists the categories in check order, ErrNone last.
var ErrorCategories = []string{
	ErrInstructionAlignment, ErrWrongFuncCount, ErrWrongFuncFormat, ErrHallucinatedFuncName,
	ErrWrongFuncName, ErrMissingRequiredParam, ErrUnexpectedParam, ErrValue, ErrNone,
}

// Attempt is what a direct attempt produced, as the error checks see it.
type Attempt struct {
	// Parsed is false when no call sequence could be read from the
	// model's output at all.
	Parsed bool
	// Calls are the well-formed calls, in order.
	Calls []toolenv.GoldCall
	// Malformed counts parsed items that are not {name, arguments} calls
	// (a bare string, arguments that are not an object).
	Malformed int
}

// errorCheck is one named rule: fails reports whether the attempt has
// this kind of error.
type errorCheck struct {
	name  string
	fails func(c *errorCase) bool
}

type errorCase struct {
	tools   map[string]*toolenv.Tool
	gold    []toolenv.GoldCall
	a       Attempt
	relabel map[string]string
	known   map[string]bool
}

// errorChecks are the BFCL checks as data, in precedence order.
var errorChecks = []errorCheck{
	{ErrInstructionAlignment, func(c *errorCase) bool { return !c.a.Parsed }},
	{ErrWrongFuncCount, func(c *errorCase) bool { return len(c.a.Calls)+c.a.Malformed != len(c.gold) }},
	{ErrWrongFuncFormat, func(c *errorCase) bool { return c.a.Malformed > 0 }},
	{ErrHallucinatedFuncName, func(c *errorCase) bool {
		for _, p := range c.a.Calls {
			if c.tools[p.Name] == nil {
				return true
			}
		}
		return false
	}},
	{ErrWrongFuncName, func(c *errorCase) bool {
		for i, p := range c.a.Calls {
			if p.Name != c.gold[i].Name {
				return true
			}
		}
		return false
	}},
	{ErrMissingRequiredParam, func(c *errorCase) bool {
		for _, p := range c.a.Calls {
			if in := c.tools[p.Name].Input; in != nil {
				for _, r := range in.Required {
					if _, ok := p.Args[r]; !ok {
						return true
					}
				}
			}
		}
		return false
	}},
	{ErrUnexpectedParam, func(c *errorCase) bool {
		for i, p := range c.a.Calls {
			in := c.tools[p.Name].Input
			for k := range p.Args {
				_, inGold := c.gold[i].Args[k]
				if in.Prop(k) == nil || !inGold {
					return true
				}
			}
		}
		return false
	}},
	{ErrValue, func(c *errorCase) bool {
		for i, p := range c.a.Calls {
			for k, gv := range c.gold[i].Args {
				pv, ok := p.Args[k]
				if !ok || NormalizeValue(pv, c.relabel, c.known) != NormalizeValue(gv, nil, c.known) {
					return true
				}
			}
		}
		return false
	}},
}

// ErrorCategory returns the BFCL error category of a direct attempt at a
// task whose gold sequence is gold, given the tools offered by name. The
// checks run in this order and the first that fails names the category:
//
//   - instruction_alignment_failure: nothing could be parsed;
//   - wrong_func_count: not as many calls as the gold sequence;
//   - wrong_func_format: an item is not a {name, arguments} call;
//   - hallucinated_func_name: a call names a tool that was not offered;
//   - wrong_func_name: a call names another tool than the gold call at
//     its position;
//   - missing_required_parameter: a call omits an argument its tool's
//     schema requires;
//   - unexpected_param: a call passes an argument the gold call does not
//     (BFCL's rule: not in the function's parameters or not in the
//     possible answer);
//   - value_error: an argument's value or type differs from the gold
//     call's, or an argument of the gold call is missing (references to
//     earlier outputs compared by what they point at, as in Positional).
//
// When every check passes it returns ErrNone ("other").
func ErrorCategory(tools map[string]*toolenv.Tool, gold []toolenv.GoldCall, a Attempt) string {
	c := &errorCase{tools: tools, gold: gold, a: a, known: labelSet(gold)}
	if len(a.Calls) == len(gold) {
		pairs := make([]Pair, len(gold))
		for i := range gold {
			pairs[i] = Pair{i, i}
		}
		c.relabel = Relabeling(gold, a.Calls, pairs)
	}
	for _, chk := range errorChecks {
		if chk.fails(c) {
			return chk.name
		}
	}
	return ErrNone
}
