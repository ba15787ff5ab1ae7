package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/mapping/review"
	"github.com/toolenv/toolenv/server/guard"
)

func newMapReviewCmd(e *env) *cobra.Command {
	var f *cli.Options[review.Config]
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Serve the annotation page: review proposed mappings per query with the keyboard, export reviewed ground truth",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := f.Value()
			r, tokens, err := review.Open(cfg, e.getenv, e.logger())
			if err != nil {
				return err
			}
			defer r.Close()
			if cfg.Export != "" || cfg.ExportSet != "" {
				ex := r.Export()
				if err := ex.Write(cfg.Export, cfg.ExportSet); err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, ex)
				return nil
			}
			return serveReview(cmd.Context(), e, r, cfg.Addr, cfg.Journal, tokens)
		},
	}
	f = cli.Bind(cmd.Flags(), cli.Defaults[review.Config], false)
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
