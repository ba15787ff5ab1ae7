package metrics_test

import (
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

func ExampleOrderPRF() {
	gold := []string{"filter_data", "sort_data", "retrieve_data"}
	pred := []string{"sort_data", "filter_data", "retrieve_data"}
	fmt.Printf("set %.2f, order %.2f\n", metrics.SetPRF(gold, pred).F1, metrics.OrderPRF(gold, pred).F1)
	// Output: set 1.00, order 0.67
}

func ExamplePositional() {
	gold := []toolenv.GoldCall{
		{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$", "key_name": "a", "value": "x"}, Label: "F"},
		{Name: "retrieve_data", Args: map[string]any{"data_source": "$F$", "key_names": []any{"b"}}, Label: "R"},
	}
	pred := []toolenv.GoldCall{
		{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$", "key_name": "a", "value": "y"}, Label: "MINE"},
		{Name: "retrieve_data", Args: map[string]any{"data_source": "$MINE$", "key_names": []any{"b"}}},
	}
	r := metrics.Positional(gold, pred)
	fmt.Printf("intent F1 %.2f, slot F1 %.2f\n", r.Intent.F1, r.Slot.F1)
	// Output: intent F1 1.00, slot F1 0.80
}

func ExamplePassRate() {
	// Three queries judged in three rounds, as in StableToolBench's
	// pass_rate_results.
	labels := []map[int]metrics.Label{
		{0: metrics.Unsolved, 1: metrics.Unsolved, 2: metrics.Unsolved},
		{0: metrics.Solved, 1: metrics.Solved, 2: metrics.Solved},
		{0: metrics.Solved, 1: metrics.Unsure, 2: metrics.Solved},
	}
	r := metrics.PassRate(labels, 3)
	fmt.Printf("Solve rate: %.1f%% Std: %.1f%%\n", r.Mean, r.Std)
	// Output: Solve rate: 61.1% Std: 7.9%
}

func ExampleErrorCategory() {
	tools := map[string]*toolenv.Tool{"get_card": {Name: "get_card", Input: toolenv.ObjectSchema()}}
	gold := []toolenv.GoldCall{{Name: "get_card", Args: map[string]any{}}}
	fmt.Println(metrics.ErrorCategory(tools, gold, metrics.Attempt{Parsed: true, Calls: []toolenv.GoldCall{{Name: "get_cards"}}}))
	// Output: hallucinated_func_name
}

func ExampleNestful() {
	samples := []metrics.NestfulSample{{
		Gold: `[{"name": "f", "arguments": {"q": 1}, "label": "var1"}, {"name": "g", "arguments": {"y": "$var1.out$"}, "label": "var2"}, {"name": "var_result", "arguments": {"r": "$var2$"}}]`,
		// Other labels, no var_result: the same once grounded.
		Pred: `[{"name": "f", "arguments": {"q": 1}, "label": "var7"}, {"name": "g", "arguments": {"y": "$var7.out$"}, "label": "var8"}]`,
	}, {
		Gold: `[{"name": "f", "arguments": {"q": 2}}, {"name": "h", "arguments": {"z": 7}}]`,
		Pred: `[{"name": "h", "arguments": {"z": 7.0}}]`,
	}}
	r, err := metrics.Nestful(samples, metrics.NestfulOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := r.Printed()
	fmt.Println("intent F1", p["f1_intent"], "slot F1", p["f1_slot"], "partial", p["accuracy_combined"], "full", p["percentage_times_full_score"])
	// Output: intent F1 0.889 slot F1 0.500 partial 0.500 full 0.500
}

func ExampleBFCLCheck() {
	docs, _ := pyfmt.Loads(`[{"name": "geo.distance", "parameters": {"type": "dict", "properties": {
		"origin": {"type": "string"}, "unit": {"type": "string"}}, "required": ["origin"]}}]`)
	funcs, _ := metrics.BFCLFunctionsFromDocs(docs)
	// BFCL's possible answers: every accepted value, "" for "may be left out".
	answers, _ := pyfmt.Loads(`[{"geo.distance": {"origin": ["New York City", "NYC"], "unit": ["", "miles"]}}]`)
	for _, out := range []string{
		`[{"geo.distance": {"origin": "nyc"}}]`,
		`[{"geo.distance": {"origin": "NYC", "unit": "km"}}]`,
		`[{"geo.distance": {"origin": "NYC"}}, {"geo.distance": {"origin": "NYC"}}]`,
	} {
		o, _ := pyfmt.Loads(out)
		r, _ := metrics.BFCLCheck("simple_python", funcs, o, answers.([]any), metrics.BFCLOptions{})
		fmt.Println(r.Verdict())
	}
	// Output:
	// valid
	// value_error:string
	// simple_function_checker:wrong_count
}

// ExamplePassHatK: four tasks run three times; only the tasks whose
// three runs all succeeded count.
func ExamplePassHatK() {
	v, tasks := metrics.PassHatK([]int{3, 2, 0, 3}, []int{3, 3, 3, 3}, 3)
	fmt.Printf("pass^3 = %.2f over %d tasks\n", v, tasks)
	m, sd, lo, hi, _ := metrics.Spread([]float64{0.75, 0.5, 0.5})
	fmt.Printf("mean %.2f, sample std %.2f, 95%% interval [%.2f, %.2f]\n", m, sd, lo, hi)
	// Output:
	// pass^3 = 0.50 over 4 tasks
	// mean 0.58, sample std 0.14, 95% interval [0.22, 0.94]
}
