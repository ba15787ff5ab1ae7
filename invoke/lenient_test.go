package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// quoteTool is a ToolBench-style tool: standardized parameter names with
// the documented ones in x-name, a required argument.
func quoteTool() *toolenv.Tool {
	in := toolenv.ObjectSchema()
	in.SetProp("symbol", &toolenv.Schema{Type: "string", Extra: map[string]json.RawMessage{"x-name": json.RawMessage(`"Symbol"`)}})
	in.SetProp("is_id", &toolenv.Schema{Type: "integer", Extra: map[string]json.RawMessage{"x-name": json.RawMessage(`"id"`)}})
	in.SetProp("limit", &toolenv.Schema{Type: "integer"})
	in.Required = []string{"symbol"}
	return &toolenv.Tool{Name: "get_quote", Input: in}
}

func newQuotePipeline(t *testing.T, b *countingBackend, validation string, recorded map[string]string) (toolenv.Handler, *Registry) {
	t.Helper()
	c := toolenv.NewCollection("tb", "toolbench", []*toolenv.Tool{quoteTool()})
	c.Policy = toolenv.Policy{Validation: validation, Cache: true, Feedback: toolenv.FeedbackTerse}
	reg := NewRegistry()
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for args, body := range recorded {
		if _, err := st.Put(context.Background(), &store.Entry{Tool: "tb/get_quote", Args: args, Status: toolenv.StatusOK, Body: json.RawMessage(body), Origin: "import"}); err != nil {
			t.Fatal(err)
		}
	}
	return New(reg, Options{Cache: st}), reg
}

