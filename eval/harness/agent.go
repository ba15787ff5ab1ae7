package harness

import (
	"github.com/toolenv/toolenv/agent"
)

// NewAgent builds the agent cfg names, with the settings a report records.
func NewAgent(cfg *Config) (agent.Agent, map[string]any, error) {
	a := &cfg.Agents
	switch cfg.Agent {
	case "oracle":
		return agent.Oracle{}, nil, nil
	case "direct":
		if a.Style != "" && a.Style != agent.StyleNestful && a.Style != agent.StyleBFCL {
			return nil, nil, invalid("--style %q: want nestful or bfcl", a.Style)
		}
		ex := a.Examples
		if ex == 0 {
			ex = -1
		}
		return agent.Direct{Style: a.Style, NativeTools: a.NativeTools, Examples: ex}, map[string]any{"style": a.Style, "native_tools": a.NativeTools, "examples": a.Examples}, nil
	case "react":
		return agent.ReAct{Budget: a.Budget, MaxObservation: a.MaxObservation}, map[string]any{"budget": a.Budget, "max_observation": a.MaxObservation}, nil
	case "cot":
		return agent.CoT{MaxSteps: a.MaxSteps, Tries: a.Tries, MaxObservation: a.MaxObservation}, map[string]any{"max_steps": a.MaxSteps, "tries": a.Tries, "max_observation": a.MaxObservation}, nil
	case "dfsdt":
		return agent.DFSDT{MaxSteps: a.MaxSteps, Beam: a.Beam, MaxQueries: a.MaxQueries, MaxObservation: a.MaxObservation},
			map[string]any{"max_steps": a.MaxSteps, "beam": a.Beam, "max_queries": a.MaxQueries, "max_observation": a.MaxObservation}, nil
	}
	return nil, nil, invalid("--agent %q: want direct, react, cot, dfsdt or oracle", cfg.Agent)
}
