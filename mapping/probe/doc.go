// Package probe maps APIs with a language model and self-reflection, as
// "API Mapping using Self Reflection in Large Language Models" does:
// for each query, retrieve the top tools from the index, ask the model in
// one prompt which of them are equivalent and how their fields
// correspond, then ask it to criticise and revise its answer.
//
// Every mapping keeps its provenance (llm for the first answer,
// reflection for the revised one) and the model's reasoning. Model output
// that is not valid mapping JSON is repaired when it can be (code fences,
// prose around the object, trailing commas, Python literals), else the
// model is asked once more with the parse error, else the step is recorded
// as failed with the raw text — a query never fails the run. Mappings
// naming tools that were not candidates, or fields the tools do not have,
// are dropped and the drops noted.
//
// A File holds the probe's results with the documentation of every
// candidate tool; it is what the review page (package review) shows.
package probe
