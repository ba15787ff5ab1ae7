// Package simulate answers calls to APIs that cannot (or should not) be
// called for real: by asking an LLM to play the API (Simulator), or, with
// no LLM at all, by synthesizing an answer from the API's documentation
// and recorded calls (Synthesizer).
//
// The Simulator speaks to any OpenAI-compatible endpoint (vLLM serving
// MirrorAPI, Ollama, OpenAI) with the prompts models were trained or
// evaluated with, reproduced exactly: MirrorAPI's SFT prompt (default)
// and chain-of-thought prompt, and StableToolBench's prompt for general
// models (prompts.go names their sources). The prompt shows the full API
// documentation with its parameters and up to five recorded calls of the
// same API, chosen by similarity to the call and kept within
// StableToolBench's 2,048-character example budget. Requests are sent at
// temperature 0 with a seed. The answer must be {"error", "response"}
// JSON; what can be repaired is (code fences, prose around the object,
// Python literals, unescaped quotes, truncation), an unreadable answer is
// asked again, and a failure is a Result saying so (Meta "simulator_failure").
// A successful answer is validated (checks in check.go: not empty, not the
// system prompt's own example, in the documented shape, not another API's
// answer); one that fails is still returned but carries a warning and
// Meta "cacheable" = "false", so the cache never keeps it.
//
// The Synthesizer is deterministic: the same call and the same records
// give the same bytes. It answers a call identical to a documented or
// recorded one with that response; otherwise it fills the documented
// response shape (ToolBench's template_response, interpreted in
// shape.go, or the output JSON Schema) with values recorded at the same
// place in other responses of the API, values echoed from arguments of
// the same name, or plausible made-up values (generate.go); with no shape
// (or an empty one, "{}"), it answers the most similar recorded call's
// response with that call's argument values replaced by this call's
// wherever they appear (adapt.go), else a generic placeholder.
// Its results are marked: Source synthesizer, a warning, never cached.
package simulate
