package metrics

import (
	"encoding/json"
	"math"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func nearPRF(a, b PRF) bool {
	return near(a.Precision, b.Precision) && near(a.Recall, b.Recall) && near(a.F1, b.F1)
}

func calls(spec ...any) []toolenv.GoldCall {
	var out []toolenv.GoldCall
	for i := 0; i < len(spec); i += 3 {
		c := toolenv.GoldCall{Name: spec[i].(string), Label: spec[i+2].(string)}
		if spec[i+1] != nil {
			c.Args = spec[i+1].(map[string]any)
		}
		out = append(out, c)
	}
	return out
}

type m = map[string]any

func TestPositional(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	gold := calls(
		"filter_data", m{"data_source": "$starting_table_var$", "key_name": "a", "value": n("1.0")}, "data_1",
		"filter_data", m{"data_source": "$data_1$", "key_name": "c", "value": n("500")}, "data_2",
		"retrieve_data", m{"data_source": "$data_2$", "key_name": "b"}, "out",
	)
	tests := []struct {
		name        string
		pred        []toolenv.GoldCall
		intent      PRF
		slot        PRF
		slotDefined bool
	}{
		{"identical", gold, PRF{1, 1, 1}, PRF{1, 1, 1}, true},
		{"own labels and number spelling", calls(
			"filter_data", m{"data_source": "$starting_table_var$", "key_name": "a", "value": n("1")}, "F1",
			"filter_data", m{"data_source": "F1", "key_name": "c", "value": n("500.0")}, "F2",
			"retrieve_data", m{"data_source": "$F2", "key_name": "b"}, "R",
		), PRF{1, 1, 1}, PRF{1, 1, 1}, true},
		{"repeated call counted once per position", calls(
			"filter_data", m{"data_source": "$starting_table_var$", "key_name": "a", "value": n("1")}, "x",
			"retrieve_data", m{"data_source": "$x$", "key_name": "b"}, "y",
		), PRF{1, 2.0 / 3, 0.8}, PRF{0.8, 0.8, 0.8}, true}, // retrieve reads the wrong table
		{"wrong type is a slot miss", calls(
			"filter_data", m{"data_source": "$starting_table_var$", "key_name": "a", "value": "1"}, "x",
		), PRF{1, 1.0 / 3, 0.5}, PRF{2.0 / 3, 2.0 / 3, 2.0 / 3}, true},
		{"nothing right", calls("sort_data", m{}, ""), PRF{0, 0, 0}, PRF{}, false},
		{"nothing predicted", nil, PRF{0, 0, 0}, PRF{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Positional(gold, tt.pred)
			if !nearPRF(got.Intent, tt.intent) {
				t.Errorf("intent = %+v, want %+v", got.Intent, tt.intent)
			}
			if got.SlotDefined != tt.slotDefined || tt.slotDefined && !nearPRF(got.Slot, tt.slot) {
				t.Errorf("slot = %+v (defined %v), want %+v (defined %v)", got.Slot, got.SlotDefined, tt.slot, tt.slotDefined)
			}
		})
	}
}

func TestAlignLCS(t *testing.T) {
	tests := []struct {
		gold, pred []string
		want       []Pair
	}{
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}, []Pair{{0, 0}, {1, 1}, {2, 2}}},
		{[]string{"a", "a", "b"}, []string{"a", "b"}, []Pair{{0, 0}, {2, 1}}},
		{[]string{"a", "b"}, []string{"x", "a", "y", "b"}, []Pair{{0, 1}, {1, 3}}},
		{[]string{"a"}, nil, nil},
	}
	for _, tt := range tests {
		got := AlignLCS(tt.gold, tt.pred)
		if len(got) != len(tt.want) {
			t.Errorf("AlignLCS(%v, %v) = %v, want %v", tt.gold, tt.pred, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("AlignLCS(%v, %v) = %v, want %v", tt.gold, tt.pred, got, tt.want)
				break
			}
		}
	}
}

func TestSetAndOrderPRF(t *testing.T) {
	tests := []struct {
		name       string
		gold, pred []string
		set, order PRF
	}{
		{"same", []string{"a", "b"}, []string{"a", "b"}, PRF{1, 1, 1}, PRF{1, 1, 1}},
		{"swapped", []string{"a", "b"}, []string{"b", "a"}, PRF{1, 1, 1}, PRF{0.5, 0.5, 0.5}},
		{"extra", []string{"a", "b"}, []string{"a", "x", "b"}, PRF{2.0 / 3, 1, 0.8}, PRF{2.0 / 3, 1, 0.8}},
		{"repeat", []string{"a", "a"}, []string{"a"}, PRF{1, 1, 1}, PRF{1, 0.5, 2.0 / 3}},
		{"empty pred", []string{"a"}, nil, PRF{0, 0, 0}, PRF{0, 0, 0}},
		{"both empty", nil, nil, PRF{1, 1, 1}, PRF{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SetPRF(tt.gold, tt.pred); !nearPRF(got, tt.set) {
				t.Errorf("SetPRF = %+v, want %+v", got, tt.set)
			}
			if got := OrderPRF(tt.gold, tt.pred); !nearPRF(got, tt.order) {
				t.Errorf("OrderPRF = %+v, want %+v", got, tt.order)
			}
		})
	}
}

