package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/server/guard"
	"github.com/toolenv/toolenv/server/session"
)

// SessionIssuer issues and checks task-session ids (SLOT/SEL state):
// ids the server makes, bound to the principal that asked (see
// guard.Principal). *session.Table keeps them in memory; a shared store
// can implement it so that any replica accepts them.
type SessionIssuer interface {
	// Issue makes a session for principal and returns its id, held for
	// the caller's first call until release; an error wrapping
	// session.ErrFull when none can be made.
	Issue(ctx context.Context, principal string) (id string, release func(), err error)
	// Acquire checks that id was issued to principal and holds it for
	// one call until release; it returns the id backends know the
	// session by. An id never issued, issued to another principal, or
	// gone is an error wrapping session.ErrUnknown.
	Acquire(ctx context.Context, id, principal string) (backend string, release func(), err error)
	// End ends session id of principal.
	End(ctx context.Context, id, principal string) error
}

var _ SessionIssuer = (*session.Table)(nil)

// SessionDropper is what a backend that keeps per-session state
// implements so that an ended session's state goes with it
// (sqltools.Backend does).
type SessionDropper interface {
	DropSession(id string) bool
}

// DropSessions returns a function that drops session id from every
// backend of reg that keeps sessions: session.Options.OnEnd.
func DropSessions(reg *invoke.Registry) func(id string) {
	return func(id string) {
		for _, c := range reg.Collections() {
			if d, ok := invoke.BackendAs[SessionDropper](reg.Backend(c.Name)); ok {
				d.DropSession(id)
			}
		}
	}
}

// sessionResult turns an issuer's error into the Result a client gets.
func sessionResult(err error) *toolenv.Result {
	switch {
	case errors.Is(err, session.ErrClientFull):
		r := toolenv.Errorf(toolenv.StatusRateLimited, "end the sessions you no longer need (DELETE /sessions/{id}) and retry; the server's operator can raise --max-sessions-per-client",
			"no new session for this client: %v", err)
		r.RetryAfter = time.Second
		return r
	case errors.Is(err, session.ErrFull):
		r := toolenv.Errorf(toolenv.StatusUnavailable, "retry in a moment, end the sessions you no longer need (DELETE /sessions/{id}), or start the server with a larger --max-sessions", "no new session: %v", err)
		r.RetryAfter = time.Second
		r.Source = toolenv.SourcePipeline
		return r
	case errors.Is(err, session.ErrEvicted):
		r := toolenv.Errorf(toolenv.StatusGone,
			"start a new session (POST /sessions, or call the task's initialisation tool without "+SessionHeader+") and repeat the task's calls",
			"%v", err)
		return r
	case errors.Is(err, session.ErrUnknown):
		r := toolenv.Errorf(toolenv.StatusNotFound,
			"session ids are issued by the server: POST /sessions, or call the task's initialisation tool without "+SessionHeader+
				" and send the id its answer carries in "+SessionHeader+" (an id works only with the token that made it; idle sessions are dropped)",
			"%v: not issued by this server to this client, or ended", err)
		r.Source = toolenv.SourcePipeline
		return r
	}
	return toolenv.Errorf(toolenv.StatusInternal, "", "session: %v", err)
}

// sessionless reports whether callSession has nothing to do for call:
// the request names no session and the call needs none.
func sessionless(r *http.Request, call *toolenv.Call) bool {
	return r.Header.Get(SessionHeader) == "" &&
		(call.Collection == nil || !call.Collection.Policy.Sessions || call.Tool == nil || !call.Tool.Hidden())
}

// callSession sets call.Session from the request's X-Toolenv-Session
// (an id the server issued to this principal, held for the call), or for
// a call to the initialisation tool of a collection with sessions that
// names none, from a new session whose id the answer carries in
// X-Toolenv-Session. The caller must call release when the call is done.
func (s *Server) callSession(w http.ResponseWriter, r *http.Request, call *toolenv.Call) (release func(), res *toolenv.Result) {
	if sessionless(r, call) {
		return func() {}, nil // no session: nothing below is needed
	}
	id := r.Header.Get(SessionHeader)
	principal := guard.Principal(r.Context())
	ctx := session.WithClient(r.Context(), guard.ClientKey(r))
	if id == "" {
		id, release, err := s.sessions.Issue(ctx, principal)
		if err != nil {
			return nil, sessionResult(err)
		}
		w.Header()[SessionHeader] = []string{id}
		call.Session = id
		return release, nil
	}
	backend, release, err := s.sessions.Acquire(ctx, id, principal)
	if err != nil {
		return nil, sessionResult(err)
	}
	call.Session = backend
	return release, nil
}

// handleNewSession serves POST /sessions: a new task session for the
// caller, its id in the body and in X-Toolenv-Session.
func (s *Server) handleNewSession(w http.ResponseWriter, r *http.Request) {
	id, release, err := s.sessions.Issue(session.WithClient(r.Context(), guard.ClientKey(r)), guard.Principal(r.Context()))
	if err != nil {
		writeError(w, 0, sessionResult(err))
		return
	}
	release()
	w.Header()[SessionHeader] = []string{id}
	body := map[string]any{"session": id}
	if t, ok := s.sessions.(interface{ Idle() time.Duration }); ok && t.Idle() > 0 {
		body["idle_timeout_seconds"] = int(t.Idle() / time.Second)
	}
	writeJSON(w, http.StatusCreated, body)
}

// handleEndSession serves DELETE /sessions/{id}.
func (s *Server) handleEndSession(w http.ResponseWriter, r *http.Request) {
	if err := s.sessions.End(r.Context(), r.PathValue("id"), guard.Principal(r.Context())); err != nil {
		writeError(w, 0, sessionResult(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
