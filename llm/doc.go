// Package llm is a small client for OpenAI-compatible chat-completion and
// embedding endpoints (vLLM, Ollama, llama.cpp, OpenAI), with retries and
// record/replay.
//
// It is written for this project rather than taken from a general SDK
// because toolenv needs three things exactly: temperature 0 and a seed sent
// on the wire (some clients drop a zero temperature as "unset"), every
// request and response recorded under a hash of the request so that an
// evaluation can be replayed with no network, and errors that say which
// endpoint failed and what to do about it.
package llm
