// Package upstream passes a call to a real HTTP API and classifies what
// came back.
//
// Two ways of reaching an API are supported:
//
//   - StableToolBench's RapidAPI proxy: a POST of
//     {category, tool_name, api_name, tool_input, strip, toolbench_key} to a
//     configured URL, answered with {"error": ..., "response": ...}
//     (StableToolBench server/main.py, toolbench/inference/server.py).
//   - the tool's own URL: Tool.Binding gives the base URL, method and path,
//     and Binding.ParamIn says where each argument goes.
//
// Every answer, and every failure to get one, is classified by a table of
// named rules (Rules) that follows MirrorAPI's Appendix D and
// StableToolBench's check_result: not connected, not found, parameter
// change, parsing error, not authorised, other, success. The class is
// recorded in Result.Meta["upstream_class"] and mapped to a
// toolenv.Status. Only successes may be cached: every failed Result has
// Meta["cacheable"] = "false", and its Status is not StatusOK, so a caller
// composing backends (see backend/virtual) falls through to simulation.
package upstream
