// Package structural maps tools to their functional equivalents with no
// model: it compares tools by their input parameters and output fields
// (normalised names, synonyms and abbreviations, types, descriptions,
// documented and observed values, position) and proposes equivalent
// endpoints with field-to-field alignments and a score.
//
// A Profile is what is compared of one tool: its argument and response
// fields as paths, each with a type, a description and values gathered
// from enums, defaults, example values, documented examples, response
// templates and recorded traffic (Evidence: cache entries). Two fields
// are scored by a weighted mean of the signals both sides have (name
// 0.45, description 0.30, values 0.15, type 0.05, position 0.05); the
// fields of two tools are aligned one-to-one by the Hungarian algorithm.
// Two tools are scored from their names, descriptions (TF-IDF cosine)
// and the quality of their input and output alignments.
//
// A Matcher compares each tool with its most similar candidates only
// (TF-IDF over names, descriptions and field names, through an inverted
// index), so mapping thousands of tools stays fast. All proposes
// alternatives across a world of tools; Between maps one collection onto
// another one-to-one (two versions of an API). A tool that is another
// with one argument fixed (SEL's select_data_equal_to and SLOT's
// filter_data with condition "equal_to") maps with Fixed/When.
package structural
