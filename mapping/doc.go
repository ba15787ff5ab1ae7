// Package mapping links functionally equivalent tools and their fields:
// the API-mapping task of "API Mapping using Self Reflection in Large
// Language Models", made into something the environment and its agents
// use.
//
// A Mapping says that one tool can stand in for another (From → To) and
// how their fields correspond: which argument of From becomes which
// argument of To (Inputs), which response field of To carries what a
// response field of From carried (Outputs), and which arguments To needs
// fixed (Fixed) or From must have (When) for the correspondence to hold.
// Every mapping keeps its provenance (structural, llm, reflection, human)
// and the reasoning behind it. A Set holds the mappings of a world of
// tools and the clusters of alternatives they form, and reads and writes
// them as JSON.
//
// Translate turns a call written for From into one for To, and
// TranslateResponse turns To's response back into the shape From's
// callers expect; failover (package mapping/failover) and drift repair
// (mapping/repair) are built on the two.
//
// The subpackages hold the parts of the pipeline:
//
//   - terms: name and description normalisation (tokens, abbreviations,
//     synonyms, stems) shared by everything that compares text;
//   - index: the tool index (SQLite FTS5 BM25 plus vectors searched
//     exactly with chromem-go) and hybrid search that returns each tool
//     with its alternatives;
//   - embed: embedders for the index, a deterministic offline one and
//     any OpenAI-compatible endpoint;
//   - structural: mapping with no model, from parameters, output fields,
//     types, descriptions and observed values;
//   - graph: the operation graph and the clusters of alternatives;
//   - probe: LLM mapping with a self-reflection pass;
//   - truth: ground truth (drift manifests, human reviews) and
//     precision/recall/F1 of tool pairs and field alignments;
//   - failover, repair: the pipeline middleware that uses mappings;
//   - sequence: API sequencing with mapping-aware self-reflection;
//   - review: the annotation web page.
package mapping
