package openenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// Client speaks OpenEnv's protocol to an environment server, message for
// message as OpenEnv's own Python client does (env_client.py's
// EnvClient, generic_client.py's GenericEnvClient and mcp_client.py's
// MCPToolClient): a WebSocket to base_url + "/ws", a message per call,
// an error response raised as an error. It also speaks the HTTP
// endpoints (ResetHTTP, StepHTTP). It is what toolenv's tests check the
// server with and what toolenv bench episodes drives it with; a Go
// rollout worker can use it as it is.
type Client struct {
	base  string
	token string
	hc    *http.Client
	ws    *websocket.Conn
}

// StepResult is OpenEnv's StepResult as GenericEnvClient parses it: the
// observation (a JSON object), the reward and done; Metadata is the
// observation's metadata (toolenv's info, truncated, the episode's id).
type StepResult struct {
	Observation map[string]any `json:"observation"`
	Reward      *float64       `json:"reward"`
	Done        bool           `json:"done"`
	Metadata    map[string]any `json:"metadata"`
}

// ServerError is an error message of the server: over the WebSocket
// {"type": "error", "data": {"message", "code"}}, over HTTP the status
// and FastAPI's {"detail"}.
type ServerError struct {
	Code    string // the WebSocket error code (VALIDATION_ERROR, ...)
	HTTP    int    // the HTTP status, for the HTTP endpoints
	Status  string // toolenv's status
	Message string
	Hint    string
}

func (e *ServerError) Error() string {
	if e.HTTP != 0 {
		return fmt.Sprintf("Server error: %s (HTTP %d)", e.Message, e.HTTP)
	}
	return fmt.Sprintf("Server error: %s (code: %s)", e.Message, e.Code)
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Token is sent as Authorization: Bearer (servers with tokens).
	Token string
	// HTTPClient makes the HTTP requests and the WebSocket handshake
	// (default http.DefaultClient).
	HTTPClient *http.Client
}

// NewClient returns a client of the server at baseURL (http:// or
// ws://, e.g. http://127.0.0.1:8080/openenv). It connects on first use.
func NewClient(baseURL string, opts ClientOptions) *Client {
	base := strings.TrimRight(baseURL, "/")
	// convert_to_ws_url's inverse: the HTTP endpoints need http(s).
	base = strings.Replace(strings.Replace(base, "wss://", "https://", 1), "ws://", "http://", 1)
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: base, token: opts.Token, hc: hc}
}

func (c *Client) header() http.Header {
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	return h
}

// Connect opens the WebSocket (EnvClient.connect).
func (c *Client) Connect(ctx context.Context) error {
	if c.ws != nil {
		return nil
	}
	url := strings.Replace(strings.Replace(c.base, "https://", "wss://", 1), "http://", "ws://", 1) + "/ws"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: c.header()})
	if err != nil {
		return fmt.Errorf("Failed to connect to %s: %w", url, err)
	}
	conn.SetReadLimit(100 << 20) // max_message_size_mb=100
	c.ws = conn
	return nil
}

// sendAndReceive is EnvClient._send_and_receive.
func (c *Client) sendAndReceive(ctx context.Context, msg map[string]any) (map[string]any, error) {
	if err := c.Connect(ctx); err != nil {
		return nil, err
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return nil, err
	}
	_, raw, err := c.ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	var resp map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("the server's message is not JSON: %w", err)
	}
	if resp["type"] == "error" {
		data, _ := resp["data"].(map[string]any)
		e := &ServerError{Message: "Unknown error", Code: "UNKNOWN"}
		if s, ok := data["message"].(string); ok {
			e.Message = s
		}
		if s, ok := data["code"].(string); ok {
			e.Code = s
		}
		e.Status, _ = data["status"].(string)
		e.Hint, _ = data["hint"].(string)
		return nil, e
	}
	return resp, nil
}

func parseResult(resp map[string]any) (*StepResult, error) {
	data, _ := resp["data"].(map[string]any)
	return resultOf(data)
}

func resultOf(data map[string]any) (*StepResult, error) {
	r := &StepResult{Done: data["done"] == true}
	r.Observation, _ = data["observation"].(map[string]any)
	r.Metadata, _ = r.Observation["metadata"].(map[string]any)
	if v, ok := data["reward"].(json.Number); ok {
		f, err := v.Float64()
		if err != nil {
			return nil, err
		}
		r.Reward = &f
	}
	return r, nil
}

// Reset sends {"type": "reset", "data": kwargs} (EnvClient.reset).
func (c *Client) Reset(ctx context.Context, kwargs map[string]any) (*StepResult, error) {
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	resp, err := c.sendAndReceive(ctx, map[string]any{"type": "reset", "data": kwargs})
	if err != nil {
		return nil, err
	}
	return parseResult(resp)
}

// Step sends {"type": "step", "data": action} (EnvClient.step with
// GenericEnvClient's payload: the action as given).
func (c *Client) Step(ctx context.Context, action map[string]any) (*StepResult, error) {
	resp, err := c.sendAndReceive(ctx, map[string]any{"type": "step", "data": action})
	if err != nil {
		return nil, err
	}
	return parseResult(resp)
}

