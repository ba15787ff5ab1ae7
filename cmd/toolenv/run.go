package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/internal/redact"
)

// env is what every command gets: its streams and a logger. Commands read
// configuration from their flags and from getenv, never from globals.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// logLevel is set by the --log-level flag before a command runs.
	logLevel slog.LevelVar
	logJSON  bool
	// command is the command line, redacted (redact.Args), as run
	// records and reports keep it.
	command []string
}

// logger returns the logger commands log with, on stderr.
func (e *env) logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: &e.logLevel}
	if e.logJSON {
		return slog.New(redact.Handler(slog.NewJSONHandler(e.stderr, opts)))
	}
	return slog.New(redact.Handler(slog.NewTextHandler(e.stderr, opts)))
}

// Run runs the toolenv command line with args (without the program name)
// and returns the process exit code. Tests drive the whole binary through
// it in-process.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, command: redact.Args(append([]string{"toolenv"}, args...))}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "toolenv: %s\n", redact.Text(err.Error()))
	return exitCode(err)
}

// exitCode maps an error to the process exit code: 2 for usage errors and
// invalid input, 3 for missing things, 4 for upstream or backend failures,
// 130 for an interrupt, 1 for anything else.
func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "accepts ") {
		return 2
	}
	switch toolenv.StatusOf(err) {
	case toolenv.StatusInvalidArguments, toolenv.StatusBadRequest, toolenv.StatusTooLarge:
		return 2
	case toolenv.StatusNotFound, toolenv.StatusUnknownTool:
		return 3
	case toolenv.StatusUpstreamError, toolenv.StatusUnavailable, toolenv.StatusTimeout, toolenv.StatusRateLimited:
		return 4
	case toolenv.StatusCanceled:
		return 130
	}
	return 1
}

// usageError marks a mistake in how a command was invoked.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func newRootCmd(e *env) *cobra.Command {
	var level string
	root := &cobra.Command{
		Use:           "toolenv",
		Short:         "A stable, live and evolving world of APIs for tool-using LLM agents",
		Version:       buildinfo.Read().String(), // --version prints what toolenv version prints
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// slog's level names, in any case: debug, info, warn, error.
			if err := e.logLevel.UnmarshalText([]byte(cmp.Or(level, "info"))); err != nil {
				return oneOf("log-level", level, "debug", "info", "warn", "error")
			}
			return nil
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().StringVar(&level, "log-level", "info", "log level: debug, info, warn or error")
	root.PersistentFlags().BoolVar(&e.logJSON, "log-json", false, "log as JSON lines instead of text")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{suggestFlag(c, err)} })
	// One line per command; each command lives in its own file.
	root.AddCommand(
		newVersionCmd(e),
		newServeCmd(e),
		newConfigCmd(e),
		newMCPCmd(e),
		newCacheCmd(e),
		newStoreCmd(e),
		newBenchCmd(e),
		newBuildCmd(e),
		newMapCmd(e),
		newEvalCmd(e),
		newDriftCmd(e),
		newPerturbCmd(e),
		newMirrorCmd(e),
		newEpisodesCmd(e),
	)
	groupsRefuseUnknownCommands(root)
	return root
}

// suggestFlag rewrites a flag error for the user: an unknown flag gets
// the command's flag nearest to it ("unknown flag: --colection" → did you
// mean --collection?) or where the flags are listed; a value a flag
// refuses is reported by its check alone, which names the valid values
// and hides credentials (pflag's message repeats the value as given).
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
		if e := unknownCommand(c, args[0]); e != nil {
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

// unknownCommand is the usage error of a word that names none of c's
// subcommands, with the nearest ones; nil when word names one.
func unknownCommand(c *cobra.Command, word string) error {
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
	return usageError{errors.New(msg)}
}

// groupsRefuseUnknownCommands makes every command that only groups
// others (no Run of its own) refuse a word that names none of them, as a
// usage error with the nearest ones, instead of printing its help and
// exiting 0; with no word it prints its help.
func groupsRefuseUnknownCommands(c *cobra.Command) {
	for _, s := range c.Commands() {
		groupsRefuseUnknownCommands(s)
	}
	if c.HasParent() && c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownCommand(cmd, args[0])
		}
	}
}

// oneOf checks a flag's value against the values it takes, for flags not
// bound from a struct's tags: the error lists them and names the nearest.
func oneOf(flag, value string, valid ...string) error {
	if slices.Contains(valid, value) {
		return nil
	}
	msg := fmt.Sprintf("--%s %q: want %s", flag, value, strings.Join(valid, ", "))
	if near := configfile.Nearest(value, valid); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return usageError{errors.New(msg)}
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print toolenv's version, the commit it was built from and the Go toolchain",
		Example: `  toolenv version
  toolenv version --json`,
		Long: `Print toolenv's version from the module build information: a release version, or
a pseudo-version for a build from a checkout, with the VCS revision it was built
from (and whether the checkout was modified) and the Go toolchain. Every report,
manifest and evaluation summary records the same version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(e.stdout, buildinfo.Read())
			}
			fmt.Fprintln(e.stdout, buildinfo.Read())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
