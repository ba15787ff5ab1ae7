// Package openai converts toolenv tools to and from the OpenAI
// function-calling wire format (the "tools" array of a chat completion
// request). It holds conversion functions only, no HTTP.
package openai
