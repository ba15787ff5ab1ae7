package virtual

import (
	"fmt"
	"log/slog"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/internal/redact"
)

// Options say which stages to build, in the terms of the serve command's
// flags. The zero value builds the synthesizer alone.
type Options struct {
	// UpstreamURL is StableToolBench's RapidAPI proxy; empty means none.
	UpstreamURL string
	// ToolbenchKey is the proxy's key; empty forwards each caller's.
	ToolbenchKey string
	// UpstreamDirect calls tools' own URLs (Binding.BaseURL).
	UpstreamDirect bool
	// UpstreamTimeout bounds one upstream call; default 15 s.
	UpstreamTimeout time.Duration
	// UpstreamHeaders are added to direct calls (API keys).
	UpstreamHeaders map[string]string
	// Upstream is a real API of another kind (an MCP server,
	// backend/mcpsource); it wins over UpstreamURL and UpstreamDirect.
	Upstream toolenv.Handler
	// Reshape, when set, wraps the simulator and the synthesizer so that
	// their answers take the upstream's shape (an MCP CallToolResult).
	Reshape func(toolenv.Handler) toolenv.Handler

	// LLM is the simulator's endpoint (an *llm.Client); nil (or a nil
	// *llm.Client) means no simulator.
	LLM simulate.ChatModel
	// Model, Prompt ("sft", "cot", "stb") and Timeout configure the
	// simulator; see simulate.Options.
	Model   string
	Prompt  string
	Timeout time.Duration
	// SimulatorBudget bounds the simulator stage of one call, retries
	// included (default 30 s; see Config).
	SimulatorBudget time.Duration
	// OnSimulatorFailure is FallbackSynthesize (default) or
	// FallbackError.
	OnSimulatorFailure string
	// Breakers configure the circuit breakers of the upstream hosts and
	// the model endpoint.
	Breakers BreakerOptions
	// MaxAnswerBytes is the largest answer the upstream or the simulator
	// may give (see Config.MaxAnswerBytes); 0 means no limit.
	MaxAnswerBytes int

	// Examples gives recorded calls (the store) to the simulator's
	// few-shot examples and the synthesizer's values.
	Examples simulate.ExampleSource
	// Tools are the collection's tools: the simulator checks that an
	// answer does not belong to another API of the same group.
	Tools []*toolenv.Tool

	// Logger is passed to every stage; nil discards.
	Logger *slog.Logger
}

// Build builds the stages opts ask for and composes them.
func Build(opts Options) (*Backend, error) {
	switch opts.OnSimulatorFailure {
	case "", FallbackSynthesize, FallbackError:
	default:
		return nil, fmt.Errorf("virtual backend: on simulator failure %q: want %s or %s", opts.OnSimulatorFailure, FallbackSynthesize, FallbackError)
	}
	cfg := Config{Logger: opts.Logger, SimulatorBudget: opts.SimulatorBudget, OnSimulatorFailure: opts.OnSimulatorFailure, Breakers: opts.Breakers,
		MaxAnswerBytes: opts.MaxAnswerBytes}
	if !isNil(opts.Upstream) {
		cfg.Upstream = opts.Upstream
	} else if opts.UpstreamURL != "" || opts.UpstreamDirect {
		up, err := upstream.New(upstream.Config{
			ProxyURL: opts.UpstreamURL, ToolbenchKey: opts.ToolbenchKey, Direct: opts.UpstreamDirect,
			Headers: opts.UpstreamHeaders, Timeout: opts.UpstreamTimeout, Logger: opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("virtual backend: %w", err)
		}
		cfg.Upstream = up
	}
	if !isNil(opts.LLM) {
		sim, err := simulate.New(opts.LLM, simulate.Options{
			Model: opts.Model, Prompt: opts.Prompt, Timeout: opts.Timeout,
			Examples: opts.Examples, Neighbours: simulate.SameGroup(opts.Tools), Logger: opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("virtual backend: %w", err)
		}
		cfg.Simulator = sim
		if e, ok := opts.LLM.(interface{ BaseURL() string }); ok {
			cfg.SimulatorEndpoint = redact.URL(e.BaseURL())
		}
	}
	cfg.Synthesizer = simulate.NewSynthesizer(simulate.SynthOptions{Examples: opts.Examples, Logger: opts.Logger})
	if opts.Reshape != nil {
		if cfg.Simulator != nil {
			cfg.Simulator = opts.Reshape(cfg.Simulator)
		}
		cfg.Synthesizer = opts.Reshape(cfg.Synthesizer)
	}
	return New(cfg), nil
}
