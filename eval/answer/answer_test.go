package answer

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func tab(t *testing.T, s string) Table {
	t.Helper()
	tb, err := FromBody(json.RawMessage(s))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestEqual(t *testing.T) {
	gold := `{"columns": ["name", "h"], "rows": [["A", 1.5], ["B", 2], ["C", null]]}`
	tests := []struct {
		name    string
		gold    string
		got     string
		ordered bool
		want    bool
	}{
		{"same", gold, gold, false, true},
		{"rows reordered", gold, `{"type": "rows", "columns": ["x", "y"], "rows": [["C", null], ["A", 1.5000000001], ["B", 2.0]]}`, false, true},
		{"rows reordered but order counts", gold, `{"rows": [["C", null], ["A", 1.5], ["B", 2]]}`, true, false},
		{"columns swapped", gold, `{"rows": [[1.5, "A"], [2, "B"], [null, "C"]]}`, false, true},
		{"null is not zero", gold, `{"rows": [["A", 1.5], ["B", 2], ["C", 0]]}`, false, false},
		{"a row missing", gold, `{"rows": [["A", 1.5], ["B", 2]]}`, false, false},
		{"number vs string", `{"rows": [[5]]}`, `{"rows": [["5"]]}`, false, false},
		{"list result", `{"rows": [["Blue"], ["Brown"]]}`, `{"label": "X", "type": "list", "key_name": "c", "count": 2, "values": ["Brown", "Blue"]}`, false, true},
		{"value result", `{"rows": [[0.25]]}`, `{"label": "V", "type": "value", "value": 0.25}`, false, true},
		{"duplicates count", `{"rows": [["a"], ["a"], ["b"]]}`, `{"rows": [["a"], ["b"], ["b"]]}`, false, false},
		{"bool as 0/1", `{"rows": [[1]]}`, `{"rows": [[true]]}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, why := Equal(tab(t, tt.gold), tab(t, tt.got), Options{Ordered: tt.ordered})
			if ok != tt.want {
				t.Errorf("Equal = %v (%s), want %v", ok, why, tt.want)
			}
			if !ok && why == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestFromResults(t *testing.T) {
	task := &toolenv.Task{ID: "t", Meta: map[string]any{"answer_labels": []any{"N", "H"}}}
	rs := []Labeled{
		{Label: "N", OK: true, Body: json.RawMessage(`{"type": "list", "values": ["a", "b"]}`)},
		{Label: "H", OK: true, Body: json.RawMessage(`{"type": "list", "values": [1, 2]}`)},
		{Label: "X", OK: false},
	}
	got, err := FromResults(task, rs)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := Equal(tab(t, `{"rows": [["a", 1], ["b", 2]]}`), got, Options{Ordered: true}); !ok {
		t.Errorf("side by side: %v %s", got, why)
	}
	// Labels the agent did not use: the last successful result.
	got, _ = FromResults(&toolenv.Task{Meta: map[string]any{"answer_labels": []any{"P", "Q"}}}, rs)
	if ok, _ := Equal(tab(t, `{"rows": [[1], [2]]}`), got, Options{}); !ok {
		t.Errorf("fallback: %v", got)
	}
	if _, err := FromResults(task, nil); err == nil {
		t.Error("no results accepted")
	}
	if _, err := FromBody(json.RawMessage(`{"type": "table", "preview": [[1]]}`)); err == nil {
		t.Error("a table preview accepted as an answer")
	}
}
