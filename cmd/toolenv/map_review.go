package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/mapping/probe"
	"github.com/toolenv/toolenv/mapping/review"
	"github.com/toolenv/toolenv/server/guard"
)

func newMapReviewCmd(e *env) *cobra.Command {
	var (
		probePath, journal, addr, annotator string
		exportTo, exportSet                 string
		tokenEnv                            string
		allowedHosts                        []string
	)
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Serve the annotation page: review proposed mappings per query with the keyboard, export reviewed ground truth",
		Long: `Serve a web page (everything embedded; nothing is fetched from the internet) where a
person reviews, query by query, the candidate tools and the mappings proposed for
them (by the model, after self-reflection, structurally) with their reasoning, and
accepts, rejects or corrects each. Keys: j/k move, a accept, r reject, c correct,
m add, n/p next/previous query, e export, ? help.

Every annotation is appended to --journal and synced before it is acknowledged, so
nothing reviewed is lost; disagreeing annotators are kept both and flagged. With
--export (or --export-set), write the reviewed ground truth (or the agreed mappings
as a mappings file, usable by --failover) and exit.`,
		Example: `  toolenv map review --probe probe.json --annotator alice
  toolenv map review --probe probe.json --export reviewed.json --export-set human-mappings.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if probePath == "" {
				return usagef("--probe is required (a file written by toolenv map probe --out)")
			}
			f, err := probe.ReadFile(probePath)
			if err != nil {
				return usageError{err}
			}
			if journal == "" {
				journal = probePath + ".review.jsonl"
			}
			tokens, err := guard.TokensFromEnv(e.getenv, tokenEnv)
			if err != nil {
				return usageError{err}
			}
			g, err := guard.New(guard.Policy{Login: true, Tokens: tokens, AllowedHosts: allowedHosts, Logger: e.logger()})
			if err != nil {
				return usageError{err}
			}
			r, problems, err := review.New(review.Options{Probe: f, Journal: journal, Annotator: annotator, Logger: e.logger(), Guard: g})
			if err != nil {
				return err
			}
			defer r.Close()
			for _, p := range problems {
				e.logger().Warn("journal line skipped", "err", p)
			}
			if exportTo != "" || exportSet != "" {
				ex := r.Export()
				if err := ex.Write(exportTo, exportSet); err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, ex)
				return nil
			}
			return serveReview(cmd.Context(), e, r, addr, journal, len(tokens) > 0)
		},
	}
	cmd.Flags().StringVar(&probePath, "probe", "", "the probe file to review (toolenv map probe --out)")
	cmd.Flags().StringVar(&journal, "journal", "", "annotations file, appended to (default: PROBE.review.jsonl)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8088", "address to serve the page on")
	cmd.Flags().StringVar(&annotator, "annotator", "", "default annotator name shown in the page")
	cmd.Flags().StringVar(&exportTo, "export", "", "write the reviewed ground truth (JSON) here and exit")
	cmd.Flags().StringVar(&exportSet, "export-set", "", "write the agreed mappings as a mappings file here and exit")
	cmd.Flags().StringVar(&tokenEnv, "auth-token-env", "", "environment variable holding a bearer token programs may use instead of the login link (required when --addr is not a loopback address)")
	cmd.Flags().StringArrayVar(&allowedHosts, "allowed-host", nil, "a Host name the page may be reached by besides loopback names and the server's address (repeatable)")
	return cmd
}

func serveReview(ctx context.Context, e *env, r *review.Reviewer, addr, journal string, tokens bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pass --addr HOST:PORT)", addr, err)
	}
	if guard.Exposed(ln.Addr()) && !tokens {
		ln.Close()
		return usagef("%s is reachable from other machines: set a bearer token with --auth-token-env NAME (export NAME=$(openssl rand -hex 32)), or listen on a loopback address such as 127.0.0.1", ln.Addr())
	}
	fmt.Fprintf(e.stdout, "reviewing at %s (annotations in %s); Ctrl-C stops\n", r.LoginLink("http://"+ln.Addr().String()+"/"), journal)
	fmt.Fprintln(e.stdout, "the link works once: it logs your browser in")
	return guard.Serve(ctx, ln, r.Handler(), guard.Limits{Logger: e.logger(), ShutdownTimeout: 5 * time.Second})
}
