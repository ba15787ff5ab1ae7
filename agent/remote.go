package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// SessionHeader carries the session id on a toolenv server's REST routes
// (server.SessionHeader).
const SessionHeader = "X-Toolenv-Session"

// Remote is an Env over a running toolenv server: tools are listed with
// GET /collections/{name}/tools and called with POST
// /tools/{collection}/{name}, the session in the X-Toolenv-Session header.
type Remote struct {
	base  string
	http  *http.Client
	opts  RemoteOptions
	mu    sync.Mutex
	colls map[string]*toolenv.Collection
}

var _ Env = (*Remote)(nil)

// RemoteOptions configure a Remote environment.
type RemoteOptions struct {
	// HTTPClient defaults to a client with a 5-minute timeout.
	HTTPClient *http.Client
	// TaskTools narrows the tools a task offers, as for Local.
	TaskTools func(c *toolenv.Collection, t *toolenv.Task) ([]*toolenv.Tool, error)
	// Collections, when given, are the collections' definitions as the
	// tasks were built with them (read from their folders): the tools are
	// shown from them, so that a remote run prompts exactly as an
	// in-process one; the server only runs the calls. Collections not
	// given are listed from the server.
	Collections []*toolenv.Collection
	// Token, when set, is sent as a bearer token on every request (the
	// server's --auth-token-env).
	Token string
}

// NewRemote returns an environment over the toolenv server at baseURL
// (e.g. "http://127.0.0.1:8080").
func NewRemote(baseURL string, opts RemoteOptions) *Remote {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 5 * time.Minute}
	}
	r := &Remote{base: strings.TrimRight(baseURL, "/"), http: opts.HTTPClient, opts: opts, colls: map[string]*toolenv.Collection{}}
	for _, c := range opts.Collections {
		r.colls[c.Name] = c
	}
	return r
}

// collection fetches (once) the tools of a collection from the server.
func (r *Remote) collection(ctx context.Context, name string) (*toolenv.Collection, error) {
	r.mu.Lock()
	c := r.colls[name]
	r.mu.Unlock()
	if c != nil {
		return c, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/collections/"+url.PathEscape(name)+"/tools", nil)
	if err != nil {
		return nil, err
	}
	r.authorize(req)
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list the tools of %s at %s: %w (is the server running? check --env-url)", name, r.base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list the tools of %s at %s: HTTP %d: %s (does the server load this collection?)", name, r.base, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var tools []*toolenv.Tool
	if err := toolenv.DecodeJSON(body, &tools); err != nil {
		return nil, fmt.Errorf("list the tools of %s at %s: %w", name, r.base, err)
	}
	c = toolenv.NewCollection(name, "", tools)
	r.mu.Lock()
	r.colls[name] = c
	r.mu.Unlock()
	return c, nil
}

// Start fetches the task's collection, opens a session (a fresh id) and
// runs the task's initialisation calls on the server.
func (r *Remote) Start(ctx context.Context, task *toolenv.Task) (Session, error) {
	if task.Collection == "" {
		return nil, fmt.Errorf("task %s names no collection, which a remote environment needs", task.ID)
	}
	c, err := r.collection(ctx, task.Collection)
	if err != nil {
		return nil, err
	}
	id, err := r.newSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", task.ID, err)
	}
	s := &remoteSession{env: r, coll: c, id: id}
	if r.opts.TaskTools != nil {
		if s.tools, err = r.opts.TaskTools(c, task); err != nil {
			return nil, err
		}
	} else {
		s.tools = TaskTools(c, task)
	}
	for i, g := range InitCalls(task) {
		res := s.post(ctx, g.Name, WithLabel(c.Tool(g.Name), g.Args, g.Label))
		if !res.OK() {
			return nil, toolenv.Errorw(res.Status, res.Hint, "task %s: initialisation call %d (%s) failed: %s", task.ID, i+1, g.Name, res.Error)
		}
	}
	return s, nil
}

type remoteSession struct {
	env   *Remote
	coll  *toolenv.Collection
	id    string
	tools []*toolenv.Tool
}

// newSession asks the server for a task session (POST /sessions). A
// server from before server-issued sessions has no such route: then the
// client names one itself, as those servers expect.
func (r *Remote) newSession(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/sessions", strings.NewReader("{}"))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	r.authorize(req)
	resp, err := r.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("open a session at %s: %w (is the server running? check --env-url)", r.base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusCreated && resp.Header.Get(SessionHeader) != "":
		return resp.Header.Get(SessionHeader), nil
	case resp.StatusCode == http.StatusNotFound:
		var id [16]byte
		_, _ = rand.Read(id[:])
		return "eval-" + hex.EncodeToString(id[:]), nil
	}
	return "", fmt.Errorf("open a session at %s: HTTP %d: %s", r.base, resp.StatusCode, strings.TrimSpace(string(body)))
}

func (r *Remote) authorize(req *http.Request) {
	if r.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.opts.Token)
	}
}

func (s *remoteSession) ID() string             { return s.id }
func (s *remoteSession) Tools() []*toolenv.Tool { return s.tools }

// Close ends the session on the server (DELETE /sessions/{id}), which
// frees what it holds there.
func (s *remoteSession) Close(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.env.base+"/sessions/"+url.PathEscape(s.id), nil)
	if err != nil {
		return err
	}
	s.env.authorize(req)
	resp, err := s.env.http.Do(req)
	if err != nil {
		return fmt.Errorf("end session at %s: %w", s.env.base, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return nil
}

func (s *remoteSession) Call(ctx context.Context, c Call) *toolenv.Result {
	return s.post(ctx, c.Name, WithLabel(s.coll.Tool(c.Name), c.Args, c.Label))
}

func (s *remoteSession) post(ctx context.Context, name string, args map[string]any) *toolenv.Result {
	start := time.Now()
	if args == nil {
		args = map[string]any{}
	}
	body, err := json.Marshal(args)
	if err != nil {
		return toolenv.Errorf(toolenv.StatusBadRequest, "", "arguments do not encode: %v", err)
	}
	u := s.env.base + "/tools/" + url.PathEscape(s.coll.Name) + "/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return toolenv.Errorf(toolenv.StatusBadRequest, "", "%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SessionHeader, s.id)
	s.env.authorize(req)
	resp, err := s.env.http.Do(req)
	if err != nil {
		st := toolenv.StatusUnavailable
		if ctx.Err() != nil {
			st = toolenv.StatusCanceled
		}
		return toolenv.Errorf(st, "check that the toolenv server at "+s.env.base+" is up", "calling %s: %v", name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return toolenv.Errorf(toolenv.StatusUnavailable, "", "reading the answer of %s: %v", name, err)
	}
	res := &toolenv.Result{Source: toolenv.Source(resp.Header.Get("X-Toolenv-Source")), Latency: time.Since(start)}
	if resp.StatusCode == http.StatusOK {
		res.Status = toolenv.StatusOK
		res.Body = raw
		return res
	}
	var eb struct {
		Status   toolenv.Status    `json:"status"`
		Error    string            `json:"error"`
		Hint     string            `json:"hint"`
		Problems []toolenv.Problem `json:"problems"`
	}
	if json.Unmarshal(raw, &eb) != nil || eb.Status == "" {
		return toolenv.Errorf(toolenv.StatusUpstreamError, "", "HTTP %d from the server: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	res.Status, res.Error, res.Hint, res.Problems = eb.Status, eb.Error, eb.Hint, eb.Problems
	return res
}
