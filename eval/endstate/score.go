package endstate

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
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
// gold end state, end-state checks or an initial state.
func Stateful(t *toolenv.Task) bool {
	return t != nil && (t.Meta[MetaEndState] != nil || len(t.Checks) > 0 || t.Initial != nil)
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

// CheckResult is the outcome of one end-state check.
type CheckResult struct {
	Name string `json:"name,omitempty"`
	OK   bool   `json:"ok"`
	// Detail says why a check failed.
	Detail string `json:"detail,omitempty"`
}

// Result is the state half of an episode's outcome. A check the task
// does not ask for is nil.
type Result struct {
	// Success is 1 when every check the task has holds, else 0.
	Success float64 `json:"success"`
	// F1 is the graded alternative: the row changes' F1 (Diff.F1, 1
	// without a gold end state) times the other checks.
	F1 float64 `json:"f1"`
	// State: the world's changes equal the gold's over its tables.
	State *bool `json:"state,omitempty"`
	// NoCollateral: nothing outside the gold's rows changed.
	NoCollateral *bool `json:"no_collateral,omitempty"`
	// Checks: every end-state check holds (Task.Checks).
	Checks *bool `json:"checks,omitempty"`
	// Answer: the final answer equals the gold answer (tasks that also
	// ask a question).
	Answer *bool `json:"answer,omitempty"`
	// Diff details State and NoCollateral.
	Diff *Diff `json:"diff,omitempty"`
	// CheckResults are the checks one by one.
	CheckResults []CheckResult `json:"check_results,omitempty"`
	// Hash is the canonical hash of the world's end state (its Changes,
	// every table); GoldHash that of the gold end state.
	Hash     string `json:"hash"`
	GoldHash string `json:"gold_hash,omitempty"`
	// Changes is the world's end state, kept for inspection.
	Changes *Changes `json:"changes,omitempty"`
	// Error says why the world's state could not be read; Success is 0.
	Error string `json:"error,omitempty"`
}

// Score combines the checks the task has into a Result. gold is the
// task's gold end state (nil: none), got the world's, checks the
// end-state checks' outcomes (nil: the task has none) and answer the
// answer check (nil: the task asks no question).
func Score(gold, got *Changes, checks []CheckResult, answer *bool) *Result {
	r := &Result{Success: 1, F1: 1, Changes: got, Hash: got.Hash(), Answer: answer, CheckResults: checks}
	if gold != nil {
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
		ok := true
		for _, c := range checks {
			ok = ok && c.OK
		}
		r.Checks = &ok
		if !ok {
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
// and scores it against t. answer is the answer check's outcome (nil
// when t asks no question). It never fails: a world that cannot be read
// gives a Result with Error set and Success 0.
func Evaluate(ctx context.Context, t *toolenv.Task, call Caller, answer *bool) *Result {
	gold, _, err := GoldChanges(t)
	if err != nil {
		return Failed(err.Error())
	}
	var sqlChecks []map[string]any
	for _, c := range t.Checks {
		if c.SQL != "" {
			sqlChecks = append(sqlChecks, map[string]any{"name": c.Name, "sql": c.SQL})
		}
	}
	args := map[string]any{}
	if len(sqlChecks) > 0 {
		list := make([]any, len(sqlChecks))
		for i, c := range sqlChecks {
			list[i] = c
		}
		args["checks"] = list
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
	var checks []CheckResult
	if len(t.Checks) > 0 {
		checks = make([]CheckResult, 0, len(t.Checks))
		si := 0
		for i, c := range t.Checks {
			name := c.Name
			if name == "" {
				name = fmt.Sprintf("check %d", i+1)
			}
			var cr CheckResult
			switch {
			case c.SQL != "":
				var out *CheckOutput
				if si < len(rep.Checks) {
					out = &rep.Checks[si]
				}
				si++
				cr = sqlCheck(name, &c, out)
			case c.Call != nil:
				cr = callCheck(ctx, name, &c, call)
			default:
				cr = CheckResult{Name: name, Detail: "the check has neither sql nor call"}
			}
			checks = append(checks, cr)
		}
	}
	return Score(gold, rep.Changes, checks, answer)
}

var orderBy = regexp.MustCompile(`(?i)\border\s+by\b`)

// sqlCheck compares the rows a check's SQL returned with the rows it
// expects: as a multiset unless the SQL orders them.
func sqlCheck(name string, c *toolenv.StateCheck, out *CheckOutput) CheckResult {
	cr := CheckResult{Name: name}
	if out == nil {
		cr.Detail = "the world ran no query for this check"
		return cr
	}
	if out.Error != "" {
		cr.Detail = "the query failed: " + out.Error
		return cr
	}
	want, err := expectedRows(c.Rows)
	if err != nil {
		cr.Detail = err.Error()
		return cr
	}
	got := &nlanswer.Table{Columns: out.Columns, Rows: out.Rows}
	if got.Rows == nil {
		got.Rows = [][]any{}
	}
	cr.OK, cr.Detail = nlanswer.Equal(want, got, nlanswer.Options{Ordered: orderBy.MatchString(c.SQL)})
	return cr
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

// callCheck makes a check's read call and compares its answer with the
// one it expects (as the answer check compares answers).
func callCheck(ctx context.Context, name string, c *toolenv.StateCheck, call Caller) CheckResult {
	cr := CheckResult{Name: name}
	res := call(ctx, c.Call.Name, c.Call.Args)
	if res == nil || !res.OK() {
		why := "no result"
		if res != nil {
			why = fmt.Sprintf("%s: %s", res.Status, res.Error)
		}
		cr.Detail = fmt.Sprintf("the call %s failed: %s", c.Call.Name, why)
		return cr
	}
	want, err := ExpectedAnswer(c.Expect)
	if err != nil {
		cr.Detail = err.Error()
		return cr
	}
	got, err := nlanswer.FromBodies(res.Body)
	if err != nil {
		// A body that is no table: compared as one value.
		var v any
		if derr := toolenv.DecodeJSON(res.Body, &v); derr != nil {
			cr.Detail = "the call's answer does not decode: " + derr.Error()
			return cr
		}
		got = &nlanswer.Table{Rows: [][]any{{v}}}
	}
	cr.OK, cr.Detail = nlanswer.Equal(want, got, nlanswer.Options{})
	if !cr.OK {
		cr.Detail = fmt.Sprintf("%s answered differently: %s", c.Call.Name, cr.Detail)
	}
	return cr
}

// ExpectedAnswer reads a call check's expect: a table {"columns",
// "rows"}, a list of rows, a list of values or one value.
func ExpectedAnswer(raw json.RawMessage) (*nlanswer.Table, error) {
	var v any
	if err := toolenv.DecodeJSON(raw, &v); err != nil {
		return nil, fmt.Errorf("the check's expect is not JSON: %v", err)
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["rows"]; ok {
			return nlanswer.Gold(raw)
		}
		return &nlanswer.Table{Rows: [][]any{{string(raw)}}}, nil
	case []any:
		t := &nlanswer.Table{Rows: [][]any{}}
		for _, e := range x {
			if r, ok := e.([]any); ok {
				t.Rows = append(t.Rows, r)
			} else {
				t.Rows = append(t.Rows, []any{e})
			}
		}
		return t, nil
	}
	return &nlanswer.Table{Rows: [][]any{{v}}}, nil
}
