package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/eval/mapeval"
)

func newMapEvalCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure mappings against exact ground truth, and what they are worth at work",
	}
	cmd.AddCommand(newMapEvalDriftCmd(e), newMapEvalSELCmd(e), newMapEvalObfuscationCmd(e), newMapEvalRepairCmd(e), newMapEvalFailoverCmd(e))
	return cmd
}

func newMapEvalDriftCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.DriftConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Map each drifted collection's base version onto its current one and score it against the drift manifest",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			results, err := f.value().Run(cmd.Context(), e.logger(), e.command)
			if err != nil {
				return err
			}
			return show(e, asJSON, results, func(w io.Writer) { mapeval.DriftMarkdown(w, results) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.DriftConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapEvalSELCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.SELConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "sel",
		Short: "Map an NL2SQL build's SEL tools onto its SLOT tools and score them against the SEL tools' own metadata",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.value().Run(cmd.Context())
			if err != nil {
				return err
			}
			return show(e, asJSON, s, func(w io.Writer) { mapeval.SELMarkdown(w, s) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.SELConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}

func newMapEvalObfuscationCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.ObfuscationConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "obfuscation",
		Short: "Map an NL2SQL collection onto its obfuscated variant (FUNC_n, ARG_n) and score it against its mapping file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, orig, obf, err := f.value().Run(cmd.Context())
			if err != nil {
				return err
			}
			return show(e, asJSON, s, func(w io.Writer) { mapeval.ObfuscationMarkdown(w, orig, obf, s) })
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.ObfuscationConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the scores as JSON")
	return cmd
}

// workOptions are the options of the measurements at work: the
// environments they open log at warn level and above.
func workOptions(e *env) mapeval.WorkOptions {
	quiet := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv, logJSON: e.logJSON}
	quiet.logLevel.Set(max(e.logLevel.Level(), slog.LevelWarn))
	return mapeval.WorkOptions{Logger: e.logger(), EnvLogger: quiet.logger(), Getenv: e.getenv, Progress: e.stderr}
}

func newMapEvalRepairCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.RepairConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Completion of calls written against old documentation on a drifted collection, without and with the repair adapter",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := f.value().Run(cmd.Context(), workOptions(e))
			if rep == nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.RepairConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

func newMapEvalFailoverCmd(e *env) *cobra.Command {
	var (
		f      *options[mapeval.FailoverConfig]
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Completion of a collection's tasks when its backend is down, without and with failover to a structurally mapped alternative",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := f.value().Run(cmd.Context(), workOptions(e))
			if rep == nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			rep.Markdown(e.stdout)
			return cmd.Context().Err()
		},
	}
	f = bindOptions(cmd.Flags(), configDefaults[mapeval.FailoverConfig], false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}
