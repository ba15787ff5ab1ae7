package episode_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
)

// FuzzParseAction: any bytes either fail as a *toolenv.Error with a
// message, or give an action of a known type whose calls all have a name
// and object arguments; parsing never panics.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{
		`{"type":"call_tool","tool_name":"get_book","arguments":{"isbn":"9780441172719"},"label":"B"}`,
		`{"tool_name":"x"}`,
		`{"type":"list_tools"}`,
		`{"type":"tool_calls","calls":[{"name":"a","arguments":{}},{"tool_name":"b","arguments":null}]}`,
		`{"type":"tool_calls","tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}}]}`,
		`{"type":"final_answer","answer":{"columns":["a"],"rows":[[1]]},"labels":["X"]}`,
		`{"type":"call_tool","tool_name":"submit_answer","arguments":{"labels":"$A$"}}`,
		`{"type":"final_answer","text":"hello"}`, `[]`, `null`, `{"type":7}`, `{"type":"tool_calls","calls":[{"name":"submit_answer"},{"name":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := episode.ParseAction(data)
		if err != nil {
			var te *toolenv.Error
			if !errors.As(err, &te) || te.Message == "" || a != nil {
				t.Fatalf("%q: error %v (%T) with action %v", data, err, err, a)
			}
			return
		}
		switch a.Type {
		case episode.ActionListTools:
		case episode.ActionCallTool, episode.ActionToolCalls:
			if len(a.Calls) == 0 {
				t.Fatalf("%q: %s without calls", data, a.Type)
			}
			for _, c := range a.Calls {
				if c.Name == "" || c.Args == nil || c.Name == episode.SubmitTool {
					t.Fatalf("%q: call %+v", data, c)
				}
			}
		case episode.ActionFinalAnswer:
			if a.Answer == nil {
				t.Fatalf("%q: final answer without an answer", data)
			}
		default:
			t.Fatalf("%q: type %q", data, a.Type)
		}
	})
}

// FuzzParseResetOptions: any bytes either fail as a *toolenv.Error or
// give options that encode back to JSON which parses to the same
// options; and a reset of the demo with them either starts an episode or
// fails with a *toolenv.Error, never panics.
func FuzzParseResetOptions(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"task_id":"demo-2","seed":3}`, `{"collection":"demo","split":"x"}`,
		`{"task_id":"demo-1","reward":{"success":"intent_f1","step_cost":0.1,"penalty":{"invalid_arguments":0.5,"*":0.1}}}`,
		`{"task_id":"demo-3","faults":{"rules":[{"tool":"*","errors":{"rate":0.5}}]},"perturbation":"case_mix","max_steps":2,"tool_format":"mcp"}`,
		`{"seed":-1}`, `{"taks_id":"demo-1"}`, `{"reward":{"success":"completion"}}`, `{"faults":"nope"}`, `{"version":"v9"}`,
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	env, err := environment.Open(ctx, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer env.Close()
	eps, err := episode.New(ctx, env, episode.Options{Max: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer eps.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := episode.ParseResetOptions(data)
		if err != nil {
			var te *toolenv.Error
			if !errors.As(err, &te) || o != nil {
				t.Fatalf("%q: %v (%T)", data, err, err)
			}
			return
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("%q: options do not encode: %v", data, err)
		}
		o2, err := episode.ParseResetOptions(b)
		if err != nil {
			t.Fatalf("%q: options %s do not parse back: %v", data, b, err)
		}
		if b2, _ := json.Marshal(o2); string(b2) != string(b) {
			t.Fatalf("round trip: %s -> %s", b, b2)
		}
		r, err := eps.Reset(ctx, "", o)
		if err != nil {
			var te *toolenv.Error
			if !errors.As(err, &te) || te.Message == "" {
				t.Fatalf("%q: reset failed with %v (%T)", data, err, err)
			}
			return
		}
		if err := eps.End(ctx, "", r.Observation.EpisodeID); err != nil {
			t.Fatal(err)
		}
	})
}
