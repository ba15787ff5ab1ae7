// Package configfile binds a Go struct to a configuration file (YAML or
// JSON), to command-line flags and to a JSON Schema, from the struct's
// tags alone, so that adding a field to a configuration is a one-place
// change.
//
// The tags of a field:
//
//	json:"key"         the key in the file, the JSON Schema and printed configurations (required; "-" skips the field)
//	flag:"name"        the command-line flag that sets it (optional; "name,comma" splits a list flag on commas)
//	short:"k"          the flag's one-letter shorthand (-k)
//	help:"text"        what it does: the flag's usage and the schema's description
//	default:"value"    the value a command starts from (the flag's default)
//	enum:"a,b,c"       the values it accepts
//	url:"http"         an http:// or https:// URL when set (a value without its scheme is refused
//	                   with the URL it should have been)
//	path:"file"        a file or folder: relative paths in a file resolve against the file's folder
//	                   ("named" also accepts NAME=FILE)
//	secret:"key_env"   the value is a credential: written inline in a file it is accepted with a
//	                   warning naming the key that should hold the variable's name instead, and
//	                   it is never printed
//
// A struct-typed field is a section (a nested mapping, with its own help
// tag); an embedded struct's fields are inlined. Leaf fields are string,
// bool, int, int64, uint64, float64, time.Duration (written "90s", "2m") or
// []string.
//
// Precedence is defaults < file < flags: [Load] decodes a file over a
// value holding the defaults, and [Flags.Apply] then sets every flag the
// user gave, logging at debug level where a flag overrides a different
// value from the file.
package configfile
