package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
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
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			// slog's level names, in any case: debug, info, warn, error.
			if err := e.logLevel.UnmarshalText([]byte(cmp.Or(level, "info"))); err != nil {
				return usagef("--log-level %q: want debug, info, warn or error", level)
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&level, "log-level", "info", "log level: debug, info, warn or error")
	root.PersistentFlags().BoolVar(&e.logJSON, "log-json", false, "log as JSON lines instead of text")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
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
	)
	return root
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print toolenv's version, the commit it was built from and the Go toolchain",
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
