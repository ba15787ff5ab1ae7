package toolbench

import "github.com/toolenv/toolenv/internal/pyfmt"

// ParsePyLiteral parses a Python literal as Python's str() writes a value
// that json.loads produced: dicts, lists, tuples, str, int, float, True,
// False and None. StableToolBench keys its cache by str(tool_input).
// Numbers come back as json.Number, floats as the float64 json.loads
// made; tuples as lists. Values JSON cannot hold (inf, nan, bytes, sets)
// are errors (a *pyfmt.SyntaxError saying where).
func ParsePyLiteral(s string) (any, error) {
	return pyfmt.Parse(s, pyfmt.ParseOptions{FloatValues: true})
}

// PyRepr writes v as Python's str() writes the value json.loads would
// make of it: single-quoted strings (double-quoted when they hold a single
// quote and no double quote), True/False/None, floats in Python's repr,
// dict keys in sorted order.
func PyRepr(v any) string { return pyfmt.Repr(v) }