func quoteCall(t *testing.T, reg *Registry, args string) *toolenv.Call {
	t.Helper()
	var m map[string]any
	if err := toolenv.DecodeJSON([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	c, res := reg.NewCall("tb", "get_quote", m)
	if res != nil {
		t.Fatalf("resolve: %+v", res)
	}
	return c
}

// TestLenientLooksUpTheCacheFirst: in a lenient (ToolBench) collection an
// answer recorded for a call that lacks a required argument, or that names
// a parameter as the documentation does, is served, as StableToolBench's
// server serves it; a call that matches nothing is passed on with a
// warning instead of being rejected. A strict collection keeps rejecting
// first.
func TestLenientLooksUpTheCacheFirst(t *testing.T) {
	ctx := context.Background()
	recorded := map[string]string{
		`{}`:                         `"recorded without the required symbol"`,
		`{"Symbol":"AAPL"}`:          `"recorded under the documented name"`,
		`{"Symbol":"MSFT","id":7}`:   `"recorded with id"`,
		`{"limit":"5","symbol":"X"}`: `"recorded with a string 5"`,
		`{"limit":5,"symbol":"X"}`:   `"recorded with a number 5"`,
		`{"symbol":"IBM"}`:           `"recorded standardized"`,
	}
	b := &countingBackend{source: toolenv.SourceSimulator}
	p, reg := newQuotePipeline(t, b, toolenv.ValidationLenient, recorded)
	tests := []struct {
		name, args, want string
	}{
		{"missing required, recorded so", `{}`, `"recorded without the required symbol"`},
		{"documented name sent", `{"Symbol":"AAPL"}`, `"recorded under the documented name"`},
		{"standardized name sent, recorded documented", `{"symbol":"AAPL"}`, `"recorded under the documented name"`},
		{"standardized is_id sent, recorded id", `{"symbol":"MSFT","is_id":7}`, `"recorded with id"`},
		{"is_id as a string, recorded id as a number", `{"is_id":"7","symbol":"MSFT"}`, `"recorded with id"`},
		{"string kept apart from number", `{"symbol":"X","limit":"5"}`, `"recorded with a string 5"`},
		{"number kept apart from string", `{"symbol":"X","limit":5}`, `"recorded with a number 5"`},
		{"documented name sent, recorded standardized", `{"Symbol":"IBM"}`, `"recorded standardized"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := p.Invoke(ctx, quoteCall(t, reg, tt.args))
			if !res.OK() || res.Source != toolenv.SourceCache || string(res.Body) != tt.want {
				t.Errorf("%s: %+v %s; want the recorded %s", tt.args, res, res.Body, tt.want)
			}
		})
	}
	if n := b.calls.Load(); n != 0 {
		t.Fatalf("%d calls reached the backend; every one was recorded", n)
	}

	// Nothing recorded: simulated with a warning, not rejected, and kept.
	res := p.Invoke(ctx, quoteCall(t, reg, `{"limit":3}`))
	if !res.OK() || res.Source != toolenv.SourceSimulator || b.calls.Load() != 1 ||
		!strings.Contains(strings.Join(res.Warnings, "\n"), "missing required argument `symbol`") {
		t.Fatalf("miss without the required argument: %+v; want it simulated with a warning", res)
	}
	again := p.Invoke(ctx, quoteCall(t, reg, `{"limit":"3"}`))
	if again.Source != toolenv.SourceCache || b.calls.Load() != 1 {
		t.Fatalf("the simulated answer was not kept under the coerced key: %+v", again)
	}

	// Strict: validation first, as before.
	sb := &countingBackend{source: toolenv.SourceSimulator}
	sp, sreg := newQuotePipeline(t, sb, toolenv.ValidationStrict, recorded)
	res = sp.Invoke(ctx, quoteCall(t, sreg, `{}`))
	if res.Status != toolenv.StatusInvalidArguments || sb.calls.Load() != 0 {
		t.Fatalf("strict collection served a call without its required argument: %+v", res)
	}
	res = sp.Invoke(ctx, quoteCall(t, sreg, `{"Symbol":"AAPL"}`))
	if res.Status != toolenv.StatusInvalidArguments {
		t.Fatalf("strict collection served an undocumented argument: %+v", res)
	}
}

// TestLenientSearchRemembered: a call whose answer was recorded under
// other arguments than it sends (coerced) is found again at once, and an
// answer recorded later under the arguments it sends, which the search
// tries first, is served from then on.
func TestLenientSearchRemembered(t *testing.T) {
	ctx := context.Background()
	b := &countingBackend{source: toolenv.SourceSimulator}
	p, reg := newQuotePipeline(t, b, toolenv.ValidationLenient, map[string]string{`{"limit":5,"symbol":"X"}`: `"recorded with a number 5"`})
	const exact = "{'symbol': 'X', 'limit': '5'}"
	invoke := func() *toolenv.Result {
		c := quoteCall(t, reg, `{"symbol":"X","limit":"5"}`)
		c.Meta = map[string]string{CallMetaExactKey: exact}
		return p.Invoke(ctx, c)
	}
	for i := range 3 {
		if res := invoke(); res.Source != toolenv.SourceCache || string(res.Body) != `"recorded with a number 5"` {
			t.Fatalf("call %d: %+v %s", i, res, res.Body)
		}
	}
	st := p.(*pipeline).mem.(store.Store)
	if _, err := st.Put(ctx, &store.Entry{Tool: "tb/get_quote", Args: `{"limit":"5","symbol":"X"}`, Status: toolenv.StatusOK, Body: json.RawMessage(`"recorded with a string 5"`), Origin: "import"}); err != nil {
		t.Fatal(err)
	}
	if res := invoke(); string(res.Body) != `"recorded with a string 5"` {
		t.Fatalf("after the sent arguments' answer was recorded: %+v %s", res, res.Body)
	}
	if b.calls.Load() != 0 {
		t.Fatalf("%d calls reached the backend", b.calls.Load())
	}
}

// TestLenientManyKeysFoundAsFew: the table of
// TestLenientLooksUpTheCacheFirst again, each call and each recorded
// answer with 200 more undocumented arguments, the calls' arguments
// parsed as the front-ends parse them (toolenv.ParseArgsText,
// Call.ArgsFromParse): the coerced and renamed arguments' cache keys,
// written from the sent ones' (Call.ArgsDerived), find every answer the
// few-argument calls find, and a simulated answer is kept under the
// coerced key a later call finds.
func TestLenientManyKeysFoundAsFew(t *testing.T) {
	ctx := context.Background()
	extra := func(args string) string {
		var b strings.Builder
		b.WriteString(strings.TrimSuffix(args, "}"))
		for i := range 200 {
			if i > 0 || args != "{}" {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"x%03d":%d`, i, i%3)
		}
		b.WriteByte('}')
		return b.String()
	}
	recorded := map[string]string{}
	for args, body := range map[string]string{
		`{}`:                         `"recorded without the required symbol"`,
		`{"Symbol":"AAPL"}`:          `"recorded under the documented name"`,
		`{"Symbol":"MSFT","id":7}`:   `"recorded with id"`,
		`{"limit":"5","symbol":"X"}`: `"recorded with a string 5"`,
		`{"limit":5,"symbol":"X"}`:   `"recorded with a number 5"`,
		`{"symbol":"IBM"}`:           `"recorded standardized"`,
	} {
		m, err := toolenv.ParseJSONObject([]byte(extra(args)))
		if err != nil {
			t.Fatal(err)
		}
		key, err := toolenv.Canonical(m)
		if err != nil {
			t.Fatal(err)
		}
		recorded[string(key)] = body
	}
	b := &countingBackend{source: toolenv.SourceSimulator}
	p, reg := newQuotePipeline(t, b, toolenv.ValidationLenient, recorded)
	parsedCall := func(args string) *toolenv.Call {
		t.Helper()
		c, res := reg.NewCall("tb", "get_quote", nil)
		if res != nil {
			t.Fatalf("resolve: %+v", res)
		}
		pa, err := toolenv.ParseArgsText([]byte(extra(args)), c.Tool.Input, false)
		if err != nil {
			t.Fatal(err)
		}
		c.ArgsFromParse(pa)
		return c
	}
	for _, tt := range []struct{ args, want string }{
		{`{}`, `"recorded without the required symbol"`},
		{`{"Symbol":"AAPL"}`, `"recorded under the documented name"`},
		{`{"symbol":"AAPL"}`, `"recorded under the documented name"`},
		{`{"symbol":"MSFT","is_id":7}`, `"recorded with id"`},
		{`{"is_id":"7","symbol":"MSFT"}`, `"recorded with id"`},
		{`{"symbol":"X","limit":"5"}`, `"recorded with a string 5"`},
		{`{"symbol":"X","limit":5}`, `"recorded with a number 5"`},
		{`{"Symbol":"IBM"}`, `"recorded standardized"`},
	} {
		res := p.Invoke(ctx, parsedCall(tt.args))
		if !res.OK() || res.Source != toolenv.SourceCache || string(res.Body) != tt.want {
			t.Errorf("%s and 200 more: %+v %s; want the recorded %s", tt.args, res, res.Body, tt.want)
		}
	}
	if n := b.calls.Load(); n != 0 {
		t.Fatalf("%d calls reached the backend; every one was recorded", n)
	}
	if res := p.Invoke(ctx, parsedCall(`{"limit":3}`)); res.Source != toolenv.SourceSimulator || b.calls.Load() != 1 {
		t.Fatalf("an unrecorded call: %+v; want it simulated", res)
	}
	if again := p.Invoke(ctx, parsedCall(`{"limit":"3"}`)); again.Source != toolenv.SourceCache || b.calls.Load() != 1 {
		t.Fatalf("the simulated answer was not kept under the coerced key: %+v", again)
	}
}
