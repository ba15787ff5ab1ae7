// Package llmtest runs an OpenAI-compatible chat-completion server on
// loopback for tests: the one test double toolenv allows, standing in for
// a hosted model while speaking the real wire format.
package llmtest
