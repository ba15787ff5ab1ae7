package simulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
)

// ChatModel is the chat-completion endpoint a Simulator talks to.
// *llm.Client implements it.
type ChatModel interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ ChatModel = (*llm.Client)(nil)

// The prompts a Simulator can use.
const (
	// PromptSFT is MirrorAPI's SFT mode (SFTSystemPrompt), the default.
	PromptSFT = "sft"
	// PromptCoT is MirrorAPI's chain-of-thought mode (CoTSystemPrompt).
	PromptCoT = "cot"
	// PromptSTB is StableToolBench's prompt for general models
	// (GPTSystemPrompt); "gpt" is accepted as another name for it.
	PromptSTB = "stb"
)

// The forms the request can take in MirrorAPI's user turn.
const (
	// RequestTraining is the form of MirrorAPI's training and benchmark
	// data: {'category', 'tool_name', 'api_name', 'tool_input': '<JSON>',
	// 'strip': 'filter'}. The default.
	RequestTraining = "training"
	// RequestServer is the form StableToolBench's main_mirrorapi.py
	// sends: the tool input dict alone.
	RequestServer = "server"
)

// Meta keys of simulated results.
const (
	MetaPrompt    = "simulator_prompt"    // sft, cot or stb
	MetaModel     = "simulator_model"     // the model name
	MetaAttempts  = "simulator_attempts"  // how many completions were asked for
	MetaExamples  = "simulator_examples"  // how many few-shot examples the prompt held
	MetaRepairs   = "simulator_repairs"   // what had to be fixed to read the answer
	MetaInvalid   = "simulator_invalid"   // the validation checks the response failed
	MetaMechanism = "simulator_mechanism" // the CoT prompt's rationale (clipped)
	// MetaFailure is set when the simulator could not answer at all:
	// "endpoint" (the LLM endpoint failed) or "unparseable" (no attempt
	// gave {error, response} JSON). A caller falls back on it.
	MetaFailure = "simulator_failure"
)

// Options configure a Simulator. The zero value gives MirrorAPI's SFT
// prompt at temperature 0 with seed 42.
type Options struct {
	// Model is the model name sent to the endpoint.
	Model string
	// Prompt is PromptSFT (default), PromptCoT or PromptSTB.
	Prompt string
	// RequestStyle is RequestTraining (default) or RequestServer; it
	// only matters for the MirrorAPI prompts.
	RequestStyle string
	// Temperature of the first attempt; default 0. Each retry after an
	// unreadable answer adds RetryTemperatureStep, since a greedy
	// decoder would repeat the same answer.
	Temperature float64
	// Seed is sent with every request; default 42 (MirrorAPI's server).
	Seed int64
	// NoSeed leaves the seed out (for endpoints that reject it).
	NoSeed bool
	// MaxTokens bounds the answer; default 2048 for the MirrorAPI
	// prompts and 1024 for StableToolBench's, as their servers do.
	MaxTokens int
	// FewShot is how many examples the prompt may hold; default 5 (as
	// StableToolBench); negative means none.
	FewShot int
	// ExampleBudget is the most characters the examples may take, as
	// StableToolBench's str(examples); default 2048.
	ExampleBudget int
	// ExamplePool is how many recorded calls examples are chosen from;
	// default 200.
	ExamplePool int
	// Attempts is how many completions are asked for before giving up on
	// an unreadable answer; default 3 (StableToolBench's max_retries).
	Attempts int
	// Timeout bounds one simulation, all attempts included; 0 means the
	// caller's context alone.
	Timeout time.Duration
	// Examples gives recorded calls for few-shot examples; nil means the
	// documentation's examples only.
	Examples ExampleSource
	// Neighbours gives the APIs a response may be mistaken for; nil
	// skips that check.
	Neighbours Neighbours
	// Logger logs failed attempts; nil discards.
	Logger *slog.Logger
}

// RetryTemperatureStep is added to the temperature at each retry.
const RetryTemperatureStep = 0.3

// Simulator answers calls by asking an LLM to play the API, with
// MirrorAPI's or StableToolBench's prompts. It is a toolenv.Handler, safe
// for concurrent use.
type Simulator struct {
	model  ChatModel
	opts   Options
	log    *slog.Logger
	shapes shapeCache
}

var _ toolenv.Handler = (*Simulator)(nil)

