// Package pyfmt writes values the way Python writes them: str() and
// repr() of JSON-decoded values, json.dumps with its default separators
// and ensure_ascii, and str.format with named fields.
//
// The reference evaluators toolenv reproduces (the NESTful scorer,
// StableToolBench's eval_pass_rate.py and its judge prompts) build the
// strings they compare or send to a judge with these Python functions, so
// matching them byte for byte needs the same formatting.
//
// Values are what toolenv.DecodeJSON produces: nil, bool, string,
// json.Number, []any and map[string]any. A json.Number is an int in Python
// when its literal has no '.', 'e' or 'E', and a float otherwise (as
// json.loads decides). Maps have no order in Go; use Ordered where Python's
// insertion order matters.
package pyfmt
