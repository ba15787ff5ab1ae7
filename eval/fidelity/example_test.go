package fidelity_test

import (
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
