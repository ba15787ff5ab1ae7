package cli

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
)

// ReportCmd completes cmd (its Use and Short set) into a command with the
// flags of T (def gives their defaults) and --json ("print the what as
// JSON"; what may be empty): it runs run with the options given and
// prints the result to stdout with text, or as JSON. text takes the
// result first, as a method does ((*mapeval.Report).Markdown). A result
// that comes with an interrupt (the part of a long run done) is printed
// before the error is returned; a run interrupted without an error
// returns the context's.
func ReportCmd[T, R any](stdout io.Writer, cmd *cobra.Command, def func() T, what string, run func(ctx context.Context, cfg *T) (R, error), text func(r R, w io.Writer)) *cobra.Command {
	var asJSON bool
	f := Bind(cmd.Flags(), def, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, strings.Replace("print the "+what+" as JSON", "the  ", "", 1))
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		r, err := run(cmd.Context(), f.Value())
		if err != nil && (cmd.Context().Err() == nil || reflect.ValueOf(&r).Elem().IsZero()) {
			return err
		}
		if perr := Show(stdout, asJSON, r, func(w io.Writer) { text(r, w) }); err == nil {
			err = perr
		}
		if err == nil {
			err = cmd.Context().Err() // interrupted: what was done is printed, the exit code says so
		}
		return err
	}
	return cmd
}

// Show writes v to w with text, or as JSON (WriteJSON) with asJSON.
func Show(w io.Writer, asJSON bool, v any, text func(io.Writer)) error {
	if asJSON {
		return WriteJSON(w, v)
	}
	text(w)
	return nil
}

// WriteJSON writes v to w as indented JSON, with no HTML escaping (a
// report's "<" stays "<").
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
