package answer

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestGoldAndFromResults(t *testing.T) {
	task := &toolenv.Task{ID: "t", Answer: json.RawMessage(`{"columns": ["n", "h"], "rows": [["a", 1], ["b", 2]]}`),
		Meta: map[string]any{"answer_labels": []any{"N", "H"}, "ordered": true}}
	gold, ok, err := Gold(task)
	if !ok || err != nil || len(gold.Rows) != 2 || !Ordered(task) {
		t.Fatalf("gold %+v ok %v err %v", gold, ok, err)
	}
	tests := []struct {
		name    string
		results []Labeled
		want    bool
		err     bool
	}{
		{"gold labels side by side", []Labeled{
			{Label: "N", OK: true, Body: json.RawMessage(`{"type": "list", "key_name": "n", "values": ["a", "b"]}`)},
			{Label: "$H$", OK: true, Body: json.RawMessage(`{"type": "list", "key_name": "h", "values": [1, 2.0]}`)},
			{Label: "X", OK: false},
		}, true, false},
		{"own labels: the last result", []Labeled{
			{Label: "mine", OK: true, Body: json.RawMessage(`{"type": "list", "values": ["a"]}`)},
			{Label: "rows", OK: true, Body: json.RawMessage(`{"type": "rows", "columns": ["x", "y"], "rows": [["a", "1"], ["b", 2]]}`)},
		}, true, false},
		{"row order counts", []Labeled{
			{Label: "rows", OK: true, Body: json.RawMessage(`{"type": "rows", "columns": ["x", "y"], "rows": [["b", 2], ["a", 1]]}`)},
		}, false, false},
		{"a table is not an answer", []Labeled{{Label: "T", OK: true, Body: json.RawMessage(`{"type": "table", "preview": [[1]]}`)}}, false, true},
		{"nothing succeeded", []Labeled{{Label: "N", OK: false}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromResults(task, tt.results)
			if (err != nil) != tt.err {
				t.Fatalf("FromResults error %v, want error %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if ok, why := Equal(gold, got, Options{Ordered: Ordered(task)}); ok != tt.want {
				t.Errorf("Equal = %v (%s), want %v", ok, why, tt.want)
			}
		})
	}
	if _, ok, _ := Gold(&toolenv.Task{}); ok {
		t.Error("a task without an answer has one")
	}
}