// State sends {"type": "state"} (EnvClient.state).
func (c *Client) State(ctx context.Context) (map[string]any, error) {
	resp, err := c.sendAndReceive(ctx, map[string]any{"type": "state"})
	if err != nil {
		return nil, err
	}
	data, _ := resp["data"].(map[string]any)
	return data, nil
}

// ListTools steps a ListToolsAction and returns its tools
// (MCPClientBase.list_tools).
func (c *Client) ListTools(ctx context.Context) ([]map[string]any, error) {
	r, err := c.Step(ctx, map[string]any{"type": "list_tools"})
	if err != nil {
		return nil, err
	}
	list, _ := r.Observation["tools"].([]any)
	var out []map[string]any
	for _, t := range list {
		if m, ok := t.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// CallTool steps a CallToolAction and returns its result's data, as
// MCPToolClient.call_tool does, failing when the observation carries an
// error. Use Step for the reward.
func (c *Client) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	r, err := c.Step(ctx, map[string]any{"type": "call_tool", "tool_name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	if e, ok := r.Observation["error"].(map[string]any); ok && e != nil {
		return nil, fmt.Errorf("Tool '%s' failed: %v (type: %v)", name, e["message"], e["error_type"])
	}
	res := r.Observation["result"]
	if m, ok := res.(map[string]any); ok {
		if d, ok := m["data"]; ok {
			return d, nil
		}
	}
	return res, nil
}

// Close sends {"type": "close"} and closes the WebSocket
// (EnvClient.disconnect).
func (c *Client) Close() error {
	if c.ws == nil {
		return nil
	}
	ctx := context.Background()
	b, _ := json.Marshal(map[string]any{"type": "close"})
	_ = c.ws.Write(ctx, websocket.MessageText, b)
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.ws = nil
	var ce websocket.CloseError
	if errors.As(err, &ce) || err == nil {
		return nil
	}
	return nil
}

// post sends a JSON body to an HTTP endpoint and decodes the answer.
func (c *Client) post(ctx context.Context, path string, body any) (map[string]any, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header = c.header()
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

func (c *Client) do(req *http.Request) (map[string]any, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("%s %s: HTTP %d, not JSON: %.200s", req.Method, req.URL.Path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		e := &ServerError{HTTP: resp.StatusCode}
		e.Message, _ = out["detail"].(string)
		e.Status, _ = out["status"].(string)
		e.Hint, _ = out["hint"].(string)
		return nil, e
	}
	return out, nil
}

// ResetHTTP posts to /reset; the episode's id is the observation's
// episode_id.
func (c *Client) ResetHTTP(ctx context.Context, kwargs map[string]any) (*StepResult, error) {
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	out, err := c.post(ctx, "/reset", kwargs)
	if err != nil {
		return nil, err
	}
	return resultOf(out)
}

// ResetEpisodeID posts to /reset and returns the episode's id only,
// without decoding the first observation into maps: for load
// generators, whose own CPU must stay small beside the server's.
func (c *Client) ResetEpisodeID(ctx context.Context, kwargs map[string]any) (string, error) {
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	b, err := json.Marshal(kwargs)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/reset", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	req.Header = c.header()
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		Observation struct {
			EpisodeID string `json:"episode_id"`
		} `json:"observation"`
		Detail string `json:"detail"`
		Status string `json:"status"`
		Hint   string `json:"hint"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("POST /reset: HTTP %d, not JSON: %.200s", resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &ServerError{HTTP: resp.StatusCode, Message: out.Detail, Status: out.Status, Hint: out.Hint}
	}
	if out.Observation.EpisodeID == "" {
		return "", fmt.Errorf("POST /reset: no observation.episode_id in %.200s", raw)
	}
	return out.Observation.EpisodeID, nil
}

// StepHTTP posts an action of episode id to /step.
func (c *Client) StepHTTP(ctx context.Context, id string, action map[string]any) (*StepResult, error) {
	return c.StepHTTPWith(ctx, id, action, StepOptions{})
}

// StepOptions are the optional fields of OpenEnv's StepRequest.
type StepOptions struct {
	// RequestID identifies the step: sent again, it gets the first
	// answer instead of taking the step again.
	RequestID string
	// TimeoutS cuts the step after this many seconds (it then does not
	// happen); 0: none.
	TimeoutS float64
}

// StepHTTPWith posts an action of episode id to /step with o's fields.
func (c *Client) StepHTTPWith(ctx context.Context, id string, action map[string]any, o StepOptions) (*StepResult, error) {
	body := map[string]any{"episode_id": id, "action": action}
	if o.RequestID != "" {
		body["request_id"] = o.RequestID
	}
	if o.TimeoutS > 0 {
		body["timeout_s"] = o.TimeoutS
	}
	out, err := c.post(ctx, "/step", body)
	if err != nil {
		return nil, err
	}
	return resultOf(out)
}

// StateHTTP gets /state of episode id.
func (c *Client) StateHTTP(ctx context.Context, id string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/state?episode_id="+id, nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.header()
	return c.do(req)
}

// CloseHTTP posts episode id to /close.
func (c *Client) CloseHTTP(ctx context.Context, id string) error {
	_, err := c.post(ctx, "/close", map[string]any{"episode_id": id})
	return err
}
