// Package pyfmt writes and reads values the way Python does: repr() and
// str() of JSON-decoded values, json.dumps with its default separators and
// ensure_ascii, str.format with named fields, and the parsing of Python
// literals back into JSON values.
//
// The reference systems toolenv reproduces (StableToolBench's cache keys,
// servers, eval_pass_rate.py and judge prompts, MirrorAPI's prompts, the
// NESTful scorer) build the strings they store, compare or send to a
// model with these Python functions, so matching them byte for byte needs
// the same formatting; and models trained on them answer with Python
// literals, which toolenv must read.
//
// Values are what toolenv.DecodeJSON produces: nil, bool, string,
// json.Number, []any and map[string]any. A json.Number is an int in Python
// when its literal has no '.', 'e' or 'E', and a float otherwise (as
// json.loads decides). A float64 (what encoding/json decodes a number into
// without UseNumber) is taken for an int when it is integral and below
// 1e16, since the JSON it came from most likely wrote one. Maps have no
// order in Go and are written with sorted keys; a Dict keeps insertion
// order, as a Python dict does, and a Tuple is a Python tuple.
//
// Reading comes in two strengths. Parse reads Python literals exactly
// (StableToolBench's str(dict) cache keys) and, with ParseOptions.Calls,
// the call expressions models write ([f(a=1), g(b="x")]). ParseLoose
// reads whatever a model or a cut template wrote as best it can: JSON or
// Python, bare keys, missing or extra commas, unescaped quotes, and text
// that stops in the middle.
package pyfmt
