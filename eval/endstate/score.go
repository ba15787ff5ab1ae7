package endstate

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/statecheck"
	nlanswer "github.com/toolenv/toolenv/nl2api/answer"
)

// The hidden tools of a collection whose backend keeps worlds
// (backend/sqltools, backend/sqlrest): the first starts a session's
// world from an initial state, the second reports the world's state and
// runs SQL checks in it. Neither is offered to agents.
const (
	InitTool    = "initialize_world"
	InspectTool = "inspect_world"
)

// MetaEndState is the Task.Meta key of a task's gold end state: the
// Changes its gold calls make in a fresh world.
const MetaEndState = "end_state"

// Stateful reports whether t is judged on the state it leaves: it has a
// gold end state or end-state checks. (An initial state alone says
// where the world starts, not how the episode is judged.)
func Stateful(t *toolenv.Task) bool {
	return t != nil && (t.Meta[MetaEndState] != nil || len(t.Checks) > 0)
}

// GoldChanges reads t's gold end state (meta.end_state); ok is false
// when it has none.
func GoldChanges(t *toolenv.Task) (c *Changes, ok bool, err error) {
	raw, has := t.Meta[MetaEndState]
	if !has || raw == nil {
		return nil, false, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, true, err
	}
	c = &Changes{}
	if err := toolenv.DecodeJSON(b, c); err != nil {
		return nil, true, fmt.Errorf("task %s: meta.%s: %w", t.ID, MetaEndState, err)
	}
	c.Normalize()
	return c, true, nil
}

// Result is the state half of an episode's outcome. A part the task
// does not ask for is nil (zero for the counts).
type Result struct {
	// Success is 1 when every part the task has holds, else 0.
	Success float64 `json:"success"`
	// F1 is the graded alternative: the row changes' F1 (Diff.F1, 1
	// without a gold end state) times the other parts.
	F1 float64 `json:"f1"`
	// State: the world's changes equal the gold's over its tables.
	State *bool `json:"state,omitempty"`
	// NoCollateral: nothing outside the gold's rows changed.
	NoCollateral *bool `json:"no_collateral,omitempty"`
	// Answer: the final answer equals the gold answer (tasks that also
	// ask a question).
	Answer *bool `json:"answer,omitempty"`
	// Checks are the end-state checks (Task.Checks) one by one, as
	// eval/statecheck made them; Passed and Total count them.
	Checks []statecheck.Result `json:"checks,omitempty"`
	Passed int                 `json:"passed"`
	Total  int                 `json:"total"`
	// InfraFailure is set when the environment failed a check's call
	// (the episode's MCP instance crashed): the result says nothing about
	// the agent.
	InfraFailure string `json:"infra_failure,omitempty"`
	// Diff details State and NoCollateral.
	Diff *Diff `json:"diff,omitempty"`
	// Hash is the canonical hash of the world's end state (its Changes,
	// every table); GoldHash that of the gold end state. Both are empty
	// for a collection that keeps no world (an MCP server's instance).
	Hash     string `json:"hash,omitempty"`
	GoldHash string `json:"gold_hash,omitempty"`
	// Changes is the world's end state, kept for inspection.
	Changes *Changes `json:"changes,omitempty"`
	// Error says why the world's state could not be read; Success is 0.
	Error string `json:"error,omitempty"`
}

// ChecksHold reports whether every end-state check held (true when the
// task has none).
func (r *Result) ChecksHold() bool { return r.Passed == r.Total }

// Score combines the parts the task has into a Result. gold is the
// task's gold end state (nil: none), got the world's (nil: the
// collection keeps no world), checks the end-state checks' report (nil:
// the task has none) and answer the answer check (nil: the task asks no
// question).
func Score(gold, got *Changes, checks *statecheck.Report, answer *bool) *Result {
	r := &Result{Success: 1, F1: 1, Changes: got, Answer: answer}
	if got != nil {
		r.Hash = got.Hash()
	}
	if gold != nil {
		if got == nil {
			got = &Changes{}
		}
		d := Compare(gold, got)
		r.Diff, r.GoldHash = d, gold.Hash()
		st, nc := d.StateMatch, d.NoCollateral()
		r.State, r.NoCollateral = &st, &nc
		r.F1 = d.F1()
		if !st || !nc {
			r.Success = 0
		}
	}
	if checks != nil {
		r.Checks, r.Passed, r.Total, r.InfraFailure = checks.Checks, checks.Passed, checks.Total, checks.InfraFailure
		if !r.ChecksHold() {
			r.Success, r.F1 = 0, 0
		}
	}
	if answer != nil && !*answer {
		r.Success, r.F1 = 0, 0
	}
	return r
}

// Failed is the Result of an episode whose world could not be read.
func Failed(why string) *Result { return &Result{Error: why} }

