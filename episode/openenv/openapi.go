package openenv

import (
	"encoding/json"
)

// APIVersion is the version of OpenEnv's HTTP API the routes follow
// (OpenEnv's FastAPI app declares 1.0.0; its validator reads the
// profile openenv-http/1.x from it).
const APIVersion = "1.0.0"

// openAPIDocument is GET /openapi.json: the routes of the handler as
// OpenAPI 3.1, as OpenEnv's FastAPI server publishes its own. OpenEnv's
// validator (openenv validate --url) reads info.version and which of
// /reset, /step and /state are there to tell the simulation mode.
func openAPIDocument(toolenvVersion string) string {
	obj := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}
	}
	op := func(summary, desc string, body bool) map[string]any {
		o := map[string]any{"summary": summary, "description": desc, "responses": map[string]any{"200": obj("the answer")}}
		if body {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}
		}
		return o
	}
	q := func(name, desc string) []any {
		return []any{map[string]any{"name": name, "in": "query", "required": true, "description": desc, "schema": map[string]any{"type": "string"}}}
	}
	state := op("The state of an episode", "OpenEnv's State (episode_id, step_count) with toolenv's fields.", false)
	state["parameters"] = q("episode_id", "the episode's id (the reset's observation.episode_id)")
	traj := op("An episode as a trajectory", "One JSON line: the record (jsonl), or the chat with its tool calls (openai, sharegpt).", false)
	traj["parameters"] = q("episode_id", "the episode's id")
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "toolenv RL episodes (OpenEnv's HTTP API)",
			"version":     APIVersion,
			"description": "toolenv " + toolenvVersion + ": tool-use episodes in OpenEnv's protocol. A reset's observation.episode_id names the episode; a step sends it beside the action. See docs/episodes.md.",
		},
		"paths": map[string]any{
			"/reset":      map[string]any{"post": op("Start an episode", "OpenEnv's ResetRequest (seed, episode_id) with toolenv's reset options; answers a ResetResponse.", true)},
			"/step":       map[string]any{"post": op("Take a step", "OpenEnv's StepRequest (action, timeout_s, request_id) with the episode_id; answers a StepResponse.", true)},
			"/state":      map[string]any{"get": state},
			"/close":      map[string]any{"post": op("Close an episode", "Its record stays readable.", true)},
			"/health":     map[string]any{"get": op("Health", `{"status": "healthy"}`, false)},
			"/metadata":   map[string]any{"get": op("The environment's metadata", "OpenEnv's EnvironmentMetadata.", false)},
			"/schema":     map[string]any{"get": op("The action, observation and state schemas", "OpenEnv's SchemaResponse.", false)},
			"/tasks":      map[string]any{"get": op("The tasks episodes can be reset to", "By collection.", false)},
			"/trajectory": map[string]any{"get": traj},
			"/mcp":        map[string]any{"post": op("MCP episodes", "A streamable-HTTP MCP server: initialize starts an episode (JSON-RPC 2.0).", true)},
			"/ws":         map[string]any{"get": op("The WebSocket session", "OpenEnv's reset, step, state, close and mcp messages.", false)},
		},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}
