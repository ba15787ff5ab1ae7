package answer_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/nl2api/answer"
)

func tbl(rows ...[]any) *answer.Table { return &answer.Table{Rows: rows} }

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gold, got *answer.Table
		ordered   bool
		ok        bool
		why       string
	}{
		{"same", tbl([]any{"a", int64(1)}), tbl([]any{"a", int64(1)}), false, true, ""},
		{"row order ignored", tbl([]any{"a"}, []any{"b"}), tbl([]any{"b"}, []any{"a"}), false, true, ""},
		{"row order decided", tbl([]any{"a"}, []any{"b"}), tbl([]any{"b"}, []any{"a"}), true, false, "row 1"},
		{"duplicates count", tbl([]any{"a"}, []any{"a"}), tbl([]any{"a"}, []any{"b"}), false, false, "sorted row 2"},
		{"int equals float", tbl([]any{int64(3)}), tbl([]any{3.0}), false, true, ""},
		{"within tolerance", tbl([]any{28.266666666666666}), tbl([]any{28.26666666666667}), false, true, ""},
		{"outside tolerance", tbl([]any{1.0}), tbl([]any{1.001}), false, false, "column 1"},
		{"json numbers", tbl([]any{json.Number("12.5")}), tbl([]any{12.5}), false, true, ""},
		{"numeric text equals the number", tbl([]any{"2019"}), tbl([]any{int64(2019)}), false, true, ""},
		{"text is case-sensitive", tbl([]any{"Blue"}), tbl([]any{"blue"}), false, false, `"blue"`},
		{"null equals null", tbl([]any{nil}), tbl([]any{nil}), false, true, ""},
		{"null is not zero", tbl([]any{nil}), tbl([]any{int64(0)}), false, false, "NULL"},
		{"null is not empty text", tbl([]any{""}), tbl([]any{nil}), false, false, ""},
		{"row count", tbl([]any{"a"}), tbl(), false, false, "0 rows, want 1"},
		{"column count", tbl([]any{"a", "b"}), tbl([]any{"a"}), false, false, "1 columns, want 2"},
		{"empty equals empty", tbl(), tbl(), true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := answer.Equal(tc.gold, tc.got, answer.Options{Ordered: tc.ordered})
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Fatalf("Equal = %v %q, want %v %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

func TestFromBodies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies []string
		want   string // JSON of the rows, or the error
	}{
		{"rows", []string{`{"type":"rows","columns":["a","b"],"rows":[[1,"x"],[2,"y"]]}`}, `[[1,"x"],[2,"y"]]`},
		{"rest body", []string{`{"columns":["n"],"row_count":1,"rows":[[7]]}`}, `[[7]]`},
		{"two values side by side", []string{`{"type":"value","value":3.5}`, `{"type":"value","value":118}`}, `[[3.5,118]]`},
		{"getters zip", []string{`{"type":"list","key_name":"a","values":["x","y"]}`, `{"type":"list","key_name":"b","values":[1,2]}`}, `[["x",1],["y",2]]`},
		{"empty list", []string{`{"type":"list","key_name":"a","values":[]}`}, `[]`},
		{"different lengths", []string{`{"type":"list","key_name":"a","values":["x"]}`, `{"type":"list","key_name":"b","values":[1,2]}`}, "different lengths"},
		{"a table is not an answer", []string{`{"type":"table","columns":["a"],"row_count":3}`}, "not an answer"},
		{"not JSON", []string{`{`}, "answer step 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raws []json.RawMessage
			for _, b := range tc.bodies {
				raws = append(raws, json.RawMessage(b))
			}
			got, err := answer.FromBodies(raws...)
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
				return
			}
			raw, _ := json.Marshal(got.Rows)
			if string(raw) != tc.want {
				t.Fatalf("rows %s, want %s", raw, tc.want)
			}
		})
	}
}

