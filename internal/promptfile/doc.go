// Package promptfile reads toolenv's versioned prompt files.
//
// A prompt file starts with "# key: value" header lines — name, version
// and source (where the text comes from; prompts a trained model or a
// reference evaluator depends on are reproduced exactly and name their
// origin) — then a line "---"; everything after it, except the file's
// final newline, is the template. Placeholders are written {field}, and
// "{{" and "}}" stand for literal braces, as in Python's str.format.
package promptfile
