package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// proxyRequest is the body StableToolBench's server posts to the RapidAPI
// proxy (server/main.py get_virtual_response, the "data" dict), in the
// same key order.
type proxyRequest struct {
	Category     string         `json:"category"`
	ToolName     string         `json:"tool_name"`
	APIName      string         `json:"api_name"`
	ToolInput    map[string]any `json:"tool_input"`
	Strip        string         `json:"strip"`
	ToolbenchKey string         `json:"toolbench_key"`
}

// proxyAnswer is the proxy's {"error", "response"} envelope.
type proxyAnswer struct {
	Error    json.RawMessage `json:"error"`
	Response json.RawMessage `json:"response"`
}

// viaProxy posts call to the RapidAPI proxy and observes the answer. The
// returned body is the proxy's "response" value, as JSON.
func (b *Backend) viaProxy(ctx context.Context, call *toolenv.Call) (*Observation, json.RawMessage, http.Header) {
	category, tool, api := proxyNames(call.Tool)
	key := b.cfg.ToolbenchKey
	if key == "" {
		key = call.Meta[CallMetaToolbenchKey]
	}
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	payload, err := json.Marshal(proxyRequest{Category: category, ToolName: tool, APIName: api, ToolInput: args, Strip: "", ToolbenchKey: key})
	if err != nil {
		return &Observation{Transport: err}, nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.ProxyURL, bytes.NewReader(payload))
	if err != nil {
		return &Observation{Transport: err}, nil, nil
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("toolbench_key", key)
	obs, data, header, ok := b.send(req)
	if !ok {
		return obs, nil, header
	}
	if obs.HTTPStatus != http.StatusOK || obs.TooLarge {
		obs.Response = string(data)
		return obs, textBody(data), header
	}
	obs.HTTPStatus = 0 // a 200 from the proxy says nothing about the API; its envelope does
	var ans proxyAnswer
	if err := json.Unmarshal(data, &ans); err != nil || (ans.Error == nil && ans.Response == nil) {
		obs.BadEnvelope = true
		obs.Response = string(data)
		return obs, textBody(data), header
	}
	obs.Error = jsonText(ans.Error)
	obs.Response = jsonText(ans.Response)
	body := json.RawMessage(ans.Response)
	if len(bytes.TrimSpace(body)) == 0 {
		body = json.RawMessage(`""`)
	}
	return obs, body, header
}

// jsonText returns a JSON value as text: a string's content, "" for null
// or nothing, the compact JSON of anything else.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// textBody returns data as a JSON body: data itself when it is JSON, else
// a JSON string holding it.
func textBody(data []byte) json.RawMessage {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && json.Valid(t) {
		return json.RawMessage(append([]byte(nil), t...))
	}
	s, _ := json.Marshal(strings.ToValidUTF8(string(data), "\uFFFD"))
	return s
}
