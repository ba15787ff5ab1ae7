package score_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/score"
)

// ExampleDecodeBFCL decodes a prompting model's raw text as BFCL's
// default_decode_ast_prompting does: keyword arguments only, `true` a
// name (so the string "true"), a tuple kept a tuple.
func ExampleDecodeBFCL() {
	out, err := score.DecodeBFCL("[restaurant_search.find_closest(location=\"Boston\", amenities=[\"Patio\"], open=true, at=(1, 2))]\n", score.BFCLFormatPython)
	fmt.Println(out, err)
	_, err = score.DecodeBFCL("```json\n[f(a=1)]\n```", score.BFCLFormatPython)
	fmt.Println(err != nil)
	// Output:
	// [[{restaurant_search.find_closest [{location Boston} {amenities [Patio]} {open true} {at [1 2]}]}]] <nil>
	// true
}

// ExampleScoreBFCLFile scores a result file BFCL released (a
// function-calling model's, names with '.' written '_') with BFCL's own
// question and possible-answer files.
func ExampleScoreBFCLFile() {
	dir := filepath.Join("testdata", "bfcl-released")
	rep, err := score.ScoreBFCLFile(context.Background(), filepath.Join(dir, "result", "gemini-exp-1206-FC", "BFCL_v3_simple_result.json"),
		score.BFCLReadOptions{Functions: filepath.Join(dir, "BFCL_v3_simple.json"), Answers: filepath.Join(dir, "possible_answer", "BFCL_v3_simple.json")},
		metrics.BFCLOptions{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(rep.Overview())
	// Output:
	// 46 cases: AST accuracy 0.8478, ordered 0.8478
}
