// Package sequence generates API call sequences for user queries as the
// API-sequencing experiments of "API Mapping using Self Reflection in
// Large Language Models" do: retrieve candidate APIs from the index,
// prompt a model few-shot (Appendix A.1.1) or with chain of thought
// (A.1.2) for the sequence [["tool_name", "api_name"], ...], then ask it
// to reflect (A.1.3), told which mappings exist between the APIs of its
// answer and the candidates. Sequences are scored against the gold APIs
// with the set and order precision, recall and F1 of package
// eval/metrics.
//
// Without a model, Baseline scores retrieval alone (the top |gold|
// retrieved APIs as the sequence) and the recall of the candidates, so
// that the retrieval a model depends on is measured too.
package sequence
