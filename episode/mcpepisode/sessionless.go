package mcpepisode

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/server/guard"
)

// The tools of the sessionless protocol (MCP 2026-07-28), where no MCP
// session can stand for an episode: the episode is a handle the server
// mints (StartTool's episode_id) and the client passes back as an
// ordinary tool argument (EpisodeArg), as the specification recommends
// for state that spans calls.
const (
	// StartTool starts an episode: its arguments are the reset options
	// (the URL's query gives defaults), its result the episode's id, task
	// and tools.
	StartTool = "start_episode"
	// EndTool ends an episode before its end (no session ends it).
	EndTool = "end_episode"
	// EpisodeArg is the argument that names the episode of a call: of
	// GetTaskTool, EndTool, the task's tools and submit_answer.
	EpisodeArg = "episode_id"
)

// serveSessionless serves a request of the sessionless protocol: the
// server answering it is made for the request's principal and URL, with
// StartTool, GetTaskTool and EndTool listed; a task tool (or
// submit_answer) called with EpisodeArg is a step of that episode.
func (h *handler) serveSessionless(w http.ResponseWriter, r *http.Request) {
	srv := h.sessionlessServer(guard.Principal(r.Context()), r.URL.Query())
	h.mcp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), slotKey{}, &slot{srv: srv})))
}

// sessionlessServer makes the server of one sessionless request.
func (h *handler) sessionlessServer(principal string, query url.Values) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "toolenv-episode", Version: h.opts.Version}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("RL episodes over MCP without sessions: %s starts one (its arguments are the reset options; "+
			"this URL's query gives their defaults) and returns its %s, its task and its tools; pass %s to every later call: "+
			"each task tool is a step, %s ends the episode with its reward, %s repeats the task, %s ends it early.",
			StartTool, EpisodeArg, EpisodeArg, episode.SubmitTool, GetTaskTool, EndTool),
		// The tools listed are the same for everyone; an episode's are
		// in its start result.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { *c = mcp.Cacheable{CacheScope: "public"} },
	})
	srv.AddReceivingMiddleware(server.MCPGuard(h.log), h.stepMiddleware(principal))
	srv.AddTool(&mcp.Tool{Name: StartTool, Description: "Start an episode: its task is drawn from the reset options (collection, task_id, split, seed, max_steps, reward, faults, …; this URL's query gives defaults). The result holds the episode_id to pass to every later call, the task's question and instructions, and its tools (each taking episode_id).",
		InputSchema: json.RawMessage(startSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h.start(ctx, principal, query, req.Params.Arguments), nil
		})
	idOnly := json.RawMessage(`{"type":"object","properties":{"` + EpisodeArg + `":{"type":"string","description":"The episode, as start_episode returned it."}},"required":["` + EpisodeArg + `"]}`)
	srv.AddTool(&mcp.Tool{Name: GetTaskTool, Description: "Repeat an episode's task: the question, how to act, the step limit, its tools. It is not a step.",
		InputSchema: idOnly, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id, _, res := episodeOf(req.Params.Arguments)
			if res != nil {
				return res, nil
			}
			return h.describe(ctx, principal, id, nil), nil
		})
	srv.AddTool(&mcp.Tool{Name: EndTool, Description: "End an episode before it is done (its record stays readable). It is not a step.",
		InputSchema: idOnly, Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id, _, res := episodeOf(req.Params.Arguments)
			if res != nil {
				return res, nil
			}
			if err := h.eps.End(ctx, principal, id); err != nil {
				return errorResult(err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The episode " + id + " is ended."}}}, nil
		})
	return srv
}

func ptr[T any](v T) *T { return &v }

// startSchema is StartTool's input: the reset options.
const startSchema = `{"type":"object","properties":{
"collection":{"type":"string","description":"The task's collection (may be left out when one collection has tasks)."},
"task_id":{"type":"string","description":"The task; without it one of split is drawn with seed."},
"split":{"type":"string","description":"A task group (a BIRD database, a StableToolBench query group)."},
"seed":{"type":"integer","minimum":0,"description":"Draws the task of a split and seeds perturbation and faults."},
"version":{"type":"string"},"perturbation":{"type":"string"},"feedback":{"type":"string","enum":["none","terse","helpful"]},
"max_steps":{"type":"integer","minimum":1},"reward":{"type":"object"},"faults":{},"episode_id":{"type":"string","description":"Your own name for the episode, kept in its record."}}}`

// start runs StartTool: the URL's query, then the arguments, as reset
// options.
func (h *handler) start(ctx context.Context, principal string, query url.Values, raw json.RawMessage) *mcp.CallToolResult {
	opts := map[string]any{}
	if len(query) > 0 {
		r := &http.Request{URL: &url.URL{RawQuery: query.Encode()}}
		o, err := resetOptions(r)
		if err != nil {
			return errorResult(err)
		}
		b, _ := json.Marshal(o)
		json.Unmarshal(b, &opts)
	}
	if args, res := objectArgs(raw); res != nil {
		return res
	} else {
		maps.Copy(opts, args)
	}
	b, _ := json.Marshal(opts)
	o, err := episode.ParseResetOptions(b)
	if err != nil {
		return errorResult(err)
	}
	first, err := h.eps.Reset(ctx, principal, o)
	if err != nil {
		return errorResult(err)
	}
	return h.describe(ctx, principal, first.Observation.EpisodeID, first)
}

// describe is the result of StartTool and GetTaskTool: the episode's id,
// task, state and tools (each with EpisodeArg).
func (h *handler) describe(ctx context.Context, principal, id string, first *episode.StepResult) *mcp.CallToolResult {
	st, err := h.eps.State(ctx, principal, id)
	if err != nil {
		return errorResult(err)
	}
	tools, err := h.eps.Tools(ctx, principal, id)
	if err != nil {
		return errorResult(err)
	}
	defs := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		shared, err := h.tool(t)
		if err != nil {
			return errorResult(err)
		}
		mt := *shared // its own input schema, with the episode argument
		if mt.InputSchema, err = withEpisodeArg(mt.InputSchema, episodeArg(t)); err != nil {
			return errorResult(err)
		}
		defs = append(defs, &mt)
	}
	out := map[string]any{EpisodeArg: id, "step": st.StepCount, "done": st.Done, "tools": defs}
	text := ""
	if first != nil {
		obs := first.Observation
		maps.Copy(out, map[string]any{"task_id": obs.TaskID, "collection": obs.Collection, "query": obs.Query, "instructions": obs.Instructions, "max_steps": obs.MaxSteps})
		text = fmt.Sprintf("Episode %s: task %s of %s.\nQuestion: %s\n\n%s\nThe episode allows %d steps (each call of a task tool is one); %s ends it and its result holds the reward. Pass %q: %q to every call.",
			id, obs.TaskID, obs.Collection, obs.Query, obs.Instructions, obs.MaxSteps, episode.SubmitTool, EpisodeArg, id)
	} else {
		text = fmt.Sprintf("Episode %s: step %d, done %t.", id, st.StepCount, st.Done)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorResult(err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(b)}
}

// stepMiddleware answers a tools/call of a name the server does not list
// (a task tool, submit_answer) as a step of the episode its EpisodeArg
// names.
func (h *handler) stepMiddleware(principal string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctr, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || ctr.Params == nil {
				return next(ctx, method, req)
			}
			switch ctr.Params.Name {
			case StartTool, GetTaskTool, EndTool:
				return next(ctx, method, req)
			}
			id, args, res := episodeOf(ctr.Params.Arguments)
			if res != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"unknown tool %q: without sessions an episode's tools are called with its %s (start one with %s, whose result lists them)", ctr.Params.Name, EpisodeArg, StartTool)}
			}
			tools, err := h.eps.Tools(ctx, principal, id)
			if err != nil {
				return errorResult(err), nil
			}
			for _, t := range tools {
				if t.Name == ctr.Params.Name {
					raw, _ := json.Marshal(args)
					return h.call(ctx, principal, id, t.Name, raw), nil
				}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("episode %s offers no tool %q (%s lists its tools)", id, ctr.Params.Name, GetTaskTool)}
		}
	}
}