func TestErrorCategory(t *testing.T) {
	schema := func(required []string, props ...string) *toolenv.Schema {
		s := toolenv.ObjectSchema()
		for _, p := range props {
			s.Properties[p] = &toolenv.Schema{Type: "string"}
			s.Order = append(s.Order, p)
		}
		s.Required = required
		return s
	}
	tools := map[string]*toolenv.Tool{
		"get_card":   {Name: "get_card", Input: schema([]string{"card_name"}, "card_name", "lang")},
		"get_artist": {Name: "get_artist", Input: schema(nil, "language")},
	}
	gold := calls("get_card", m{"card_name": "Cloudchaser Eagle"}, "")
	tests := []struct {
		name string
		a    Attempt
		want string
	}{
		{"unparseable", Attempt{}, ErrInstructionAlignment},
		{"two calls", Attempt{Parsed: true, Calls: append(gold, gold...)}, ErrWrongFuncCount},
		{"none", Attempt{Parsed: true}, ErrWrongFuncCount},
		{"bare name", Attempt{Parsed: true, Malformed: 1}, ErrWrongFuncFormat},
		{"hallucinated", Attempt{Parsed: true, Calls: calls("get_cards", m{"card_name": "x"}, "")}, ErrHallucinatedFuncName},
		{"wrong name", Attempt{Parsed: true, Calls: calls("get_artist", m{"language": "English"}, "")}, ErrWrongFuncName},
		{"missing required", Attempt{Parsed: true, Calls: calls("get_card", m{"lang": "en"}, "")}, ErrMissingRequiredParam},
		{"unexpected", Attempt{Parsed: true, Calls: calls("get_card", m{"card_name": "Cloudchaser Eagle", "lang": "en"}, "")}, ErrUnexpectedParam},
		{"value", Attempt{Parsed: true, Calls: calls("get_card", m{"card_name": "cloudchaser eagle"}, "")}, ErrValue},
		{"all right", Attempt{Parsed: true, Calls: gold}, ErrNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorCategory(tools, gold, tt.a); got != tt.want {
				t.Errorf("ErrorCategory = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoops(t *testing.T) {
	c := calls("f", m{"a": json.Number("1")}, "")
	c2 := calls("f", m{"a": json.Number("1.0")}, "")
	eps := []LoopEpisode{
		{Loops: 3, Completed: true, Calls: append(c, c...)},     // completed: never stuck
		{Loops: 10, OutOfBudget: true, Calls: append(c, c2...)}, // oob and stuck
		{Loops: 4, Calls: calls("f", m{}, "", "g", m{}, "")},    // unclassified
		{Loops: 3, Calls: append(c, c...)},                      // stuck only
	}
	got := Loops(eps)
	want := LoopStats{Episodes: 4, AvgLoops: 5, OutOfBudget: 0.25, Stuck: 0.5, Unclassified: 0.25}
	if got != want {
		t.Errorf("Loops = %+v, want %+v", got, want)
	}
}

func TestPassRate(t *testing.T) {
	// Expected values: eval_pass_rate.py's arithmetic on the same labels
	// (per-round sum of 1/0.5/0 over tasks, divided by the task count;
	// mean and numpy.std of the rounds, times 100).
	labels := []map[int]Label{
		{0: Solved, 1: Solved, 2: Unsolved},
		{0: Unsure, 1: Unsolved, 2: Solved},
		{0: Unsolved, 2: Unparseable}, // round 1 missing: counts 0
	}
	got := PassRate(labels, Rounds(labels))
	want := []float64{0.5, 1.0 / 3, 1.0 / 3}
	for i := range want {
		if !near(got.PerRound[i], want[i]) {
			t.Fatalf("PerRound = %v, want %v", got.PerRound, want)
		}
	}
	if !near(got.Mean, 38.88888888888889) || !near(got.Std, 7.856742013183861) {
		t.Errorf("PassRate = %.12f ± %.12f, want 38.888888888889 ± 7.856742013184", got.Mean, got.Std)
	}
	if r := PassRate(nil, 3); r.Mean != 0 || r.Tasks != 0 {
		t.Errorf("PassRate(nil) = %+v", r)
	}
}
