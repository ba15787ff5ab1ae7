package episode

import (
	toolenv "github.com/toolenv/toolenv"
)

// Infrastructure failures are failures of the environment, not of the
// agent: an upstream API or a model endpoint down, a timeout of
// toolenv's own, a crashed MCP server, the store unreachable. A trainer
// masks the steps and rewards they touch rather than teach the agent
// that its action was wrong (a zero reward the agent did not earn).
//
// The mark is one field, "infra_failure", holding the reason (a short
// word: the call's status, or what the backend named):
//
//   - on a call's result (CallResult.InfraFailure, RecordCall), with
//     "injected": true instead when the failure is a fault injected on
//     purpose (ResetOptions.Faults, --faults): that one is the agent's to
//     handle, and is not marked;
//   - on the step (Info.InfraFailure, RecordStep.InfraFailure): the
//     reason of its first call so marked;
//   - on the reward: Info.InfraFailures counts the steps so marked so
//     far, and Outcome.InfraFailure (on the last step, and in the
//     record) is the first reason of the episode: its return depends on
//     a failure of the environment.
//
// A backend marks a failure as the environment's by setting the result's
// Meta[toolenv.MetaInfraFailure] to the reason (an MCP source whose
// server crashed: "mcp_server_crashed"); without it, the status decides
// (toolenv.InfraFailure).

// infraOf classifies a call's result (toolenv.InfraFailure): the
// reason when the environment failed it, and whether a fault injected
// on purpose did.
func infraOf(res *toolenv.Result) (reason string, injected bool) {
	return toolenv.InfraFailure(res)
}
