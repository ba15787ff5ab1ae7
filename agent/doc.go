// Package agent holds the agents toolenv evaluates and the environment
// they act in.
//
// An Agent runs one task in one Session of an Env and returns an Outcome:
// the trajectory (thoughts, calls, observations, final answer, costs) and
// what the metrics need beyond it. The agents are those of the papers:
//
//   - direct: one model call writes the whole call sequence (Live
//     API-Bench, Appendix E: NESTful style with in-context examples and
//     labels for SLOT/SEL, BFCL style for REST), then it is executed;
//   - react: Thought / Action / Action Input / Observation with a turn
//     budget (Appendix F);
//   - cot and dfsdt: ToolBench's single chain and depth-first decision
//     tree over native tool calls with the Finish function;
//   - oracle: executes the gold sequence; it checks the environment, not
//     a model.
//
// direct and oracle resolve NESTful references to earlier outputs
// ("$var1.results[0].isbn$", ResolveRefs) before each call, for every
// tool except those that keep labelled results in their session (the
// NL2SQL SLOT/SEL tools), which resolve "$label$" themselves.
//
// Agents talk to a model through Model (*llm.Client implements it) and
// read its output with package agent/parse. Env has an in-process
// implementation over a toolenv.Handler (NewLocal).
package agent
