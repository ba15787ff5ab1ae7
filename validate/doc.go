// Package validate checks a call's arguments against its tool's input
// Schema and explains what is wrong at the feedback level a collection
// asks for.
//
// Two policies:
//
//   - Strict (exact schemas, e.g. the NL2SQL tools): an unknown argument,
//     a value of the wrong type, a value outside its enum or bounds, or a
//     missing required argument is rejected.
//   - Lenient (ToolBench documentation, whose declared types are loose):
//     values are coerced to their declared scalar type where that loses
//     nothing ("5" → 5 for a number, 5 → "5" for a string, "true" → true);
//     unknown arguments and values that cannot be coerced are passed on
//     with a warning, as StableToolBench passed them on. Only a missing
//     required argument is rejected.
//
// It is written here rather than taken from a general JSON Schema library
// because toolenv needs coercion, per-argument problems a model can act on
// ("did you mean `limit`?"), and three feedback levels (none, terse,
// helpful) for schema-drift experiments.
package validate
