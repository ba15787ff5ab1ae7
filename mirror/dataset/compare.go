package dataset

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror"
)

// CompareConfig configures the comparison of real, cached and simulated
// environments (MirrorAPI §4.3): the flags of "toolenv mirror compare"
// besides the dataset's. The queries are written by the dataset's model
// (Config.Model), the judge is its JudgeModel.
type CompareConfig struct {
	Agents      []string `json:"agents" flag:"agent" default:"cot,dfsdt" help:"agent to run: cot, dfsdt or react (repeatable; the paper's CoT and DFS)"`
	AgentURL    string   `json:"agent_url" flag:"agent-url" url:"http" help:"OpenAI-compatible endpoint of the agents' models (default --llm-url)"`
	AgentKeyEnv string   `json:"agent_key_env" flag:"agent-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the agents' API key"`
	AgentModels []string `json:"agent_models" flag:"agent-model" help:"a model the agents run with (repeatable; the paper: gpt-4o, gpt-4o-mini, ToolLLaMA-2)"`
	SimURL      string   `json:"sim_url" flag:"sim-url" url:"http" help:"OpenAI-compatible endpoint of the simulator of the simulated environment (e.g. MirrorAPI on vLLM); empty: the offline synthesizer"`
	SimModel    string   `json:"sim_model" flag:"sim-model" help:"the simulator's model name"`
	SimPrompt   string   `json:"sim_prompt" flag:"sim-prompt" default:"sft" help:"the simulator's prompt: sft, cot (MirrorAPI) or stb (StableToolBench's, for general models such as gpt-4o)"`
	JudgeURL    string   `json:"judge_url" flag:"judge-url" url:"http" help:"endpoint of the SoPR/FAC judge (default --llm-url); the judge is --judge-model"`
	Queries     int      `json:"queries" flag:"queries" default:"20" help:"queries to write (Table 14); the paper kept 158"`
	Concurrency int      `json:"concurrency" flag:"concurrency" default:"4" help:"episodes at once"`
}

// DefaultCompare returns the comparison's defaults: the paper's agents,
// 20 queries.
func DefaultCompare() CompareConfig {
	return configfile.Default[CompareConfig]()
}

// checkCompare reports a configuration that cannot compare: the queries
// need a model (or its records).
func checkCompare(cfg *Config) error {
	if cfg.Model.URL == "" && !cfg.Model.Replay {
		return usage("--llm-url and --llm-model are required: a model writes the queries (Table 14)")
	}
	return nil
}

// Compare runs the comparison into Out/compare and returns its result
// (compare.md there holds the table).
func (d *Dataset) Compare(ctx context.Context, cc *CompareConfig) (*mirror.CompareStats, string, error) {
	if err := checkCompare(&d.cfg); err != nil {
		return nil, "", err
	}
	m := d.cfg.Model
	agentURL := cc.AgentURL
	if agentURL == "" && !m.Replay {
		agentURL = m.URL
	}
	opts := mirror.CompareOptions{Out: filepath.Join(d.cfg.Out, "compare"), Queries: cc.Queries, Seed: d.cfg.Seed, Concurrency: cc.Concurrency}
	for _, name := range cc.Agents {
		switch name {
		case "cot":
			opts.Agents = append(opts.Agents, agent.CoT{})
		case "dfsdt", "dfs":
			opts.Agents = append(opts.Agents, agent.DFSDT{})
		case "react":
			opts.Agents = append(opts.Agents, agent.ReAct{})
		default:
			return nil, "", usage("--agent %q: use cot, dfsdt or react (the paper runs CoT and DFS)", name)
		}
	}
	if len(cc.AgentModels) == 0 {
		return nil, "", usage("--agent-model is required (repeatable): the models the agents run with, e.g. gpt-4o")
	}
	ac := d.Client(agentURL, "", cc.AgentKeyEnv)
	for _, name := range cc.AgentModels {
		opts.Models = append(opts.Models, mirror.AgentModel{Name: name, Model: ac})
	}
	var err error
	if cc.SimURL != "" || (m.Replay && cc.SimModel != "") {
		opts.Simulated, err = mirror.SimulatedInvoker(d.Collections(), d.Client(cc.SimURL, m.APIKey, m.KeyEnv), cc.SimModel, cc.SimPrompt)
	} else {
		opts.Simulated, err = mirror.SimulatedInvoker(d.Collections(), nil, "", "")
	}
	if err != nil {
		return nil, "", usage("%v", err)
	}
	if m.JudgeModel != "" {
		opts.Judge = &judge.Judge{Model: d.Client(cmp.Or(cc.JudgeURL, m.URL), m.APIKey, m.KeyEnv), ModelName: m.JudgeModel, Seed: d.cfg.Seed}
	}
	// Every model is asked once before the first query (a replay checks
	// nothing): the query writer, each agent model, the simulator, the
	// judge.
	qc, _ := d.Engine.Model.(*llm.Client)
	eps := []llm.Endpoint{{Role: "--llm-url, --llm-model", Client: qc, Model: m.Name}}
	for _, name := range cc.AgentModels {
		eps = append(eps, llm.Endpoint{Role: "--agent-url, --agent-model", Client: ac, Model: name})
	}
	if cc.SimURL != "" {
		eps = append(eps, llm.Endpoint{Role: "--sim-url, --sim-model", Client: d.Client(cc.SimURL, m.APIKey, m.KeyEnv), Model: cc.SimModel})
	}
	if opts.Judge != nil {
		jc, _ := opts.Judge.Model.(*llm.Client)
		eps = append(eps, llm.Endpoint{Role: "--judge-url, --judge-model", Client: jc, Model: m.JudgeModel})
	}
	if err := llm.Preflight(ctx, eps...); err != nil {
		return nil, "", err
	}
	cs, err := d.Engine.Compare(ctx, opts)
	if errors.Is(err, mirror.ErrInterrupted) {
		err = &toolenv.Error{Status: toolenv.StatusCanceled, Message: "mirror compare", Err: err}
	}
	return cs, opts.Out, err
}

// Compare opens the dataset cfg describes, runs the comparison cc
// configures (Dataset.Compare) and closes the dataset.
func Compare(ctx context.Context, cfg *Config, cc *CompareConfig, opts Options) (*mirror.CompareStats, string, error) {
	if err := checkCompare(cfg); err != nil {
		return nil, "", err
	}
	d, err := Open(ctx, cfg, opts)
	if err != nil {
		return nil, "", err
	}
	defer d.Close()
	return d.Compare(ctx, cc)
}
