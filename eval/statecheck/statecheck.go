// Package statecheck evaluates a stateful task's end-state checks
// (toolenv.Task.Checks) in the world an episode leaves: a read-tool call
// with the answer it must give (toolenv.StateCheck.Call and Expect),
// made in the episode's own session before its world is released, so
// that it reads the episode's own state (an MCP server's own instance)
// and is recorded and replayed like the episode's other calls. SQL
// checks are handed to the caller's SQL evaluator.
//
// An answer matches Expect when, as JSON, it equals it: numbers within
// 1e-6, arrays as multisets (order ignored, as the answer check ignores
// row order), objects key by key. An MCP CallToolResult offers three
// answers, any of which may match: its structuredContent, its text
// parsed as JSON, and its text as a string; an isError result matches
// nothing. An expect that is a table ({"columns", "rows"}) or a list of
// rows also matches an answer that holds the same table, as the answer
// check compares tables (nl2api/answer: rows as a multiset, columns by
// their values, numbers by value): an SQL collection's read tool
// answers with its rows and more.
package statecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	nlanswer "github.com/toolenv/toolenv/nl2api/answer"
)

// Result is one check's outcome.
type Result struct {
	// Name is the check's name, else its tool or "sql".
	Name string `json:"name"`
	// Passed says the check held.
	Passed bool `json:"passed"`
	// Got is what the check read, as compared (cut at 4 KiB).
	Got json.RawMessage `json:"got,omitempty"`
	// Why says why it did not hold.
	Why string `json:"why,omitempty"`
	// InfraFailure is set when the environment failed the check's call
	// (the episode's MCP instance crashed): the check says nothing about
	// the agent.
	InfraFailure string `json:"infra_failure,omitempty"`
}

// Report is an episode's checks.
type Report struct {
	Checks []Result `json:"checks"`
	// Passed and Total count the checks.
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// Success is 1 when every check held, else 0.
	Success float64 `json:"success"`
	// InfraFailure is the first check's environment failure, if any.
	InfraFailure string `json:"infra_failure,omitempty"`
}

// Invoker makes a call in the episode's session: through the call
// pipeline, so that the answer is the episode's state's (its own MCP
// instance, or its recording).
type Invoker func(ctx context.Context, tool string, args map[string]any) *toolenv.Result

// SQLChecker evaluates one SQL check in the episode's world (the SQL
// collections' worlds do); nil fails SQL checks, saying so.
type SQLChecker func(ctx context.Context, c toolenv.StateCheck) Result

// maxGot bounds Result.Got.
const maxGot = 4 << 10

// Run evaluates checks in order.
func Run(ctx context.Context, checks []toolenv.StateCheck, call Invoker, sql SQLChecker) *Report {
	rep := &Report{Checks: []Result{}, Total: len(checks)}
	for _, c := range checks {
		var r Result
		switch {
		case c.Call != nil:
			r = runCall(ctx, c, call)
		case c.SQL != "" && sql != nil:
			r = sql(ctx, c)
		case c.SQL != "":
			r = Result{Why: "SQL checks need an SQL collection's world, and this collection has none"}
		default:
			r = Result{Why: "the check has neither a call nor an SQL query"}
		}
		if r.Name == "" {
			r.Name = name(c)
		}
		if r.Passed {
			rep.Passed++
		}
		if r.InfraFailure != "" && rep.InfraFailure == "" {
			rep.InfraFailure = r.InfraFailure
		}
		rep.Checks = append(rep.Checks, r)
	}
	if rep.Passed == rep.Total {
		rep.Success = 1
	}
	return rep
}

func name(c toolenv.StateCheck) string {
	switch {
	case c.Name != "":
		return c.Name
	case c.Call != nil:
		return c.Call.Name
	}
	return "sql"
}

func runCall(ctx context.Context, c toolenv.StateCheck, call Invoker) Result {
	args := c.Call.Args
	if args == nil {
		args = map[string]any{}
	}
	res := call(ctx, c.Call.Name, args)
	if res == nil {
		return Result{Why: "the call returned nothing"}
	}
	if !res.OK() {
		infra, _ := toolenv.InfraFailure(res)
		return Result{Why: fmt.Sprintf("the call failed (%s): %s", res.Status, res.Error), InfraFailure: infra}
	}
	ok, got, why := Match(res.Body, c.Expect)
	return Result{Passed: ok, Got: cut(got), Why: why}
}

func cut(b json.RawMessage) json.RawMessage {
	if len(b) <= maxGot {
		return b
	}
	s, _ := json.Marshal(string(b[:maxGot]) + "…")
	return s
}

// Match reports whether an answer body matches expect, with the answer
// as compared (the first candidate, or the one that matched) and why
// not.
func Match(body []byte, expect json.RawMessage) (bool, json.RawMessage, string) {
	want, err := decode(expect)
	if err != nil {
		return false, nil, fmt.Sprintf("the check's expect is not JSON: %v", err)
	}
	cands, isErr := candidates(body)
	if isErr != "" {
		return false, json.RawMessage(body), "the tool answered isError: " + isErr
	}
	if len(cands) == 0 {
		return false, json.RawMessage(body), "the answer is not JSON"
	}
	for _, c := range cands {
		if Equal(want, c) {
			return true, encode(c), ""
		}
	}
	if wt := expectedTable(want, expect); wt != nil {
		for _, c := range cands {
			raw := json.RawMessage(encode(c))
			if s, ok := c.(string); ok {
				raw = json.RawMessage(s)
			}
			if gt, err := nlanswer.FromBodies(raw); err == nil {
				if ok, _ := nlanswer.Equal(wt, gt, nlanswer.Options{}); ok {
					return true, encode(c), ""
				}
			}
		}
	}
	got := encode(cands[0])
	return false, got, fmt.Sprintf("got %s, want %s", short(got), short(expect))
}

// expectedTable reads an expect that is a table: an object with "rows"
// (and "columns"), or a non-empty list of rows (lists); else nil.
func expectedTable(want any, raw json.RawMessage) *nlanswer.Table {
	switch x := want.(type) {
	case map[string]any:
		if _, ok := x["rows"]; !ok {
			return nil
		}
		t, err := nlanswer.Gold(raw)
		if err != nil {
			return nil
		}
		return t
	case []any:
		if len(x) == 0 {
			return nil
		}
		t := &nlanswer.Table{Rows: [][]any{}}
		for _, e := range x {
			r, ok := e.([]any)
			if !ok {
				return nil
			}
			t.Rows = append(t.Rows, r)
		}
		return t
	}
	return nil
}

// candidates are the answers a body offers: a CallToolResult's
// structuredContent, its text parsed as JSON and its text; else the body
// itself. isErr is the text of an isError result.
func candidates(body []byte) (out []any, isErr string) {
	v, err := decode(body)
	if err != nil {
		return nil, ""
	}
	m, ok := v.(map[string]any)
	content, isResult := m["content"].([]any)
	if !ok || !isResult {
		return []any{v}, ""
	}
	var texts []string
	for _, c := range content {
		cm, ok := c.(map[string]any)
		if !ok {
			return []any{v}, ""
		}
		if t, _ := cm["type"].(string); t == "text" {
			s, _ := cm["text"].(string)
			texts = append(texts, s)
		}
	}
	text := strings.Join(texts, "\n")
	if e, _ := m["isError"].(bool); e {
		return nil, short([]byte(text))
	}
	if sc, ok := m["structuredContent"]; ok && sc != nil {
		out = append(out, sc)
	}
	if tv, err := decode([]byte(text)); err == nil {
		out = append(out, tv)
	}
	return append(out, text), ""
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func short(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// Equal reports whether two decoded JSON values are equal: numbers
// within 1e-6 (relative above 1), arrays as multisets, objects key by
// key.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, err1 := x.Float64()
		fy, err2 := y.Float64()
		if err1 != nil || err2 != nil {
			return x == y
		}
		return math.Abs(fx-fy) <= 1e-6*math.Max(1, math.Max(math.Abs(fx), math.Abs(fy)))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		used := make([]bool, len(y))
	next:
		for _, v := range x {
			for j, w := range y {
				if !used[j] && Equal(v, w) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	default:
		return a == b
	}
}

// Validate checks a task's checks against its collection before any
// episode runs: each has exactly one of a call and an SQL query, a
// call's tool is the collection's and does not change state (a check
// must not change the world it reads), and it says what it expects.
func Validate(checks []toolenv.StateCheck, coll *toolenv.Collection) error {
	for i, c := range checks {
		where := fmt.Sprintf("checks[%d]", i)
		if c.Name != "" {
			where += " (" + c.Name + ")"
		}
		switch {
		case c.Call != nil && c.SQL != "":
			return fmt.Errorf("%s: give a call or an SQL query, not both", where)
		case c.Call == nil && c.SQL == "":
			return fmt.Errorf("%s: give a call (a read tool and its arguments) with expect, or an SQL query with rows", where)
		case c.Call != nil:
			t := coll.Tool(c.Call.Name)
			if t == nil {
				return fmt.Errorf("%s: collection %s has no tool %q", where, coll.Name, c.Call.Name)
			}
			if t.State() == toolenv.StateWrite {
				return fmt.Errorf("%s: tool %s changes state (it is a write tool), so it cannot check the state an episode leaves; call a read tool", where, t.Name)
			}
			if len(bytes.TrimSpace(c.Expect)) == 0 {
				return fmt.Errorf("%s: the call has no expect (the answer it must give)", where)
			}
			if _, err := decode(c.Expect); err != nil {
				return fmt.Errorf("%s: expect is not JSON: %v", where, err)
			}
		}
	}
	return nil
}
