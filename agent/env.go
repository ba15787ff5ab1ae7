package agent

import (
	"context"
	"encoding/json"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
)

// Model is the chat endpoint an agent talks to. *llm.Client implements
// it.
type Model interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ Model = (*llm.Client)(nil)

// Env is the world an agent acts in: toolenv in-process (NewLocal) or a
// running toolenv server.
type Env interface {
	// Start begins an episode of task: it opens a session and runs the
	// task's hidden initialisation (the NL2SQL starting table), so that
	// the first call the agent makes finds its data.
	Start(ctx context.Context, task *toolenv.Task) (Session, error)
}

// Session is one episode's view of the environment.
type Session interface {
	// ID is the session id calls carry.
	ID() string
	// Tools are the tools offered for the task, in a stable order.
	Tools() []*toolenv.Tool
	// Call invokes a tool. It never returns nil: a failure is a Result
	// whose Status says what went wrong.
	Call(ctx context.Context, c Call) *toolenv.Result
	// Close ends the session.
	Close(ctx context.Context) error
}

// Call is one call an agent makes: a tool name, its arguments and the
// label its output is stored under (NESTful "label", for environments
// that keep labelled results; others ignore it).
type Call struct {
	Name  string
	Args  map[string]any
	Label string
}

// Result is a call's result as an Outcome keeps it: the call, its status
// and body.
type Result struct {
	Name   string          `json:"name"`
	Label  string          `json:"label,omitempty"`
	Status toolenv.Status  `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`
}
