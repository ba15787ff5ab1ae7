package harness

import (
	"github.com/toolenv/toolenv/agent"
)

// NewAgent builds the agent cfg names, with the settings a report records.
func NewAgent(cfg *Config) (agent.Agent, map[string]any, error) {
	a := &cfg.Agents
	if a.StrictTools && (cfg.Agent == "react" || cfg.Agent == "oracle") {
		return nil, nil, invalid("--strict-tools: the %s agent offers no tools in its requests (direct with --native-tools, cot and dfsdt do)", cfg.Agent)
	}
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
		if a.StrictTools && !a.NativeTools {
			return nil, nil, invalid("--strict-tools offers the tools in the request's tools field: add --native-tools")
		}
		return agent.Direct{Style: a.Style, NativeTools: a.NativeTools, StrictTools: a.StrictTools, Examples: ex},
			map[string]any{"style": a.Style, "native_tools": a.NativeTools, "strict_tools": a.StrictTools, "examples": a.Examples}, nil
	case "react":
		return agent.ReAct{Budget: a.Budget, MaxObservation: a.MaxObservation}, map[string]any{"budget": a.Budget, "max_observation": a.MaxObservation}, nil
	case "cot":
		return agent.CoT{MaxSteps: a.MaxSteps, Tries: a.Tries, MaxObservation: a.MaxObservation, StrictTools: a.StrictTools},
			map[string]any{"max_steps": a.MaxSteps, "tries": a.Tries, "max_observation": a.MaxObservation, "strict_tools": a.StrictTools}, nil
	case "dfsdt":
		return agent.DFSDT{MaxSteps: a.MaxSteps, Beam: a.Beam, MaxQueries: a.MaxQueries, MaxObservation: a.MaxObservation, StrictTools: a.StrictTools},
			map[string]any{"max_steps": a.MaxSteps, "beam": a.Beam, "max_queries": a.MaxQueries, "max_observation": a.MaxObservation, "strict_tools": a.StrictTools}, nil
	}
	return nil, nil, invalid("--agent %q: want direct, react, cot, dfsdt or oracle", cfg.Agent)
}
