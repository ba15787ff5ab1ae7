// Package demo holds the collection toolenv serves when it is given
// nothing else: six small APIs written for the project (current weather
// and forecasts, a book catalogue, currency rates), each documented with
// input and output schemas and examples, plus four tasks over them.
//
// The collection uses the virtual backend, so with no LLM configured the
// offline synthesizer answers from the examples and schemas.
package demo