// New returns a Simulator asking model. It fails on an unknown prompt or
// request style.
func New(model ChatModel, opts Options) (*Simulator, error) {
	if model == nil {
		return nil, errors.New("simulate: no chat model (configure an OpenAI-compatible endpoint)")
	}
	switch strings.ToLower(opts.Prompt) {
	case "", PromptSFT:
		opts.Prompt = PromptSFT
	case PromptCoT:
		opts.Prompt = PromptCoT
	case PromptSTB, "gpt":
		opts.Prompt = PromptSTB
	default:
		return nil, fmt.Errorf("simulate: unknown prompt %q (use sft, cot or stb)", opts.Prompt)
	}
	switch opts.RequestStyle {
	case "":
		opts.RequestStyle = RequestTraining
	case RequestTraining, RequestServer:
	default:
		return nil, fmt.Errorf("simulate: unknown request style %q (use training or server)", opts.RequestStyle)
	}
	if opts.Seed == 0 {
		opts.Seed = 42
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 2048
		if opts.Prompt == PromptSTB {
			opts.MaxTokens = 1024
		}
	}
	if opts.FewShot == 0 {
		opts.FewShot = 5
	}
	if opts.ExampleBudget <= 0 {
		opts.ExampleBudget = 2048
	}
	if opts.ExamplePool <= 0 {
		opts.ExamplePool = 200
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Simulator{model: model, opts: opts, log: log}, nil
}

// Invoke simulates call. A successful answer that fails validation is
// returned with a warning and Meta["cacheable"] = "false"; an endpoint
// failure or an answer that stays unreadable is a failed Result with
// Meta[MetaFailure] set.
func (s *Simulator) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	if call == nil || call.Tool == nil {
		return toolenv.Errorf(toolenv.StatusUnknownTool, "resolve the tool before calling the simulator", "simulator: call has no tool")
	}
	if s.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	doc := call.Doc
	if doc == nil {
		doc = call.Tool
	}
	examples := s.examples(ctx, doc, call.Tool.ID, call.Args)
	msgs := s.messages(doc, call.Args, examples)
	var lastErr error
	var lastText string
	for attempt := 0; attempt < s.opts.Attempts; attempt++ {
		req := s.request(msgs, attempt)
		resp, err := s.model.Chat(ctx, req)
		if err != nil {
			return s.endpointFailure(ctx, call, err, attempt+1)
		}
		text := resp.Text()
		out, err := parseOutput(text)
		if err != nil {
			lastErr, lastText = err, text
			s.log.LogAttrs(ctx, slog.LevelWarn, "simulator answer unreadable; asking again",
				slog.String("tool", call.Tool.ID), slog.Int("attempt", attempt+1), slog.String("err", err.Error()), slog.String("answer", clip(text, 200)))
			continue
		}
		if len(resp.Choices) > 0 && resp.Choices[0].FinishReason == "length" && !out.Truncated {
			out.Truncated = true
			out.Repairs = append(out.Repairs, "finish_reason_length")
		}
		return s.result(call, doc, out, attempt+1, len(examples))
	}
	r := &toolenv.Result{
		Status: toolenv.StatusUpstreamError,
		Error: fmt.Sprintf("simulator: after %d attempts the model's answer is still not {\"error\", \"response\"} JSON (%v); last answer: %q",
			s.opts.Attempts, lastErr, clip(lastText, 200)),
		Hint:   "the model behind --llm-url does not follow the simulation prompt; try --sim-prompt stb for general chat models, or a MirrorAPI model",
		Source: toolenv.SourceSimulator,
	}
	s.mark(r, s.opts.Attempts, len(examples))
	r.SetMeta(MetaFailure, "unparseable")
	r.SetMeta(MetaCacheable, "false")
	return r
}

// request builds the chat request of one attempt.
func (s *Simulator) request(msgs []llm.Message, attempt int) *llm.Request {
	temp := s.opts.Temperature + RetryTemperatureStep*float64(attempt)
	if temp > 1 {
		temp = 1
	}
	req := &llm.Request{Model: s.opts.Model, Messages: msgs, Temperature: llm.Float(temp), MaxTokens: s.opts.MaxTokens}
	if !s.opts.NoSeed {
		req.Seed = llm.Int(s.opts.Seed)
	}
	if s.opts.Prompt == PromptSTB {
		req.ResponseFormat = map[string]string{"type": "json_object"} // as StableToolBench's server asks
	}
	return req
}

// examples chooses the few-shot examples for a call.
func (s *Simulator) examples(ctx context.Context, doc *toolenv.Tool, toolID string, args map[string]any) []example {
	if s.opts.FewShot < 0 {
		return nil
	}
	cands, err := gatherExamples(ctx, doc, toolID, s.opts.Examples, s.opts.ExamplePool)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "simulator: recorded examples unavailable; prompting without them", slog.String("tool", toolID), slog.String("err", err.Error()))
	}
	return chooseExamples(cands, args, s.opts.FewShot, s.opts.ExampleBudget, func(exs []example) int {
		return len([]rune(pyfmt.Repr(exampleList(doc, exs))))
	})
}

// exampleList is the examples as StableToolBench's server lists them:
// list(cache.items()), pairs of str(tool_input) and the cached
// {'error', 'response'} dict.
func exampleList(doc *toolenv.Tool, exs []example) []any {
	out := make([]any, len(exs))
	for i, e := range exs {
		var resp any = ""
		if len(e.body) > 0 {
			if v, err := pyfmt.DecodeOrdered(e.body); err == nil {
				resp = v
			}
		}
		out[i] = pyfmt.Tuple{pyfmt.Repr(argsObject(doc, e.args)), pyfmt.Dict{{Key: "error", Value: e.err}, {Key: "response", Value: resp}}}
	}
	return out
}

