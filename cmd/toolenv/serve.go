package main

import (
	"context"
	"fmt"
	"net"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/server/guard"
)

func newServeCmd(e *env) *cobra.Command {
	var cf *configFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve collections of APIs over /virtual (StableToolBench), REST, OpenAPI and MCP",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := cf.resolve(e)
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), e, &cfg.Config)
		},
	}
	cf = bindConfig(cmd.Flags(), bindServe)
	return cmd
}

func runServe(ctx context.Context, e *env, cfg *environment.Config) error {
	log := cfg.Logger
	env, err := environment.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer env.Close()
	defer env.WatchInBackground(ctx, cfg.Watch)()
	h, err := env.Handler()
	if err != nil {
		return err
	}
	g, _ := env.Guard()
	sc := &cfg.Server
	epOpts := episode.Options{Max: sc.MaxEpisodes, MaxPerClient: sc.MaxEpisodesPerClient, Idle: sc.EpisodeIdle, MaxSteps: sc.EpisodeMaxSteps,
		MaxStepsCeiling: sc.EpisodeMaxStepsCeiling, MaxCalls: sc.EpisodeMaxCalls, MaxStepBytes: sc.EpisodeMaxStepBytes, RecordBytes: sc.EpisodeRecordBytes, Logger: log}
	if u := cfg.Server.EpisodeJudgeURL; u != "" {
		if cfg.Server.EpisodeJudgeModel == "" {
			return usagef("--episode-judge-url needs --episode-judge-model (the model name the endpoint serves)")
		}
		key := ""
		if cfg.Server.EpisodeJudgeKeyEnv != "" {
			key = e.getenv(cfg.Server.EpisodeJudgeKeyEnv)
		}
		epOpts.Judge = &judge.Judge{Model: llm.New(u, llm.Options{APIKey: key, Logger: log}), ModelName: cfg.Server.EpisodeJudgeModel}
	}
	eps, err := episode.New(ctx, env, epOpts)
	if err != nil {
		return err
	}
	defer eps.Close()
	h = openenv.Mount(h, g, eps, openenv.Options{Version: env.Config.Version, MaxBodyBytes: sc.MaxBody, Logger: log,
		WSIdle: sc.WSIdle, WSMaxLifetime: sc.WSMaxLifetime, MaxWSPerClient: sc.MaxWSPerClient})
	// Loading leaves garbage the size of what it read (decoded files,
	// build maps); give it back before serving rather than holding it
	// resident until the scavenger does.
	debug.FreeOSMemory()
	addr := cfg.Server.Addr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server running there? pass --addr)", addr, err)
	}
	if err := guard.RequireToken(ln.Addr(), g); err != nil {
		ln.Close()
		return cli.Usage(err)
	}
	tools := 0
	for _, c := range env.Collections() {
		tools += len(c.Tools)
		p := env.PolicyOf(c)
		log.Info("collection", "name", c.Name, "kind", c.Kind, "tools", len(c.Tools), "backend", c.Backend.Type, "validation", p.Validation, "feedback", p.Feedback, "mode", p.Mode, "faults", len(p.Faults))
	}
	log.Info("toolenv is serving", "url", "http://"+ln.Addr().String(), "collections", len(env.Collections()), "tools", tools, "store", env.Store.Path(), "version", cfg.Version)
	env.Ready() // the search_tools index is built from now on, in the background
	fmt.Fprintf(e.stderr, "toolenv: serving %d tools on http://%s (POST /virtual, GET /collections, /mcp, /metrics, RL episodes at /openenv); Ctrl-C stops\n", tools, ln.Addr())
	if err := guard.Serve(ctx, ln, h, guard.Limits{MaxConns: cfg.Server.MaxConns, MaxConnsPerClient: cfg.Server.MaxConnsPerClient,
		ReserveConns: cfg.Server.ReserveConns, HeaderTimeout: cfg.Server.HeaderTimeout, Logger: log}); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}
