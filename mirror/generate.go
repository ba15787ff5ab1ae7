package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/mirror/sample"
	"github.com/toolenv/toolenv/toolbench"
)

// GenerateOptions configure the generate stage.
type GenerateOptions struct {
	// PerAPI is how many distinct requests to write per API; default
	// 200, as the paper. A re-run adds only what is missing.
	PerAPI int
	// Invalid is how many deliberately invalid requests the sampler adds
	// per API, beyond PerAPI; 0 means PerAPI/10 (at least 1), negative
	// none. Requests written by a model are whatever the model writes.
	Invalid int
	// Seed seeds the sampler and the model requests.
	Seed int64
	// Sampler uses the schema-driven sampler even when a model is set.
	Sampler bool
	// Harvest gives the sampler the values seen in the dataset's real
	// successful responses, by parameter name (run it after a first
	// collection: identifiers a list endpoint returned feed the endpoint
	// that takes them).
	Harvest bool
	// NoRandom makes the sampler write only documented, known and
	// boundary values (and the invalid requests): the first round of a
	// run with a harvest round, which spends the rest of PerAPI on the
	// values the first round's answers hold.
	NoRandom bool
	// ScenariosPerCall is how many scenarios one model request asks
	// for; default 10.
	ScenariosPerCall int
	// MaxRounds bounds the scenario requests per API; default
	// 3*ceil(PerAPI/ScenariosPerCall).
	MaxRounds int
	// Workers is how many APIs are generated at once; default 4.
	Workers int
}

// GenerateStats says what the generate stage did.
type GenerateStats struct {
	// Method is "sampler" or "llm".
	Method string `json:"method"`
	APIs   int    `json:"apis"`
	// Added counts the new requests, by kind.
	Added map[string]int `json:"added"`
	// Total is the number of requests the dataset holds afterwards.
	Total int `json:"total"`
	// Short lists the APIs that got fewer than PerAPI valid requests
	// (a small input space, or a model that repeats itself).
	Short int `json:"short"`
	// Rejected counts model answers dropped, by reason.
	Rejected map[string]int `json:"rejected,omitempty"`
	// Harvested is how many distinct values the responses gave.
	Harvested int `json:"harvested,omitempty"`
}

func (o *GenerateOptions) defaults() {
	if o.PerAPI <= 0 {
		o.PerAPI = 200
	}
	if o.Invalid == 0 {
		o.Invalid = max(1, o.PerAPI/10)
	}
	if o.ScenariosPerCall <= 0 {
		o.ScenariosPerCall = 10
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = 3 * ((o.PerAPI + o.ScenariosPerCall - 1) / o.ScenariosPerCall)
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
}

// Generate writes requests for every API: through the model when one is
// set (and Sampler is not), else with the schema-driven sampler.
func (e *Engine) Generate(ctx context.Context, opts GenerateOptions) (*GenerateStats, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	started := time.Now()
	st := &GenerateStats{Method: RequestSampler, Added: map[string]int{}, Rejected: map[string]int{}}
	if e.Model != nil && !opts.Sampler {
		st.Method = RequestLLM
	}
	tools := e.sortedTools()
	st.APIs = len(tools)
	var known *knownValues
	if st.Method == RequestSampler {
		known = newKnownValues()
		known.addTasks(e.Tasks)
		if opts.Harvest {
			n, err := e.harvest(ctx, known)
			if err != nil {
				return nil, err
			}
			st.Harvested = n
		}
	}
	bar := e.bar(len(tools), "generate requests")
	defer bar.Finish()
	var mu sync.Mutex
	work := make(chan *toolenv.Tool)
	errc := make(chan error, opts.Workers)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				var added map[string]int
				var rejected map[string]int
				var short bool
				var err error
				if st.Method == RequestLLM {
					added, rejected, short, err = e.generateLLM(ctx, t, opts)
				} else {
					added, short, err = e.generateSampler(ctx, t, opts, known)
				}
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				for k, n := range added {
					st.Added[k] += n
				}
				for k, n := range rejected {
					st.Rejected[k] += n
				}
				if short {
					st.Short++
				}
				mu.Unlock()
				bar.Add(1)
			}
		}()
	}
	var err error