func FuzzFromBodies(f *testing.F) {
	f.Add(`{"type":"rows","columns":["a"],"rows":[[1],[null]]}`, `{"type":"value","value":1}`)
	f.Add(`{"type":"list","key_name":"a","values":[1,"x",null]}`, `{"type":"list","key_name":"b","values":[1,2,3]}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := answer.FromBodies(json.RawMessage(a), json.RawMessage(b))
		if err != nil {
			return
		}
		ok, why := answer.Equal(got, got, answer.Options{})
		if !ok {
			t.Fatalf("an answer differs from itself: %s", why)
		}
	})
}

func ExampleEqual() {
	gold := &answer.Table{Columns: []string{"power_name"}, Rows: [][]any{{"Agility"}, {"Stamina"}}}
	got, _ := answer.FromBodies(json.RawMessage(`{"label":"SELECT_COL_1","type":"rows","columns":["superpower_power_name"],"row_count":2,"rows":[["Stamina"],["Agility"]]}`))
	ok, _ := answer.Equal(gold, got, answer.Options{})
	fmt.Println("unordered:", ok)
	ok, why := answer.Equal(gold, got, answer.Options{Ordered: true})
	fmt.Println("ordered:", ok, why)
	// Output:
	// unordered: true
	// ordered: false row 1 column 1: "Stamina", want "Agility"
}

// A gold answer with ties accepts every answer SQL could equally have
// given: another pick among rows tied at the LIMIT, another order among
// equal keys; and nothing else.
func TestEqualTies(t *testing.T) {
	// SELECT name FROM t ORDER BY h DESC LIMIT 3 over h: 9, 7, 7, 7, 5.
	gold := &answer.Table{Columns: []string{"name"}, Rows: [][]any{{"a"}, {"b"}, {"c"}},
		Ties: &answer.Ties{Keys: [][]any{{9}, {7}, {7}}, Pool: [][]any{{"b"}, {"c"}, {"d"}}, PoolKeys: [][]any{{7}, {7}, {7}}}}
	for _, c := range []struct {
		rows    [][]any
		ordered bool
		ok      bool
	}{
		{[][]any{{"a"}, {"b"}, {"c"}}, true, true},
		{[][]any{{"a"}, {"d"}, {"b"}}, true, true},
		{[][]any{{"a"}, {"c"}, {"d"}}, true, true},
		{[][]any{{"d"}, {"a"}, {"c"}}, false, true},
		{[][]any{{"b"}, {"a"}, {"c"}}, true, false},  // a ranks first
		{[][]any{{"a"}, {"d"}, {"d"}}, true, false},  // d once only
		{[][]any{{"a"}, {"e"}, {"b"}}, true, false},  // e is no tied row
		{[][]any{{"b"}, {"c"}, {"d"}}, false, false}, // a is missing
		{[][]any{{"a"}, {"b"}}, true, false},
	} {
		ok, why := answer.Equal(gold, &answer.Table{Rows: c.rows}, answer.Options{Ordered: c.ordered})
		if ok != c.ok {
			t.Errorf("%v ordered=%v: %v (%s), want %v", c.rows, c.ordered, ok, why, c.ok)
		}
	}
	// Ties inside the answer (no LIMIT): equal keys may come in any order.
	gold = &answer.Table{Rows: [][]any{{"x", 1}, {"y", 2}, {"z", 2}, {"w", 3}}, Ties: &answer.Ties{Keys: [][]any{{1}, {2}, {2}, {3}}}}
	if ok, why := answer.Equal(gold, &answer.Table{Rows: [][]any{{"x", 1}, {"z", 2}, {"y", 2}, {"w", 3}}}, answer.Options{Ordered: true}); !ok {
		t.Errorf("swapped ties: %s", why)
	}
	if ok, _ := answer.Equal(gold, &answer.Table{Rows: [][]any{{"y", 2}, {"x", 1}, {"z", 2}, {"w", 3}}}, answer.Options{Ordered: true}); ok {
		t.Error("rows of different keys swapped were accepted")
	}
}
