// Package cli holds what toolenv's commands share beyond their own flags:
// usage errors and the exit code every error maps to, the nearest flag or
// command suggested for a mistyped one, commands that only group others
// refusing a word that names none of them, a library's options struct
// bound to flags (Bind: defaults < --config file < flags), and a command
// that runs one package function and prints its report as text or JSON
// (ReportCmd). The commands
// (cmd/toolenv) parse their flags and call package functions; this is the
// part of parsing that is the same for all of them.
package cli