feed:
	for _, t := range tools {
		select {
		case work <- t:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	if err == nil {
		err = <-errc
	}
	if err != nil {
		return st, fmt.Errorf("generate: %w", err)
	}
	counts, err := e.Store.RequestCounts(ctx, e.Dataset)
	if err != nil {
		return st, err
	}
	for _, n := range counts {
		st.Total += n
	}
	e.stageDone(ctx, "generate", started)
	return st, nil
}

// existing returns the canonical arguments of t's requests and how many
// of them are valid (not deliberately invalid).
func (e *Engine) existing(ctx context.Context, tool string) (map[string]bool, int, error) {
	have := map[string]bool{}
	valid := 0
	err := e.Store.EachRequest(ctx, e.Dataset, RequestQuery{Tool: tool}, func(r *Request) error {
		have[r.Args] = true
		if !strings.HasPrefix(r.Kind, sample.KindInvalid) {
			valid++
		}
		return nil
	})
	return have, valid, err
}

// generateSampler tops t's requests up to PerAPI valid ones (and the
// invalid ones) with the sampler.
func (e *Engine) generateSampler(ctx context.Context, t *toolenv.Tool, opts GenerateOptions, known *knownValues) (map[string]int, bool, error) {
	have, valid, err := e.existing(ctx, t.ID)
	if err != nil {
		return nil, false, err
	}
	invalidHave := len(have) - valid
	n := opts.PerAPI - valid
	inv := max(0, opts.Invalid-invalidHave)
	if n <= 0 && inv <= 0 {
		return nil, false, nil
	}
	calls := sample.Sample(t, sample.Options{
		N: max(n, 0), Invalid: inv, Seed: opts.Seed, NoRandom: opts.NoRandom,
		Known: func(param string) []any { return known.values(t.ID, param) },
		Skip:  func(c string) bool { return have[c] },
	})
	reqs := make([]*Request, 0, len(calls))
	added := map[string]int{}
	newValid := 0
	for _, c := range calls {
		reqs = append(reqs, &Request{Tool: t.ID, Args: c.Canonical, Origin: RequestSampler, Kind: c.Kind})
		added[c.Kind]++
		if !c.Invalid() {
			newValid++
		}
	}
	if _, err := e.Store.PutRequests(ctx, e.Dataset, reqs); err != nil {
		return nil, false, err
	}
	return added, valid+newValid < opts.PerAPI, nil
}

// generateLLM writes t's requests the paper's way: scenarios at
// temperature 1.0, then one call per scenario with the Calls Writing
// prompt at 0.1, until PerAPI distinct requests exist.
func (e *Engine) generateLLM(ctx context.Context, t *toolenv.Tool, opts GenerateOptions) (added, rejected map[string]int, short bool, err error) {
	have, _, err := e.existing(ctx, t.ID)
	if err != nil {
		return nil, nil, false, err
	}
	added, rejected = map[string]int{}, map[string]int{}
	doc := e.document(t)
	var rejects []*Reject
	flush := func() error {
		if len(rejects) == 0 {
			return nil
		}
		err := e.Store.PutRejects(ctx, e.Dataset, rejects)
		rejects = rejects[:0]
		return err
	}
	for round := 0; len(have) < opts.PerAPI && round < opts.MaxRounds; round++ {
		scenarios, raw, err := e.scenarios(ctx, doc, opts.ScenariosPerCall, opts.Seed+int64(round))
		if err != nil {
			var bad *badAnswer
			if errors.As(err, &bad) {
				rejected[bad.reason]++
				rejects = append(rejects, &Reject{Stage: "generate", Tool: t.ID, Body: raw, Reason: bad.reason, Detail: "scenarios: " + bad.Error()})
				continue
			}
			return added, rejected, true, err
		}
		var reqs []*Request
		for _, sc := range scenarios {
			if len(have) >= opts.PerAPI {
				break
			}
			args, raw, err := e.writeCall(ctx, t, doc, sc, opts.Seed)
			if err != nil {
				var bad *badAnswer
				if !errors.As(err, &bad) {
					return added, rejected, true, err
				}
				rejected[bad.reason]++
				rejects = append(rejects, &Reject{Stage: "generate", Tool: t.ID, Body: raw, Reason: bad.reason, Detail: bad.Error()})
				continue
			}
			canon, err := toolenv.Canonical(args)
			if err != nil || have[string(canon)] {
				rejected[RejectDuplicate]++
				continue
			}
			have[string(canon)] = true
			reqs = append(reqs, &Request{Tool: t.ID, Args: string(canon), Origin: RequestLLM, Kind: "scenario", Scenario: sc})
			added["scenario"]++
		}
		if _, err := e.Store.PutRequests(ctx, e.Dataset, reqs); err != nil {
			return added, rejected, true, err
		}
		if err := flush(); err != nil {
			return added, rejected, true, err
		}
	}
	if err := flush(); err != nil {
		return added, rejected, true, err
	}
	return added, rejected, len(have) < opts.PerAPI, nil
}

// badAnswer is a model answer that cannot be used; the stage records it
// and goes on.
type badAnswer struct {
	reason string
	msg    string
}

func (b *badAnswer) Error() string { return b.msg }

// chat asks the model one user prompt (after history) and returns the
// text. A refusal or an empty answer is a badAnswer; an endpoint failure
// is an error that stops the stage (the run can be resumed).
func (e *Engine) chat(ctx context.Context, model string, history []llm.Message, user string, temp float64, seed int64, maxTokens int) (string, error) {
	msgs := append(append([]llm.Message(nil), history...), llm.Message{Role: "user", Content: user})
	resp, err := e.Model.Chat(ctx, &llm.Request{Model: model, Messages: msgs, Temperature: llm.Float(temp), Seed: llm.Int(seed), MaxTokens: maxTokens})
	if err != nil {
		return "", fmt.Errorf("the model endpoint failed (%w); what was done is stored: run the command again to resume", err)
	}
	text := strings.TrimSpace(resp.Text())
	if text == "" {
		return "", &badAnswer{reason: RejectUnparseable, msg: "the model answered nothing"}
	}
	if refusal(text) {
		return text, &badAnswer{reason: RejectRefused, msg: "the model refused"}
	}
	return text, nil
}

// scenarios asks for count usage scenarios of an API.
func (e *Engine) scenarios(ctx context.Context, doc string, count int, seed int64) ([]string, string, error) {
	user := promptfile.Fill(promptScenarios.Text, map[string]string{"document": doc, "count": strconv.Itoa(count)})
	text, err := e.chat(ctx, e.ModelName, nil, user, 1.0, seed, 4096)
	if err != nil {
		return nil, text, err
	}
	v, ok := firstJSON(text, '[')
	if !ok {
		return nil, text, &badAnswer{reason: RejectUnparseable, msg: "no JSON list of scenarios in the answer"}
	}
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	if len(out) == 0 {
		return nil, text, &badAnswer{reason: RejectUnparseable, msg: "the list holds no scenario"}
	}
	return out, text, nil
}

// writeCall asks the Calls Writing prompt for a call serving scenario.
// The scenario is in the conversation before it, as if the model had
// written this one scenario, so that the prompt itself stays exactly as
// the paper prints it.
func (e *Engine) writeCall(ctx context.Context, t *toolenv.Tool, doc, scenario string, seed int64) (map[string]any, string, error) {
	scen, _ := json.Marshal([]string{scenario})
	history := []llm.Message{
		{Role: "user", Content: promptfile.Fill(promptScenarios.Text, map[string]string{"document": doc, "count": "1"})},
		{Role: "assistant", Content: string(scen)},
	}
	user := promptfile.Fill(promptCallsWriting.Text, map[string]string{"document": doc})
	text, err := e.chat(ctx, e.ModelName, history, user, 0.1, seed, 1024)
	if err != nil {
		return nil, text, err
	}
	args, err := ParseCall(t, text)
	return args, text, err
}

// ParseCall reads the call a model wrote for t with the Calls Writing
// prompt: a {"category", "tool_name", "api_name", "tool_input", "strip"}
// object (in a code fence, after prose, with typographic quotes or as a
// Python dict), tool_input a JSON string or an object. Arguments under
// their documented names are mapped to t's parameter names. A call of
// another API (api_name names neither t's title nor its function name) is
// rejected.
func ParseCall(t *toolenv.Tool, text string) (map[string]any, error) {
	v, ok := firstJSON(text, '{')
	if !ok {
		return nil, &badAnswer{reason: RejectUnparseable, msg: "no JSON object in the answer"}
	}
	obj := dictOf(v)
	if obj == nil {
		return nil, &badAnswer{reason: RejectUnparseable, msg: "the answer is not a JSON object"}
	}
	if api, ok := obj["api_name"].(string); ok && api != "" && !sameAPI(t, api) {
		return nil, &badAnswer{reason: RejectWrongAPI, msg: fmt.Sprintf("the call is of API %q, not %q", api, t.TitleOrName())}
	}
	in, present := obj["tool_input"]
	if !present {
		return nil, &badAnswer{reason: RejectUnparseable, msg: `the call has no "tool_input"`}
	}
	var args map[string]any
	switch x := in.(type) {
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			args = map[string]any{}
			break
		}
		iv, _, err := pyfmt.DecodeRepaired(s, pyfmt.ParseOptions{})
		if err != nil {
			return nil, &badAnswer{reason: RejectUnparseable, msg: "tool_input is not a JSON object: " + err.Error()}
		}
		if args = plain(iv); args == nil {
			return nil, &badAnswer{reason: RejectUnparseable, msg: "tool_input is not a JSON object"}
		}
	case nil:
		args = map[string]any{}
	default:
		if args = plain(x); args == nil {
			return nil, &badAnswer{reason: RejectUnparseable, msg: "tool_input is not a JSON object"}
		}
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[paramName(t, k)] = v
	}
	return out, nil
}

