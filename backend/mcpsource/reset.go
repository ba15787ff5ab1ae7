package mcpsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolenv/toolenv/internal/redact"
)

// reset makes the instance's state fresh, as the configuration says.
func (iso *isolated) reset(ctx context.Context, in *Instance, r *Reset) error {
	ctx, cancel := context.WithTimeout(ctx, iso.pool.opts.StartTimeout)
	defer cancel()
	if r.Tool != "" {
		args := r.Arguments
		if args == nil {
			args = map[string]any{}
		}
		res, err := in.client.Call(ctx, r.Tool, args)
		if err != nil {
			return fmt.Errorf("tool %s: %w", r.Tool, err)
		}
		if res.IsError {
			body, _ := EncodeResult(res)
			text, _ := ResultText(body)
			return fmt.Errorf("tool %s answered isError: %s", r.Tool, short(text))
		}
		return nil
	}
	getenv := episodeGetenv(iso.getenv, in.Dir())
	u, missing := Expand(r.URL, getenv)
	if len(missing) > 0 {
		return fmt.Errorf("environment variable %s is not set (the reset's url names it)", strings.Join(missing, ", "))
	}
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Headers {
		val, missing := Expand(v, getenv)
		if len(missing) > 0 {
			return fmt.Errorf("environment variable %s is not set (the reset's header %s names it)", strings.Join(missing, ", "), k)
		}
		req.Header.Set(k, val)
	}
	resp, err := iso.hc.Do(req)
	if err != nil {
		return errors.New(redact.Text(err.Error()))
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s answered %s: %s", method, redact.URL(r.URL), resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
