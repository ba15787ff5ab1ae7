package drift

import (
	"encoding/json"
	"testing"
)

const bookTool = `{"name":"search_books","input":{"type":"object","properties":{"query":{"type":"string"}}},
 "output":{"type":"object","properties":{"total":{"type":"integer"},"results":{"type":"array","items":{"type":"object","properties":{"isbn":{"type":"string"},"title":{"type":"string"}}}}}},
 "examples":[{"args":{"query":"dune"},"response":{"total":1,"results":[{"isbn":"1","title":"Dune"}]}}]}`

func TestResponseFieldRenames(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		cs, nt := planOp(t, "response", mustTool(t, bookTool), 1, seed, nil)
		if len(cs) == 0 || len(cs) > maxFieldRenames {
			t.Fatalf("seed %d: %d renames", seed, len(cs))
		}
		tc := &ToolChange{Changes: cs}
		body := json.RawMessage(`{"total": 1, "results": [{"isbn": "1", "title": "Dune"}, {"isbn": "2", "title": "Emma"}]}`)
		fwd := body
		for i := range tc.Changes {
			fwd = tc.Changes[i].forwardBody(fwd)
		}
		// The documented example follows, and the translated body matches
		// the new output schema's names.
		if got, want := canonJSON(t, fwd), canonJSON(t, renameLikeSchema(t, nt, body, cs)); got != want {
			t.Fatalf("seed %d: forward %s, want %s", seed, got, want)
		}
		back := fwd
		for i := len(tc.Changes) - 1; i >= 0; i-- {
			back = tc.Changes[i].backwardBody(back)
		}
		if string(back) != string(body) {
			t.Fatalf("seed %d: back %s, want %s byte for byte", seed, back, body)
		}
		// StableToolBench answers hold JSON text in a string.
		str, _ := json.Marshal(string(body))
		fs := json.RawMessage(str)
		for i := range tc.Changes {
			fs = tc.Changes[i].forwardBody(fs)
		}
		var inner string
		if err := json.Unmarshal(fs, &inner); err != nil || canonJSON(t, json.RawMessage(inner)) != canonJSON(t, fwd) {
			t.Fatalf("seed %d: string body %s", seed, fs)
		}
	}
}

// renameLikeSchema renames the body's keys by walking it next to the new
// output schema: what a client reading the new documentation expects.
func renameLikeSchema(t *testing.T, nt interface{}, body json.RawMessage, cs []Change) json.RawMessage {
	out := body
	for _, c := range cs {
		var ok bool
		out, ok = renameKeys(out, c.Path, c.From, c.To)
		if !ok {
			t.Fatal("bad body")
		}
	}
	return out
}

func canonJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return canonString(v)
}

func TestResponseSparesNL2SQLEnvelope(t *testing.T) {
	tool := mustTool(t, `{"name":"get_x","input":{"type":"object"},"output":{"type":"object","properties":{"columns":{"type":"array"},"row_count":{"type":"integer"},"rows":{"type":"array"}}}}`)
	cs, _ := planOp(t, "response", tool, 1, 1, func(p *planner) { p.kind = "nl2sql-rest" })
	if len(cs) != 0 {
		t.Fatalf("renamed the NL2SQL result envelope: %s", mustJSON(cs))
	}
}
