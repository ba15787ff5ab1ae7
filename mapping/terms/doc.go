// Package terms normalises the words of tool, parameter and field names
// and of descriptions so that they can be compared: names are split at
// case changes, digits and separators (camelCase, snake_case, kebab-case
// and "HTTPServer" all split alike), abbreviations are expanded
// ("qty" → quantity), plurals and verb endings are stripped, and
// synonyms are replaced by one canonical word of their group ("fetch",
// "retrieve" → get).
//
// The vocabulary (vocab.go) is data: abbreviations and synonym groups
// written for API vocabulary. It is deliberately independent of the
// synonym table drift uses to rename parameters, so that measuring the
// structural mapper against drift ground truth does not grade a table
// against itself.
package terms
