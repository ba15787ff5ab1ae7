package parse

import "github.com/toolenv/toolenv/internal/pyfmt"

// pythonSyntax is what models write in Python: literals and calls with
// keyword arguments, [f(a=1), g(b="x")]; floats keep their digits.
var pythonSyntax = pyfmt.ParseOptions{Calls: true}

// parsePython parses s as one Python expression, ignoring surrounding
// space. Values come back as toolenv.DecodeJSON gives them: string,
// json.Number, bool, nil, []any, map[string]any, and *pyfmt.Call for
// calls.
func parsePython(s string) (any, error) { return pyfmt.Parse(s, pythonSyntax) }

// parsePythonPrefix parses one Python expression at the start of s and
// returns it with the number of bytes it used.
func parsePythonPrefix(s string) (any, int, error) { return pyfmt.ParsePrefix(s, pythonSyntax) }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }
