package nl2api

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api/answer"
	"github.com/toolenv/toolenv/validate"
)

// sessionDropper is a backend whose sessions can be ended early.
type sessionDropper interface{ DropSession(id string) bool }

// Verify replays task t through h, the handler that serves collection c,
// in a fresh session, and compares its answer with the gold answer. It
// returns "" when they agree, else why not.
func Verify(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, t *toolenv.Task, session string) (reason, detail string) {
	if d, ok := h.(sessionDropper); ok {
		defer d.DropSession(session)
	}
	defer func() {
		if r := recover(); r != nil {
			rj := internalRejection(r)
			reason, detail = rj.Reason, rj.Detail
		}
	}()
	if reason, detail := checkSchemas(c, t); reason != "" {
		return reason, detail
	}
	steps, err := sqltools.Replay(ctx, h, c, t, session)
	if err != nil {
		status := "error"
		if n := len(steps); n > 0 && steps[n-1].Result != nil {
			status = string(steps[n-1].Result.Status)
		}
		return "gold call fails: " + status, err.Error()
	}
	bodies, err := sqltools.AnswerBodies(t, steps)
	if err != nil {
		return "no answer", err.Error()
	}
	got, err := answer.FromBodies(bodies...)
	if err != nil {
		return "no answer", err.Error()
	}
	gold, err := answer.Gold(t.Answer)
	if err != nil {
		return "bad gold answer", err.Error()
	}
	ordered, _ := t.Meta[sqltools.MetaOrdered].(bool)
	if ok, why := answer.Equal(gold, got, answer.Options{Ordered: ordered}); !ok {
		return "answer differs", why
	}
	return "", ""
}

// checkSchemas validates every init and gold call strictly against the
// schema of the tool as the task shows it (SLOT/SEL: column enums narrowed
// to the task's starting table), as a server's strict pipeline will.
func checkSchemas(c *toolenv.Collection, t *toolenv.Task) (reason, detail string) {
	var cols []sqltools.Column
	if _, ok := t.Meta[sqltools.MetaColumns]; ok {
		var err error
		if cols, err = sqltools.TaskColumns(t); err != nil {
			return "task tools", err.Error()
		}
	}
	inits, err := sqltools.InitCalls(t)
	if err != nil {
		return "bad init", err.Error()
	}
	shown := map[string]*toolenv.Tool{}
	var v validate.Validator
	for _, g := range append(inits, t.Gold...) {
		tool := shown[g.Name]
		if tool == nil {
			if tool = c.Tool(g.Name); tool == nil {
				return "gold call fails schema", fmt.Sprintf("no tool %s", g.Name)
			}
			if cols != nil {
				tool = sqltools.ForColumns([]*toolenv.Tool{tool}, cols)[0]
			}
			shown[g.Name] = tool
		}
		if out := v.Args(tool.Input, sqltools.CallArgs(g, tool), false); len(out.Problems) > 0 {
			p := out.Problems[0]
			return "gold call fails schema", fmt.Sprintf("%s (%s): %s: %s", g.Name, g.Label, p.Param, p.Message)
		}
	}
	return "", ""
}

// verifyAll verifies tasks through h with opt.Workers workers and returns
// the failures by task index.
func verifyAll(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, tasks []*toolenv.Task, stage string, opt *Options) map[int]*rejection {
	out := map[int]*rejection{}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	done := 0
	opt.progress(stage, 0, len(tasks))
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				session := fmt.Sprintf("verify-%s-%s", c.Name, tasks[i].ID)
				reason, detail := Verify(ctx, h, c, tasks[i], session)
				mu.Lock()
				if reason != "" {
					out[i] = &rejection{Stage: "verify", Reason: reason, Detail: detail}
				}
				done++
				opt.progress(stage, done, len(tasks))
				mu.Unlock()
			}
		}()
	}
	for i := range tasks {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

// marshalMeta round-trips a task through JSON, so that what is verified
// is exactly what tasks.jsonl holds (numbers as json.Number, meta as
// decoded JSON).
func marshalMeta(t *toolenv.Task) (*toolenv.Task, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var out toolenv.Task
	if err := toolenv.DecodeJSON(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
