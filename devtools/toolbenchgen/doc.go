// Package toolbenchgen generates realistic ToolBench-format tool sets at
// any scale, deterministically: the same Options give the same bytes on
// every machine, and a larger set starts with the tools of a smaller one
// (tool i depends only on the seed and i).
//
// The shape follows the 1,920 distinct APIs of StableToolBench's
// solvable test queries (../shared/data/stabletoolbench): the lengths of
// category, tool, API and parameter names, of API and parameter
// descriptions and example values, the counts of required and optional
// parameters, the APIs per tool, the declared parameter types, and the
// template responses (about 60 % an object of type names such as
// {"name": "str", "items": [{"id": "int", "_list_length": 3}]}, a third
// absent, the rest JSON text cut short). Each distribution is kept as the
// quantiles measured on that data and sampled by interpolating between
// them; TestShapeMatchesStableToolBench measures both again and compares.
// Texts are drawn from a small built-in vocabulary, so they read like API
// documentation without copying any.
//
// The output is ToolBench's own layout, toolenv/tools/<Category>/<tool>.json,
// which toolbench.Load reads; the files carry the fields real ToolBench tool
// files have besides the API docs (product_id, home_url, pricing, score, the
// RapidAPI Python snippet in each API's "code"), so that loading costs what
// it costs on the real set.
package toolbenchgen