// sameAPI reports whether a model's api_name names t.
func sameAPI(t *toolenv.Tool, api string) bool {
	norm := func(s string) string { return toolbench.Standardize(strings.ToLower(strings.TrimSpace(s))) }
	a := norm(api)
	return a == norm(t.TitleOrName()) || a == norm(t.Name) || a == norm(toolbench.APIName(t.TitleOrName()))
}

// paramName maps a parameter's documented name (ToolBench's original,
// kept in "x-name") to t's parameter name; other names are kept.
func paramName(t *toolenv.Tool, name string) string {
	if t.Input == nil {
		return name
	}
	if t.Input.Prop(name) != nil {
		return name
	}
	for _, n := range t.Input.Names() {
		if raw, ok := t.Input.Prop(n).Extra["x-name"]; ok {
			var doc string
			if json.Unmarshal(raw, &doc) == nil && doc == name {
				return n
			}
		}
	}
	return name
}

// firstJSON finds the first JSON (or Python literal) value opening with
// open in text, forgiving code fences, prose around it and typographic
// quotes.
func firstJSON(text string, open byte) (any, bool) {
	texts := []string{text, quoteFixer.Replace(text)}
	// The value at the first opening bracket, as written and with the
	// quotes fixed, before any value nested further in (a JSON string
	// inside a dict with typographic quotes is itself valid JSON).
	for _, s := range texts {
		if i := strings.IndexByte(s, open); i >= 0 {
			if v, ok := valueAt(s, i, open); ok {
				return v, true
			}
		}
	}
	for _, s := range texts {
		i := strings.IndexByte(s, open)
		for i >= 0 {
			next := strings.IndexByte(s[i+1:], open)
			if next < 0 {
				break
			}
			i += 1 + next
			if v, ok := valueAt(s, i, open); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// valueAt reads the JSON or Python value opening at s[i].
func valueAt(s string, i int, open byte) (any, bool) {
	if v, _, err := pyfmt.DecodeOrderedPrefix(s[i:]); err == nil {
		return v, true
	}
	if v, _, err := pyfmt.ParsePrefix(s[i:], pyfmt.ParseOptions{}); err == nil {
		return v, true
	}
	close := byte('}')
	if open == '[' {
		close = ']'
	}
	if j := strings.LastIndexByte(s, close); j > i {
		if v, _, err := pyfmt.DecodeRepaired(s[i:j+1], pyfmt.ParseOptions{}); err == nil {
			return v, true
		}
	}
	return nil, false
}

// quoteFixer turns the typographic quotes the paper's prompts print
// (‘‘category’’) and that models copy back into ASCII ones.
var quoteFixer = strings.NewReplacer("‘‘", `"`, "’’", `"`, "“", `"`, "”", `"`, "‘", "'", "’", "'")

// dictOf returns an object as a map, whatever decoder made it.
func dictOf(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case pyfmt.Dict:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[it.Key] = it.Value
		}
		return m
	}
	return nil
}

// plain converts a decoded object (Dicts included) to plain Go values as
// toolenv.DecodeJSON makes them; nil when v is not an object.
func plain(v any) map[string]any {
	if dictOf(v) == nil {
		return nil
	}
	b, err := toolenv.MarshalJSONNoHTML(toPlain(v))
	if err != nil {
		return nil
	}
	var m map[string]any
	if toolenv.DecodeJSON(b, &m) != nil {
		return nil
	}
	return m
}

func toPlain(v any) any {
	switch x := v.(type) {
	case pyfmt.Dict:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[it.Key] = toPlain(it.Value)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toPlain(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	}
	return v
}

// refusal reports whether a model's answer is a refusal rather than an
// attempt: it opens with one of the usual apologies.
func refusal(text string) bool {
	low := strings.ToLower(strings.TrimSpace(text))
	if len(low) > 400 {
		low = low[:400]
	}
	for _, p := range []string{"i'm sorry", "i am sorry", "i’m sorry", "sorry, i can", "i cannot help", "i can't help", "i can’t help", "i cannot assist", "i can't assist", "i can’t assist", "as an ai", "i'm unable to", "i am unable to", "i won't", "i will not"} {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	return false
}

// indentJSON indents compact JSON by four spaces.
func indentJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "    "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
