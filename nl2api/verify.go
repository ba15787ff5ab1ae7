package nl2api

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

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
	reason, detail, _ = verify(ctx, h, c, t, session)
	return reason, detail
}

// verify is Verify, and says whether the task failed because a call ran
// out of the backend's time limit (then its reason says nothing of the
// task: it is verified again under a longer limit).
func verify(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, t *toolenv.Task, session string) (reason, detail string, timedOut bool) {
	if d, ok := h.(sessionDropper); ok {
		defer d.DropSession(session)
	}
	defer func() {
		if r := recover(); r != nil {
			rj := internalRejection(r)
			reason, detail, timedOut = rj.Reason, rj.Detail, false
		}
	}()
	if _, w := t.Meta[MetaWrite]; w {
		// A write task is verified on the state it leaves.
		reason, detail := verifyWrite(ctx, h, c, t, session)
		return reason, detail, false
	}
	if reason, detail := checkSchemas(c, t); reason != "" {
		return reason, detail, false
	}
	steps, err := sqltools.Replay(ctx, h, c, t, session)
	if err != nil {
		status := "error"
		if n := len(steps); n > 0 && steps[n-1].Result != nil {
			status = string(steps[n-1].Result.Status)
		}
		timedOut = toolenv.StatusOf(err) == toolenv.StatusTimeout && ctx.Err() == nil
		return "gold call fails: " + status, err.Error(), timedOut
	}
	bodies, err := sqltools.AnswerBodies(t, steps)
	if err != nil {
		return "no answer", err.Error(), false
	}
	got, err := answer.FromBodies(bodies...)
	if err != nil {
		return "no answer", err.Error(), false
	}
	gold, err := answer.Gold(t.Answer)
	if err != nil {
		return "bad gold answer", err.Error(), false
	}
	ordered, _ := t.Meta[sqltools.MetaOrdered].(bool)
	if ok, why := answer.Equal(gold, got, answer.Options{Ordered: ordered}); !ok {
		return "answer differs", why, false
	}
	return "", "", false
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

// opener opens a collection's backend whose calls have the time limit
// given.
type opener func(ctx context.Context, limit time.Duration) (toolenv.Handler, func(), error)

// verifyAll verifies tasks of collection c with opt.Workers workers on a
// backend open opens under each of the build's time limits in turn: the
// tasks whose calls ran out of time under the first are verified again
// under the second, and one that runs out of that too fails the build
// (opt.limits.Err), never dropped. It returns the failures by task index.
func verifyAll(ctx context.Context, open opener, c *toolenv.Collection, tasks []*toolenv.Task, stage string, opt *Options) (map[int]*rejection, error) {
	out := map[int]*rejection{}
	todo := make([]int, len(tasks))
	for i := range todo {
		todo[i] = i
	}
	steps := opt.limits.steps()
	for k, limit := range steps {
		h, closer, err := open(ctx, limit)
		if err != nil {
			return nil, err
		}
		label := stage
		if k > 0 {
			label = fmt.Sprintf("%s (again, within %s)", stage, limit)
		}
		timedOut := verifyRound(ctx, h, c, tasks, todo, label, opt, out)
		closer()
		for _, i := range timedOut {
			what := fmt.Sprintf("task %s", tasks[i].ID)
			if k == len(steps)-1 {
				opt.limits.fail(stage, what)
			} else {
				opt.limits.retry(stage, what)
			}
		}
		if len(timedOut) == 0 {
			break
		}
		todo = timedOut
	}
	return out, nil
}

// verifyRound verifies the tasks todo names through h, records their
// failures in out (by task index) and returns the tasks that ran out of
// the backend's time limit, in order.
func verifyRound(ctx context.Context, h toolenv.Handler, c *toolenv.Collection, tasks []*toolenv.Task, todo []int, stage string, opt *Options, out map[int]*rejection) []int {
	var mu sync.Mutex
	var timedOut []int
	jobs := make(chan int)
	var wg sync.WaitGroup
	done := 0
	opt.progress(stage, 0, len(todo))
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				session := fmt.Sprintf("verify-%s-%s", c.Name, tasks[i].ID)
				reason, detail, late := verify(ctx, h, c, tasks[i], session)
				mu.Lock()
				switch {
				case late:
					timedOut = append(timedOut, i)
				case reason != "":
					out[i] = &rejection{Stage: "verify", Reason: reason, Detail: detail}
				}
				done++
				opt.progress(stage, done, len(todo))
				mu.Unlock()
			}
		}()
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	sort.Ints(timedOut)
	return timedOut
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
