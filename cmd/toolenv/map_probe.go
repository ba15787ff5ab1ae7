package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/index"
	"github.com/toolenv/toolenv/mapping/probe"
	"github.com/toolenv/toolenv/store"
)

// modelFlags say which chat model a map command talks to, and whether its
// exchanges are recorded or replayed.
type modelFlags struct {
	url, model, keyEnv string
	timeout            time.Duration
	store              string
	record, replay     bool
	temperature        float64
	seed               int64
}

func (f *modelFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "llm-url", "", "OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:8000/v1 (required unless --replay)")
	fs.StringVar(&f.model, "model", "", "model name (required)")
	fs.StringVar(&f.keyEnv, "llm-key-env", "OPENAI_API_KEY", "environment variable holding the endpoint's API key")
	fs.DurationVar(&f.timeout, "llm-timeout", 120*time.Second, "timeout of one model request")
	fs.StringVar(&f.store, "store", environment.Default().Store, "database the model's answers are recorded in (with --record or --replay)")
	fs.BoolVar(&f.record, "record", false, "record every model exchange in --store")
	fs.BoolVar(&f.replay, "replay", false, "answer every model request from --store, with no network")
	fs.Float64Var(&f.temperature, "temperature", 0, "sampling temperature")
	fs.Int64Var(&f.seed, "seed", 0, "seed sent with every request")
}

// client returns the chat client and a closer for its records.
func (f *modelFlags) client(cmd *cobra.Command, e *env) (*llm.Client, io.Closer, error) {
	if f.model == "" {
		return nil, nil, usagef("--model is required (the model name the endpoint serves)")
	}
	if f.url == "" && !f.replay {
		return nil, nil, usagef("--llm-url is required (an OpenAI-compatible endpoint), or --replay to answer from recorded exchanges")
	}
	opts := llm.Options{APIKey: e.getenv(f.keyEnv), Timeout: f.timeout, Logger: e.logger(), Replay: f.replay}
	var closer io.Closer = io.NopCloser(nil)
	if f.record || f.replay {
		st, err := store.Open(cmd.Context(), f.store, store.Options{Logger: e.logger()})
		if err != nil {
			return nil, nil, fmt.Errorf("%w (pass --store PATH)", err)
		}
		opts.Recorder, closer = st, st
	}
	url := f.url
	if url == "" {
		url = "http://replay.invalid/v1"
	}
	return llm.New(url, opts), closer, nil
}

func newMapProbeCmd(e *env) *cobra.Command {
	var (
		mf         modelFlags
		indexPath  string
		queries    string
		out        string
		k, limit   int
		noReflect  bool
		neighbours int
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Map APIs with an LLM and self-reflection: per query, retrieve the top tools and ask which are equivalent",
		Long: `For each query: retrieve the top --k tools from the index (plus operation-graph
neighbours), ask the model which of them are functionally equivalent and how their
fields correspond (with its reasoning), then ask it to criticise and revise its
answer (self-reflection). Every mapping keeps its provenance (llm, reflection) and
reasoning; answers that are not valid mapping JSON are repaired or recorded as
failed. The output file is what "toolenv map review" shows.`,
		Example: `  toolenv map probe --index map.db --queries ../shared/data/stabletoolbench/solvable_queries/test_instruction/G1_instruction.json \
      --llm-url http://127.0.0.1:8000/v1 --model mistral-large --limit 100 --out probe.json --record`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if queries == "" || out == "" {
				return usagef("--queries and --out are required")
			}
			qs, err := probe.LoadQueries(queries)
			if err != nil {
				return usageError{err}
			}
			if limit > 0 && len(qs) > limit {
				qs = qs[:limit]
			}
			ix, err := index.Open(ctx, indexPath, index.OpenOptions{Logger: e.logger()})
			if err != nil {
				return toolenv.Errorw(toolenv.StatusNotFound, "", "%v", err)
			}
			defer ix.Close()
			client, closer, err := mf.client(cmd, e)
			if err != nil {
				return err
			}
			defer closer.Close()
			set := ix.Mappings()
			opts := probe.Options{Model: mf.model, K: k, NoReflection: noReflect, Evidence: set, Temperature: mf.temperature, Seed: mf.seed, Logger: e.logger()}
			if neighbours > 0 {
				g := graph.OfTools(ix.Tools()).Neighbours
				opts.Neighbours, opts.MaxNeighbours, opts.Tool = g, neighbours, ix.Tool
			}
			p := probe.New(client, probe.IndexRetriever{Index: ix}, opts)
			bar := progress.New(e.stderr, len(qs), "probe")
			results := p.RunAll(ctx, qs, func(done, total int) { bar.Add(1) })
			bar.Finish()
			f := probe.NewFile(mf.model, results, ix.Tool, set)
			if err := probe.WriteFile(out, f); err != nil {
				return err
			}
			sum := probe.Summarise(results)
			if asJSON {
				return writeJSON(e.stdout, sum)
			}
			sum.Markdown(e.stdout, out)
			return ctx.Err()
		},
	}
	mf.register(cmd.Flags())
	cmd.Flags().StringVar(&indexPath, "index", defaultIndexPath(), "the tool index (from toolenv map index)")
	cmd.Flags().StringVar(&queries, "queries", "", "queries: tasks (.jsonl), a StableToolBench query file (.json) or one query per line")
	cmd.Flags().StringVar(&out, "out", "", "write the probe file (results, candidates' documentation) here")
	cmd.Flags().IntVarP(&k, "top", "k", 10, "tools retrieved per query")
	cmd.Flags().IntVar(&limit, "limit", 0, "probe only the first N queries")
	cmd.Flags().BoolVar(&noReflect, "no-reflection", false, "skip the self-reflection pass")
	cmd.Flags().IntVar(&neighbours, "neighbours", 0, "add up to N operation-graph neighbours of the retrieved tools to each prompt")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}
