package fidelity_test

import (
	"context"
	"fmt"

	"github.com/toolenv/toolenv/eval/fidelity"
)

// The texts compared are the payloads, laid out as json.dumps does; a judge reads the
// verdicts in the paper's formats.
func Example() {
	fmt.Println(fidelity.Text([]byte(`"{\"city\":\"Paris\",\n \"temp\":21}"`), ""))
	score, ok := fidelity.ParseRating("The response follows the documentation.\n\nRating: [[8]]")
	fmt.Println(score, ok)
	v, ok := fidelity.ParseDocVerdict(`{"overall_eval": 0, "reason": "the documented field 'temp' is missing"}`)
	fmt.Println(v.Follows, v.Reason, ok)
	// Output:
	// {"city": "Paris", "temp": 21}
	// 8 true
	// false the documented field 'temp' is missing true
}

// ExampleScorePredictions scores recorded simulator predictions (the
// lines of LLaMA-Factory's generated_predictions.jsonl) with BLEU-4 as
// NLTK computes it (characters, method3).
func ExampleScorePredictions() {
	preds := []fidelity.Prediction{
		{Line: 1, Predict: `{"error": "", "response": "sunny, 21 C"}`, Label: `{"error": "", "response": "sunny, 21 C"}`},
		{Line: 2, Predict: `{"error": "Rate limit", "response": ""}`, Label: `{"error": "", "response": "[]"}`},
	}
	rep, err := fidelity.ScorePredictions(context.Background(), "generated_predictions.jsonl", preds, fidelity.PredictionsConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Overview())
	// Output:
	// 2 predictions: BLEU-4 83.82 (corpus 84.10)
}
