package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/cli"
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
	return cli.ExitCode(err)
}

// usagef is a usage error (cli.Usagef: exit code 2).
func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }

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
				return cli.OneOf("log-level", level, "debug", "info", "warn", "error")
			}
			return nil
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().StringVar(&level, "log-level", "info", "log level: debug, info, warn or error")
	root.PersistentFlags().BoolVar(&e.logJSON, "log-json", false, "log as JSON lines instead of text")
	root.SetFlagErrorFunc(cli.SuggestFlag)
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
	addHelp(root)
	cli.RefuseUnknownCommands(root)
	return root
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print toolenv's version, the commit it was built from and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return cli.WriteJSON(e.stdout, buildinfo.Read())
			}
			fmt.Fprintln(e.stdout, buildinfo.Read())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
