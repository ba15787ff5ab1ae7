package nl2apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/nl2api/answer"
	"github.com/toolenv/toolenv/server"
)

// Served is a set of NL2SQL collection folders served by toolenv's HTTP
// server on a loopback port, each by the backend `toolenv serve` gives
// it, behind the same call pipeline (strict validation included).
type Served struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL string
	// Collections are the served collections by name.
	Collections map[string]*toolenv.Collection
	// Tasks are each collection's tasks (its tasks.jsonl).
	Tasks map[string][]*toolenv.Task

	client  *http.Client
	srv     *http.Server
	closers []io.Closer
}

// Serve opens the collection folders and serves them. Close stops the
// server and closes the backends.
func Serve(ctx context.Context, dirs ...string) (*Served, error) {
	s := &Served{Collections: map[string]*toolenv.Collection{}, Tasks: map[string][]*toolenv.Task{}, client: &http.Client{Timeout: 30 * time.Second}}
	reg := invoke.NewRegistry()
	// The collections share their databases' images, as toolenv serve's
	// do (indexed once; read from $TOOLENV_IMAGE_CACHE when it is set).
	var db rodb.Options
	db.Images, db.Cache = &rodb.Images{}, rodb.CacheAt(os.Getenv(rodb.CacheEnv), nil)
	for _, dir := range dirs {
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			s.Close()
			return nil, err
		}
		var h toolenv.Handler
		switch c.Backend.Type {
		case sqltools.BackendType:
			b, err := sqltools.Open(ctx, c, sqltools.Options{DB: db})
			if err != nil {
				s.Close()
				return nil, err
			}
			s.closers = append(s.closers, b)
			h = b
		case sqlrest.BackendType:
			b, err := sqlrest.Open(ctx, c, sqlrest.Options{DB: db})
			if err != nil {
				s.Close()
				return nil, err
			}
			s.closers = append(s.closers, b)
			h = b
		default:
			s.Close()
			return nil, fmt.Errorf("nl2apitest: %s: backend %q is not an NL2SQL backend", dir, c.Backend.Type)
		}
		if err := reg.Add(c, h); err != nil {
			s.Close()
			return nil, err
		}
		tasks, problems, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
		if err != nil || len(problems) > 0 {
			s.Close()
			return nil, fmt.Errorf("nl2apitest: %s: tasks: %v %v", dir, err, problems)
		}
		s.Collections[c.Name] = c
		s.Tasks[c.Name] = tasks
	}
	p := invoke.New(reg, invoke.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: server.New(server.Options{Pipeline: p, Registry: reg}), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	s.URL = "http://" + ln.Addr().String()
	return s, nil
}

// Close stops the server and closes the backends.
func (s *Served) Close() error {
	var errs []error
	if s.srv != nil {
		errs = append(errs, s.srv.Close())
	}
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Response is one HTTP call's outcome.
type Response struct {
	Status int
	Body   []byte
}

// Call makes one tool call over HTTP the way a client of the server
// does: a tool with a GET binding (REST) at its own path with the
// arguments percent-encoded in the query string; any other tool by POST
// /tools/<collection>/<tool> with a JSON body. session, when set, goes in
// the X-Toolenv-Session header.
func (s *Served) Call(ctx context.Context, c *toolenv.Collection, tool *toolenv.Tool, args map[string]any, session string) (*Response, error) {
	var req *http.Request
	var err error
	if b := tool.Binding; b != nil && strings.EqualFold(b.Method, http.MethodGet) {
		u, err := url.Parse(s.URL)
		if err != nil {
			return nil, err
		}
		u.Path = b.Path
		q := url.Values{}
		names := make([]string, 0, len(args))
		for k := range args {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			q.Set(k, queryValue(args[k]))
		}
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
	} else {
		body, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		u := s.URL + "/tools/" + url.PathEscape(c.Name) + "/" + url.PathEscape(tool.Name)
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		return nil, err
	}
	if session != "" {
		req.Header.Set(server.SessionHeader, session)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Body: data}, nil
}

// NewSession asks the server for a task session (POST /sessions) and
// returns its id, to send as X-Toolenv-Session.
func (s *Served) NewSession(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/sessions", strings.NewReader("{}"))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	id := resp.Header.Get(server.SessionHeader)
	if resp.StatusCode != http.StatusCreated || id == "" {
		return "", fmt.Errorf("POST /sessions: HTTP %d: %s", resp.StatusCode, body)
	}
	return id, nil
}

// queryValue is the query-string form of a JSON argument value.
func queryValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// Replay runs task t of collection c over HTTP in a fresh session: its
// init calls, then its gold calls (labels passed as sqltools.CallArgs
// passes them), and assembles the answer from the response bodies of the
// task's answer labels.
func (s *Served) Replay(ctx context.Context, c *toolenv.Collection, t *toolenv.Task, session string) (*answer.Table, error) {
	inits, err := sqltools.InitCalls(t)
	if err != nil {
		return nil, err
	}
	if !c.Policy.Sessions {
		session = ""
	} else if session != "" {
		// Session ids are issued by the server; session only says that
		// the task runs in one.
		if session, err = s.NewSession(ctx); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	bodies := map[string]json.RawMessage{}
	for i, g := range append(inits, t.Gold...) {
		tool := c.Tool(g.Name)
		if tool == nil {
			return nil, fmt.Errorf("task %s call %d: no tool %s in %s", t.ID, i, g.Name, c.Name)
		}
		resp, err := s.Call(ctx, c, tool, sqltools.CallArgs(g, tool), session)
		if err != nil {
			return nil, fmt.Errorf("task %s call %d (%s): %w", t.ID, i, g.Name, err)
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("task %s call %d (%s %v): HTTP %d: %s", t.ID, i, g.Name, g.Args, resp.Status, resp.Body)
		}
		bodies[g.Label] = resp.Body
	}
	labels := sqltools.AnswerLabels(t)
	parts := make([]json.RawMessage, len(labels))
	for i, l := range labels {
		b, ok := bodies[l]
		if !ok {
			return nil, fmt.Errorf("task %s: no response labelled %q", t.ID, l)
		}
		parts[i] = b
	}
	return answer.FromBodies(parts...)
}
