// Package parse reads function calls out of what models really write:
// native tool_calls, a JSON list or object, JSON lines, Python call syntax
// ([f(a=1), g(b="x")], BFCL's format), Python literals ([{'name': ...}]),
// <tool_call>...</tool_call> blocks (Qwen, Hammer), fenced ```json blocks
// (DeepSeek), with prose before or after, and the Thought / Action /
// Action Input / Final Answer format of a ReAct agent.
//
// It follows the staged procedure of Live API-Bench's Appendix G: valid
// JSON or JSON lines first, then Python syntax, then XML-style tags, with
// prepended text and extra brackets handled. Output from which no call can
// be read is an error wrapping ErrUnparseable — a BFCL
// instruction_alignment_failure — never a panic: every parser here is
// fuzzed.
package parse
