package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// direct calls the tool's own URL and observes the answer. The returned
// body is the response body: its JSON when it is JSON, else a JSON string.
func (b *Backend) direct(ctx context.Context, call *toolenv.Call) (*Observation, json.RawMessage, http.Header) {
	req, err := buildRequest(ctx, call.Tool.Binding, call.Args)
	if err != nil {
		// A request that cannot be built is the caller's parameter
		// problem, not a connection failure.
		return &Observation{Error: err.Error()}, nil, nil
	}
	for k, v := range b.cfg.Headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	obs, data, header, ok := b.send(req)
	if !ok {
		return obs, nil, header
	}
	obs.Response = string(data)
	return obs, textBody(data), header
}

// buildRequest builds the HTTP request for a call through binding: path
// parameters substituted, query parameters encoded, header parameters set
// and body parameters sent as a JSON object.
func buildRequest(ctx context.Context, binding *toolenv.Binding, args map[string]any) (*http.Request, error) {
	if binding == nil || binding.BaseURL == "" {
		return nil, fmt.Errorf("the tool has no base URL in its binding")
	}
	if err := checkHTTPURL(binding.BaseURL); err != nil {
		return nil, fmt.Errorf("the tool's base URL %q: %w", redact.URL(binding.BaseURL), err)
	}
	method := strings.ToUpper(binding.Method)
	if method == "" {
		method = http.MethodGet
	}
	path := binding.Path
	query := url.Values{}
	headers := map[string]string{}
	body := map[string]any{}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic query order
	for _, name := range names {
		v := args[name]
		switch binding.ParamIn(name) {
		case "path":
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(scalarText(v)))
		case "header":
			headers[name] = scalarText(v)
		case "body":
			body[name] = v
		default:
			if list, ok := v.([]any); ok {
				for _, e := range list {
					query.Add(name, scalarText(e))
				}
				continue
			}
			query.Set(name, scalarText(v))
		}
	}
	if i := strings.Index(path, "{"); i >= 0 {
		if j := strings.Index(path[i:], "}"); j > 0 {
			return nil, fmt.Errorf("missing required path parameter %q", path[i+1:i+j])
		}
	}
	u := strings.TrimRight(binding.BaseURL, "/")
	if path != "" && !strings.HasPrefix(path, "/") {
		u += "/"
	}
	u += path
	if q := query.Encode(); q != "" {
		if strings.Contains(u, "?") {
			u += "&" + q
		} else {
			u += "?" + q
		}
	}
	var rd io.Reader
	if len(body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode the request body: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// scalarText renders an argument for a URL or header: strings as they
// are, numbers in their exact JSON form, anything else as compact JSON.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
