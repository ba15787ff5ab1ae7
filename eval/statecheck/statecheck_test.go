package statecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestMatch(t *testing.T) {
	graph := `{"content":[{"type":"text","text":"{\n  \"entities\": [{\"name\": \"Ada\"}, {\"name\": \"Bob\"}],\n  \"relations\": []\n}"}],"structuredContent":{"entities":[{"name":"Ada"},{"name":"Bob"}],"relations":[]}}`
	textOnly := `{"content":[{"type":"text","text":"[1, 2.0000001, 3]"}]}`
	for _, c := range []struct {
		name, body, expect string
		ok                 bool
		why                string
	}{
		{"structured, reordered", graph, `{"relations":[],"entities":[{"name":"Bob"},{"name":"Ada"}]}`, true, ""},
		{"structured, one missing", graph, `{"entities":[{"name":"Ada"}],"relations":[]}`, false, "got {"},
		{"structured, one extra key", graph, `{"entities":[{"name":"Ada"},{"name":"Bob"}],"relations":[],"x":1}`, false, "want"},
		{"text parsed as JSON, numbers within 1e-6", textOnly, `[3, 2, 1]`, true, ""},
		{"text as a string", `{"content":[{"type":"text","text":"Saved 3 lines"}]}`, `"Saved 3 lines"`, true, ""},
		{"text differs", `{"content":[{"type":"text","text":"Saved 3 lines"}]}`, `"Saved 4 lines"`, false, "got"},
		{"isError never matches", `{"content":[{"type":"text","text":"ENOENT"}],"isError":true}`, `"ENOENT"`, false, "isError: ENOENT"},
		{"a plain JSON body", `{"rows":[[1,"a"],[2,"b"]]}`, `{"rows":[[2,"b"],[1,"a"]]}`, true, ""},
		{"duplicates count", `[1,1,2]`, `[1,2,2]`, false, "got"},
		{"expect not JSON", `[1]`, `[1`, false, "not JSON"},
		{"body not JSON", `nope`, `1`, false, "not JSON"},
		{"large numbers relative", `1e12`, `1000000000000.5`, true, ""},
		{"types differ", `"1"`, `1`, false, "got"},
		// A table expect against a read tool's answer that holds the
		// table and more (an SQL collection's rows with their count).
		{"table in a larger answer, rows reordered", `{"columns":["id","status"],"rows":[[3,"cancelled"],[4,"shipped"]],"row_count":2}`, `{"columns":["id","status"],"rows":[[4,"shipped"],[3,"cancelled"]]}`, true, ""},
		{"table, a value differs", `{"columns":["id","status"],"rows":[[3,"open"],[4,"shipped"]],"row_count":2}`, `{"columns":["id","status"],"rows":[[3,"cancelled"],[4,"shipped"]]}`, false, "got"},
		{"table, a row missing", `{"columns":["id","status"],"rows":[[4,"shipped"]],"row_count":1}`, `{"columns":["id","status"],"rows":[[3,"cancelled"],[4,"shipped"]]}`, false, "got"},
		{"list of rows against a table", `{"columns":["id","status"],"rows":[[3,"cancelled"]],"row_count":1}`, `[[3,"cancelled"]]`, true, ""},
		{"list of rows, wrong", `{"columns":["id","status"],"rows":[[3,"cancelled"]],"row_count":1}`, `[[3,"open"]]`, false, "got"},
		{"table in an MCP text", `{"content":[{"type":"text","text":"{\"columns\":[\"n\"],\"rows\":[[2]],\"more\":true}"}]}`, `{"columns":["n"],"rows":[[2]]}`, true, ""},
		{"a list of values is no table", `{"rows":[[1],[2]]}`, `[1,2]`, false, "got"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, got, why := Match([]byte(c.body), json.RawMessage(c.expect))
			if ok != c.ok || !strings.Contains(why, c.why) {
				t.Fatalf("Match = %v (%q), got %s; want %v saying %q", ok, why, got, c.ok, c.why)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	rd := &toolenv.Tool{Name: "read_graph", Meta: map[string]string{toolenv.MetaState: toolenv.StateRead}}
	wr := &toolenv.Tool{Name: "create_entities", Meta: map[string]string{toolenv.MetaState: toolenv.StateWrite}}
	coll := toolenv.NewCollection("memory", "mcp", []*toolenv.Tool{rd, wr})
	call := func(name string) *toolenv.GoldCall { return &toolenv.GoldCall{Name: name, Args: map[string]any{}} }
	for _, c := range []struct {
		check toolenv.StateCheck
		want  string
	}{
		{toolenv.StateCheck{Call: call("read_graph"), Expect: json.RawMessage(`{}`)}, ""},
		{toolenv.StateCheck{SQL: "SELECT 1"}, ""},
		{toolenv.StateCheck{Call: call("create_entities"), Expect: json.RawMessage(`{}`)}, "changes state"},
		{toolenv.StateCheck{Call: call("nope"), Expect: json.RawMessage(`{}`)}, "has no tool"},
		{toolenv.StateCheck{Call: call("read_graph")}, "no expect"},
		{toolenv.StateCheck{Call: call("read_graph"), Expect: json.RawMessage(`{`)}, "not JSON"},
		{toolenv.StateCheck{Call: call("read_graph"), SQL: "SELECT 1", Expect: json.RawMessage(`1`)}, "not both"},
		{toolenv.StateCheck{Name: "empty"}, "checks[0] (empty): give a call"},
	} {
		err := Validate([]toolenv.StateCheck{c.check}, coll)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.check, err, c.want)
		}
	}
}

// TestRun: each check's outcome, the count, the environment's failure
// kept apart from the agent's.
func TestRun(t *testing.T) {
	answers := map[string]*toolenv.Result{
		"read_graph": {Status: toolenv.StatusOK, Body: json.RawMessage(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"entities":[]}}`)},
		"crashed":    {Status: toolenv.StatusUnavailable, Error: "the instance exited", Meta: map[string]string{toolenv.MetaInfraFailure: "mcp_instance_exited"}},
	}
	inv := func(_ context.Context, tool string, _ map[string]any) *toolenv.Result { return answers[tool] }
	checks := []toolenv.StateCheck{
		{Name: "empty graph", Call: &toolenv.GoldCall{Name: "read_graph"}, Expect: json.RawMessage(`{"entities":[]}`)},
		{Call: &toolenv.GoldCall{Name: "crashed"}, Expect: json.RawMessage(`1`)},
		{SQL: "SELECT 1", Rows: json.RawMessage(`[[1]]`)},
	}
	rep := Run(context.Background(), checks, inv, nil)
	if rep.Total != 3 || rep.Passed != 1 || rep.Success != 0 || rep.InfraFailure != "mcp_instance_exited" {
		t.Fatalf("report %+v", rep)
	}
	if rep.Checks[0].Name != "empty graph" || !rep.Checks[0].Passed || rep.Checks[1].Name != "crashed" || !strings.Contains(rep.Checks[2].Why, "SQL") {
		t.Fatalf("checks %+v", rep.Checks)
	}
	sql := func(context.Context, toolenv.StateCheck) Result { return Result{Passed: true} }
	if rep := Run(context.Background(), []toolenv.StateCheck{checks[0], checks[2]}, inv, sql); rep.Success != 1 || rep.Checks[1].Name != "sql" {
		t.Fatalf("with an SQL checker: %+v", rep)
	}
}

func FuzzMatch(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":{"a":[1,2]}}`), []byte(`{"a":[2,1]}`))
	f.Add([]byte(`[[[[1]]]]`), []byte(`[[[[1.0000001]]]]`))
	f.Add([]byte(`{"content":[1]}`), []byte(`"x"`))
	f.Fuzz(func(t *testing.T, body, expect []byte) {
		ok, _, why := Match(body, expect)
		if ok && why != "" {
			t.Fatalf("a match with a reason: %q", why)
		}
		if !ok && why == "" {
			t.Fatal("no match and no reason")
		}
		// A valid JSON value always matches itself.
		if _, err := decode(expect); err == nil {
			if ok, _, why := Match(expect, expect); !ok && !strings.Contains(why, "isError") {
				t.Fatalf("%s does not match itself: %s", expect, why)
			}
		}
	})
}

func ExampleMatch() {
	body := []byte(`{"content":[{"type":"text","text":"..."}],"structuredContent":{"entities":[{"name":"Bob"},{"name":"Ada"}]}}`)
	ok, _, _ := Match(body, json.RawMessage(`{"entities":[{"name":"Ada"},{"name":"Bob"}]}`))
	fmt.Println(ok)
	// Output: true
}
