package toolenv

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Task is one query an agent must solve with a collection's tools.
type Task struct {
	// ID is unique within its task set ("bird-717", StableToolBench's
	// query_id).
	ID string `json:"id"`
	// Collection names the collection whose tools solve the task.
	Collection string `json:"collection,omitempty"`
	// Query is what the user asks.
	Query string `json:"query"`
	// Evidence is extra knowledge given with the query (BIRD's evidence).
	Evidence string `json:"evidence,omitempty"`
	// Tools are the names of the tools offered to the agent; empty means
	// every tool of the collection.
	Tools []string `json:"tools,omitempty"`
	// Gold is the reference call sequence. Later calls refer to earlier
	// outputs with "$label$" (NESTful style).
	Gold []GoldCall `json:"gold,omitempty"`
	// Answer is the gold answer (the result of the gold SQL, for NL2SQL
	// tasks).
	Answer json.RawMessage `json:"answer,omitempty"`
	// Source says where the task came from ("bird", "stabletoolbench").
	Source string `json:"source,omitempty"`
	// Group is the split or group ("G1_instruction", a database name).
	Group string `json:"group,omitempty"`
	// Difficulty is the source's difficulty label.
	Difficulty string `json:"difficulty,omitempty"`
	// Meta holds source-specific fields (gold SQL, database, relevant
	// APIs).
	Meta map[string]any `json:"meta,omitempty"`
	// Initial names the state a stateful task starts from: each episode
	// of the task gets its own world made from it. Nil: the collection's
	// default state (read-only collections have only that one).
	Initial *InitialState `json:"initial_state,omitempty"`
	// Checks are the task's end-state checks: an episode succeeds on state
	// only when every check holds in the world it leaves.
	Checks []StateCheck `json:"checks,omitempty"`
}

// InitialState is where a stateful task's world starts. SQL and
// Database name SQL-backed collections (given both, the script runs over
// the file); Files seeds the working directory of an MCP server started
// for the episode. Paths are relative to the task file that names them
// (ReadTasks resolves them).
type InitialState struct {
	// Name is a named initial state the collection declares ("" : its
	// default).
	Name string `json:"name,omitempty"`
	// SQL is an SQL script run over the collection's database to make the
	// initial state (INSERT, UPDATE, DELETE statements): the script
	// itself, or the path of a file holding it (one line ending in .sql).
	SQL string `json:"sql,omitempty"`
	// Database is a SQLite database file to start from instead of the
	// collection's.
	Database string `json:"database,omitempty"`
	// Files is a folder whose contents are copied into an MCP server's
	// per-episode working directory before the server starts.
	Files string `json:"files,omitempty"`
}

// StateCheck is one end-state check of a stateful task: an SQL query
// with the rows it must return, or a read-tool call with the answer it
// must give. Exactly one of SQL and Call is set.
type StateCheck struct {
	// Name says what the check is for, in reports.
	Name string `json:"name,omitempty"`
	// SQL is a read-only query run in the episode's world.
	SQL string `json:"sql,omitempty"`
	// Rows are the rows SQL must return, as JSON arrays of values in
	// column order; order matters only when SQL has an ORDER BY.
	Rows json.RawMessage `json:"rows,omitempty"`
	// Call is a read-tool call made in the episode's world.
	Call *GoldCall `json:"call,omitempty"`
	// Expect is the answer Call must give (compared as the task answer
	// check compares answers).
	Expect json.RawMessage `json:"expect,omitempty"`
}

// GoldCall is one call of a gold sequence, in the NESTful format.
type GoldCall struct {
	Name  string         `json:"name"`
	Args  map[string]any `json:"arguments"`
	Label string         `json:"label,omitempty"`
}

// Trajectory is what an agent did on one task in one run.
type Trajectory struct {
	TaskID string `json:"task_id"`
	Agent  string `json:"agent"`
	Model  string `json:"model,omitempty"`
	Run    int    `json:"run"`
	// Steps are the agent's steps in order.
	Steps []Step `json:"steps"`
	// Answer is the agent's final answer, if it gave one.
	Answer string `json:"answer,omitempty"`
	// Finished says the agent ended with a final answer (ToolBench's
	// Finish/give_answer); GaveUp that it gave up.
	Finished bool `json:"finished"`
	GaveUp   bool `json:"gave_up,omitempty"`
	// Error is set when the episode could not run to its end (the model
	// was unreachable); the episode is recorded, not lost.
	Error  string `json:"error,omitempty"`
	Counts Counts `json:"counts"`
}

// Step is one step of a trajectory: what the model thought, the call it
// made and what it observed.
type Step struct {
	Thought     string    `json:"thought,omitempty"`
	Call        *GoldCall `json:"call,omitempty"`
	Observation string    `json:"observation,omitempty"`
	Status      Status    `json:"status,omitempty"`
	Source      Source    `json:"source,omitempty"`
	// Raw is the model's output for this step, as received.
	Raw string `json:"raw,omitempty"`
}

// Counts are the costs of an episode.
type Counts struct {
	LLMCalls         int           `json:"llm_calls"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	ToolCalls        int           `json:"tool_calls"`
	Wall             time.Duration `json:"wall_ns"`
}

// Resolve makes s's paths absolute, relative to dir (the task file's
// folder), and reads an SQL script given as a file (SQL: one line ending
// in .sql) into SQL.
func (s *InitialState) Resolve(dir string) error {
	if s == nil {
		return nil
	}
	dir = absDir(dir)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	s.Database, s.Files = abs(s.Database), abs(s.Files)
	if q := strings.TrimSpace(s.SQL); strings.HasSuffix(strings.ToLower(q), ".sql") && !strings.ContainsAny(q, "\n;") {
		data, err := os.ReadFile(abs(q))
		if err != nil {
			return fmt.Errorf("initial_state.sql: %w (a value ending in .sql is the path of a script, relative to the task file)", err)
		}
		s.SQL = string(data)
	}
	return nil
}
