// Package toolbench reads and writes the formats of ToolBench and
// StableToolBench: tool documentation (the toolenv/tools/<Category>/<tool>.json
// layout and the api_list embedded in query files), the queries
// themselves, the name normalisation their servers and clients apply
// (standardize, "_for_" function names, "is_" prefixes), and their response
// cache (<category>/<tool>_for_<category>/<api>.json keyed by the Python
// repr of the arguments).
//
// Names follow ToolBench's rapidapi.py and StableToolBench's server
// exactly, so an unmodified StableToolBench client resolves the same APIs
// against toolenv as against its own server.
package toolbench
