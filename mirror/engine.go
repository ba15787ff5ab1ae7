package mirror

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/llm"
)

// ChatModel is a chat-completion endpoint. *llm.Client implements it
// (with record/replay when given a Recorder).
type ChatModel interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ ChatModel = (*llm.Client)(nil)

// Engine runs the stages over one dataset of one store.
type Engine struct {
	// Store holds the dataset.
	Store Store
	// Dataset names the dataset within the store.
	Dataset string
	// Tools are the APIs to mirror.
	Tools []*toolenv.Tool
	// Collections are the tools' collections, so that a call carries its
	// collection's policy (validation, feedback) from the start of the
	// pipeline; optional.
	Collections []*toolenv.Collection
	// Tasks are the collections' tasks; their gold calls give the
	// sampler known argument values.
	Tasks []*toolenv.Task
	// Invoker makes real calls: toolenv's call path (the invoke
	// pipeline over the registry), configured to reach the real API.
	Invoker toolenv.Handler
	// Model answers every model-facing step; nil means no model: the
	// sampler writes requests, and the documentation check, synthesis
	// and rationales are skipped.
	Model ChatModel
	// ModelName is the model asked for; JudgeModel the one asked for
	// the documentation check (default ModelName) and ExplainModel the
	// one asked for rationales (default ModelName; the paper used o1).
	ModelName, JudgeModel, ExplainModel string
	// Logger logs; nil discards.
	Logger *slog.Logger
	// Progress receives a progress bar per stage (plain lines when it is
	// not a terminal); nil shows none.
	Progress io.Writer

	mu     sync.Mutex
	nTools int
	byID   map[string]*toolenv.Tool
	byName map[string]*toolenv.Collection
	docs   map[string]string
}

// document is Document(t), rendered once per tool.
func (e *Engine) document(t *toolenv.Tool) string {
	e.mu.Lock()
	d, ok := e.docs[t.ID]
	e.mu.Unlock()
	if ok {
		return d
	}
	d = Document(t)
	e.mu.Lock()
	if e.docs == nil {
		e.docs = map[string]string{}
	}
	e.docs[t.ID] = d
	e.mu.Unlock()
	return d
}

// index (re)builds the lookups when Tools or Collections changed.
func (e *Engine) index() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.byID != nil && e.nTools == len(e.Tools) && len(e.byName) == len(e.Collections) {
		return
	}
	byID := make(map[string]*toolenv.Tool, len(e.Tools))
	for _, t := range e.Tools {
		byID[t.ID] = t
	}
	byName := make(map[string]*toolenv.Collection, len(e.Collections))
	for _, c := range e.Collections {
		byName[c.Name] = c
	}
	e.byID, e.byName, e.nTools = byID, byName, len(e.Tools)
}

// collection returns the collection named name, or nil.
func (e *Engine) collection(name string) *toolenv.Collection {
	e.index()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byName[name]
}

func (e *Engine) log() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

func (e *Engine) bar(total int, desc string) *progress.Bar { return barOn(e.Progress, total, desc) }

// barOn returns a progress bar writing to w (nil: nowhere).
func barOn(w io.Writer, total int, desc string) *progress.Bar {
	if w == nil {
		w = io.Discard
	}
	return progress.New(w, total, desc)
}

// tool returns the tool of an ID, or nil.
func (e *Engine) tool(id string) *toolenv.Tool {
	e.index()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byID[id]
}

// sortedTools returns the tools in ID order.
func (e *Engine) sortedTools() []*toolenv.Tool {
	out := append([]*toolenv.Tool(nil), e.Tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (e *Engine) check() error {
	if e.Store == nil {
		return fmt.Errorf("mirror: no store")
	}
	if e.Dataset == "" {
		return fmt.Errorf("mirror: no dataset name")
	}
	return nil
}

func (e *Engine) judgeModel() string {
	if e.JudgeModel != "" {
		return e.JudgeModel
	}
	return e.ModelName
}

func (e *Engine) explainModel() string {
	if e.ExplainModel != "" {
		return e.ExplainModel
	}
	return e.ModelName
}

// decodeArgs decodes a request's canonical arguments.
func decodeArgs(canon string) (map[string]any, error) {
	var args map[string]any
	if err := toolenv.DecodeJSON([]byte(canon), &args); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// stageTime records when a stage ended, for the report.
func (e *Engine) stageDone(ctx context.Context, stage string, started time.Time) {
	_ = e.Store.SetMeta(ctx, e.Dataset, "stage:"+stage+":elapsed", time.Since(started).Round(time.Millisecond).String())
}
