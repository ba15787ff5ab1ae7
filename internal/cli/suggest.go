package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/internal/configfile"
)

// SuggestFlag rewrites a flag error of command c for the user, as a
// usage error: an unknown flag gets the command's flag nearest to it
// ("unknown flag: --colection" → did you mean --collection?) or where the
// flags are listed; a value a flag refuses is reported by its check
// alone, which names the valid values and hides credentials (pflag's
// message repeats the value as given). Give it to cobra with
// SetFlagErrorFunc.
func SuggestFlag(c *cobra.Command, err error) error {
	return UsageError{suggestFlag(c, err)}
}

func suggestFlag(c *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		if bad.GetFlag().Value.Type() == "string" { // only a checked string flag refuses a value
			return fmt.Errorf("--%s: %w", bad.GetFlag().Name, errors.Unwrap(bad))
		}
		return err
	}
	// A word before the flag that is no subcommand: the command meant is
	// the nearest one ("eval scor --in F"), whose flags these may be.
	if args := c.Flags().Args(); len(args) > 0 && c.HasSubCommands() {
		if e := UnknownCommand(c, args[0]); e != nil {
			return e
		}
	}
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) || !strings.HasPrefix(err.Error(), "unknown flag: --") {
		return err
	}
	name := unknown.GetSpecifiedName()
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	if near := configfile.Nearest(name, names); near != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, near)
	}
	return fmt.Errorf("%w (%s --help lists its flags)", err, c.CommandPath())
}

// UnknownCommand is the usage error of a word that names none of c's
// subcommands, with the nearest ones; nil when word names one.
func UnknownCommand(c *cobra.Command, word string) error {
	var names []string
	for _, s := range c.Commands() {
		if s.Name() == word || slices.Contains(s.Aliases, word) {
			return nil
		}
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q", word, c.CommandPath())
	near := c.SuggestionsFor(word)
	if n := configfile.Nearest(word, names); n != "" && !slices.Contains(near, n) {
		near = append([]string{n}, near...)
	}
	if len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	} else {
		msg += fmt.Sprintf(" (%s --help lists its commands)", c.CommandPath())
	}
	return UsageError{errors.New(msg)}
}

// RefuseUnknownCommands makes every command below c that only groups
// others (no Run of its own) refuse a word that names none of them, as a
// usage error with the nearest ones, instead of printing its help and
// exiting 0; with no word it prints its help.
func RefuseUnknownCommands(c *cobra.Command) {
	for _, s := range c.Commands() {
		RefuseUnknownCommands(s)
	}
	if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return UnknownCommand(cmd, args[0])
		}
	}
}
