// Package verify checks proposed mappings by execution, with no model:
// it calls a tool and its proposed stand-in with the same sampled
// arguments (translated through the mapping) and compares their answers.
// It is the idea of "API Mapping using Self Reflection in Large Language
// Models" — verify a proposed mapping before using it — done by running
// both tools instead of asking a model to reflect.
//
// Between maps one collection onto another one-to-one, as the structural
// mapper's Between does, and probes where the documentation alone does
// not decide: a tool whose best candidates score within Margin of each
// other (near-duplicate endpoints documented alike), or whose best
// candidate scores under MinScore but at least Floor. A candidate whose
// answers differ from the tool's on some call is dropped; one whose
// answers agree on calls whose answers depend on the arguments is
// preferred (and accepted even under MinScore); probes whose answers are
// all alike (every value absent from the data) decide nothing.
//
// Arguments are sampled from what the tools document (enums, defaults,
// examples) and from what the source API answered: tools that need no
// arguments are called first, and every scalar of their answers is kept
// by the field (or result column) it came in, so that an argument
// described as "superhero.superhero_name" is given names the API knows.
// Answers are compared after translating the stand-in's answer into the
// caller's shape; lists of records are compared as multisets, lists of
// scalars in order.
package verify