// Caller makes one call of the episode in its session, through the same
// path as the agent's calls (name is a tool of the task's collection,
// hidden ones included).
type Caller func(ctx context.Context, name string, args map[string]any) *toolenv.Result

// Report is the body of the inspect tool: the world's state and the
// rows its SQL checks returned.
type Report struct {
	Hash    string        `json:"hash"`
	Changes *Changes      `json:"changes"`
	Checks  []CheckOutput `json:"checks,omitempty"`
}

// CheckOutput is what one SQL check returned in the world.
type CheckOutput struct {
	Name    string   `json:"name,omitempty"`
	Columns []string `json:"columns,omitempty"`
	Rows    [][]any  `json:"rows"`
	Error   string   `json:"error,omitempty"`
}

// Evaluate reads the end state of the episode whose calls call makes
// and scores it against t. world says the collection keeps worlds (it
// has the hidden InspectTool: SQL collections): the world's changes are
// then read and compared with the gold end state, and SQL checks run in
// it; elsewhere (an MCP server's own instance) only the checks' read
// calls judge the state. answer is the answer check's outcome (nil when
// t asks no question). It never fails: a world that cannot be read gives
// a Result with Error set and Success 0.
func Evaluate(ctx context.Context, t *toolenv.Task, call Caller, world bool, answer *bool) *Result {
	gold, _, err := GoldChanges(t)
	if err != nil {
		return Failed(err.Error())
	}
	var checks *statecheck.Report
	invoke := statecheck.Invoker(call)
	if !world {
		if gold != nil {
			return Failed("the task has a gold end state (meta." + MetaEndState + "), and collection " + t.Collection + " keeps no world to compare it with")
		}
		if len(t.Checks) > 0 {
			checks = statecheck.Run(ctx, t.Checks, invoke, nil)
		}
		return Score(nil, nil, checks, answer)
	}
	var sqlChecks []any
	for _, c := range t.Checks {
		if c.SQL != "" {
			sqlChecks = append(sqlChecks, map[string]any{"name": c.Name, "sql": c.SQL})
		}
	}
	args := map[string]any{}
	if len(sqlChecks) > 0 {
		args["checks"] = sqlChecks
	}
	res := call(ctx, InspectTool, args)
	if res == nil || !res.OK() {
		why := "no result"
		if res != nil {
			why = fmt.Sprintf("%s: %s", res.Status, res.Error)
		}
		return Failed("the world's state could not be read (" + InspectTool + "): " + why)
	}
	var rep Report
	if err := toolenv.DecodeJSON(res.Body, &rep); err != nil {
		return Failed("the world's state does not decode: " + err.Error())
	}
	if rep.Changes == nil {
		rep.Changes = &Changes{}
	}
	rep.Changes.Normalize()
	if len(t.Checks) > 0 {
		si := 0
		checks = statecheck.Run(ctx, t.Checks, invoke, func(_ context.Context, c toolenv.StateCheck) statecheck.Result {
			var out *CheckOutput
			if si < len(rep.Checks) {
				out = &rep.Checks[si]
			}
			si++
			return sqlCheck(&c, out)
		})
	}
	return Score(gold, rep.Changes, checks, answer)
}

var orderBy = regexp.MustCompile(`(?i)\border\s+by\b`)

// sqlCheck compares the rows a check's SQL returned with the rows it
// expects: as a multiset unless the SQL orders them.
func sqlCheck(c *toolenv.StateCheck, out *CheckOutput) statecheck.Result {
	if out == nil {
		return statecheck.Result{Why: "the world ran no query for this check"}
	}
	if out.Error != "" {
		return statecheck.Result{Why: "the query failed: " + out.Error}
	}
	want, err := expectedRows(c.Rows)
	if err != nil {
		return statecheck.Result{Why: err.Error()}
	}
	got := &nlanswer.Table{Columns: out.Columns, Rows: out.Rows}
	if got.Rows == nil {
		got.Rows = [][]any{}
	}
	r := statecheck.Result{}
	r.Got, _ = json.Marshal(got.Rows)
	r.Passed, r.Why = nlanswer.Equal(want, got, nlanswer.Options{Ordered: orderBy.MatchString(c.SQL)})
	if r.Passed {
		r.Why = ""
	}
	return r
}

// expectedRows reads a check's rows: a list of rows (lists of values),
// or a table {"columns", "rows"}.
func expectedRows(raw json.RawMessage) (*nlanswer.Table, error) {
	if len(strings.TrimSpace(string(raw))) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return &nlanswer.Table{Rows: [][]any{}}, nil
	}
	var rows [][]any
	if err := toolenv.DecodeJSON(raw, &rows); err == nil {
		if rows == nil {
			rows = [][]any{}
		}
		return &nlanswer.Table{Rows: rows}, nil
	}
	t, err := nlanswer.Gold(raw)
	if err != nil {
		return nil, fmt.Errorf("the check's rows are neither a list of rows nor a table: %v", err)
	}
	return t, nil
}