// messages builds the conversation for the configured prompt.
func (s *Simulator) messages(doc *toolenv.Tool, args map[string]any, exs []example) []llm.Message {
	if s.opts.Prompt == PromptSTB {
		return []llm.Message{
			{Role: "system", Content: GPTSystemPrompt},
			{Role: "user", Content: stbUser(doc, args, exs)},
		}
	}
	system := SFTSystemPrompt
	if s.opts.Prompt == PromptCoT {
		system = CoTSystemPrompt
	}
	apiDoc := mirrorDoc(doc)
	msgs := []llm.Message{{Role: "system", Content: system}}
	for _, e := range exs {
		msgs = append(msgs,
			llm.Message{Role: "user", Content: mirrorUser(apiDoc, s.requestPart(doc, e.args))},
			llm.Message{Role: "assistant", Content: envelopeText(e.err, e.body)})
	}
	return append(msgs, llm.Message{Role: "user", Content: mirrorUser(apiDoc, s.requestPart(doc, args))})
}

// requestPart is the request part of MirrorAPI's user turn.
func (s *Simulator) requestPart(doc *toolenv.Tool, args map[string]any) any {
	if s.opts.RequestStyle == RequestServer {
		return argsObject(doc, args)
	}
	return mirrorRequest(doc, args)
}

// stbUser is the user turn of StableToolBench's prompt (server/main.py
// fake_response_function_chat): the doc, the examples cut to 2048
// characters, and the input, each as Python's str() writes it.
func stbUser(doc *toolenv.Tool, args map[string]any, exs []example) string {
	ex := []rune(pyfmt.Repr(exampleList(doc, exs)))
	if len(ex) > 2048 {
		ex = ex[:2048]
	}
	return "API Documentation:" + pyfmt.Repr(gptDoc(doc)) + "\n" + "API Examples:" + string(ex) + "\n" + "API Input:" + pyfmt.Repr(argsObject(doc, args)) + "\n"
}

// result turns a parsed answer into a Result, validating a successful one.
func (s *Simulator) result(call *toolenv.Call, doc *toolenv.Tool, out *output, attempts, examples int) *toolenv.Result {
	r := &toolenv.Result{Status: toolenv.StatusOK, Body: responseJSON(out), Source: toolenv.SourceSimulator}
	s.mark(r, attempts, examples)
	if len(out.Repairs) > 0 {
		r.SetMeta(MetaRepairs, strings.Join(out.Repairs, ","))
	}
	if out.Mechanism != "" {
		r.SetMeta(MetaMechanism, clip(out.Mechanism, 1000))
	}
	if strings.TrimSpace(out.Error) != "" {
		// The simulated API reports an error (a bad parameter, say): a
		// legitimate answer, but not a success to cache.
		r.Status = toolenv.StatusUpstreamError
		r.Error = out.Error
		r.SetMeta(MetaCacheable, "false")
		return r
	}
	var sh *shape
	if call.Doc != nil {
		sh = toolShape(doc) // a per-call document: not remembered, so drifted docs cannot pile up
	} else {
		sh = s.shapes.get(doc)
	}
	in := &checkInput{doc: doc, shape: sh, body: r.Body, value: structured(r.Body), shapes: &s.shapes}
	if s.opts.Neighbours != nil {
		in.neighbours = s.opts.Neighbours.Neighbours(call.Tool)
	}
	problems := validate(in)
	if out.Truncated {
		problems = append(problems, problem{"truncated", "the simulated response was cut short (the model hit its token limit); it was closed but may be incomplete"})
	}
	if len(problems) > 0 {
		names := make([]string, len(problems))
		for i, p := range problems {
			names[i] = p.check
			r.Warnings = append(r.Warnings, "simulated response not cached: "+p.message)
		}
		r.SetMeta(MetaInvalid, strings.Join(names, ","))
		r.SetMeta(MetaCacheable, "false")
	}
	return r
}

// mark records the prompt, model, attempts and examples of a result.
func (s *Simulator) mark(r *toolenv.Result, attempts, examples int) {
	r.SetMeta(MetaPrompt, s.opts.Prompt)
	if s.opts.Model != "" {
		r.SetMeta(MetaModel, s.opts.Model)
	}
	r.SetMeta(MetaAttempts, strconv.Itoa(attempts))
	r.SetMeta(MetaExamples, strconv.Itoa(examples))
}

// endpointFailure reports an endpoint that failed (its client has retried
// already).
func (s *Simulator) endpointFailure(ctx context.Context, call *toolenv.Call, err error, attempts int) *toolenv.Result {
	status := toolenv.StatusUnavailable
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		status = toolenv.StatusCanceled
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		status = toolenv.StatusTimeout
	}
	r := &toolenv.Result{
		Status: status,
		Error:  fmt.Sprintf("simulator: the LLM endpoint failed for %s: %v", call.Tool.Name, err),
		Hint:   "check that the endpoint given with --llm-url is running and serves the model given with --llm-model",
		Source: toolenv.SourceSimulator,
	}
	s.mark(r, attempts, 0)
	r.SetMeta(MetaFailure, "endpoint")
	r.SetMeta(MetaCacheable, "false")
	s.log.LogAttrs(ctx, slog.LevelWarn, "simulator endpoint failed", slog.String("tool", call.Tool.ID), slog.String("err", err.Error()))
	return r
}
