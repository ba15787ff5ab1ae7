// Package cli holds what toolenv's commands share beyond their own flags:
// usage errors and the exit code every error maps to, the nearest flag or
// command suggested for a mistyped one, and commands that only group
// others refusing a word that names none of them. The commands
// (cmd/toolenv) parse their flags and call package functions; this is the
// part of parsing that is the same for all of them.
package cli