// episodeOf takes the episode's handle out of a call's arguments:
// "toolenv_episode_id" when given (the name a tool with its own
// episode_id parameter takes it under), else EpisodeArg.
func episodeOf(raw json.RawMessage) (id string, rest map[string]any, res *mcp.CallToolResult) {
	args, res := objectArgs(raw)
	if res != nil {
		return "", nil, res
	}
	for _, k := range []string{"toolenv_" + EpisodeArg, EpisodeArg} {
		if v, ok := args[k].(string); ok && strings.TrimSpace(v) != "" {
			delete(args, k)
			return v, args, nil
		}
	}
	return "", nil, errorResult(&toolenv.Error{Status: toolenv.StatusInvalidArguments,
		Message: fmt.Sprintf("the call names no episode: pass %q, as %s returned it", EpisodeArg, StartTool)})
}

func objectArgs(raw json.RawMessage) (map[string]any, *mcp.CallToolResult) {
	args := map[string]any{}
	if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, errorResult(&toolenv.Error{Status: toolenv.StatusInvalidArguments, Message: "the arguments are not a JSON object: " + err.Error()})
		}
	}
	return args, nil
}

// episodeArg is the name under which t takes the episode: EpisodeArg,
// unless t has a parameter of that name.
func episodeArg(t *toolenv.Tool) string {
	if t.Input != nil {
		if _, ok := t.Input.Properties[EpisodeArg]; ok {
			return "toolenv_" + EpisodeArg
		}
	}
	return EpisodeArg
}

// withEpisodeArg adds the episode argument, required, to an input schema.
func withEpisodeArg(schema any, name string) (json.RawMessage, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[name] = map[string]any{"type": "string", "description": "The episode, as " + StartTool + " returned it."}
	m["properties"] = props
	req, _ := m["required"].([]any)
	m["required"] = append(req, name)
	return json.Marshal(m)
}
