package metrics

import (
	"encoding/json"
	"math"
	"testing"
)

// TestNestfulResultJSONRoundTrip: what MarshalJSON writes reads back as
// the same result, NaN (null) included (an RL episode's outcome is kept
// in the store as JSON and must answer the same when read back).
func TestNestfulResultJSONRoundTrip(t *testing.T) {
	for _, in := range []NestfulResult{
		{PartialMatch: 0.5, PerSample: []float64{1, 0}, FullMatch: 0.5, Samples: 2},
		{PartialMatch: math.NaN(), PerSample: []float64{math.NaN()}, Samples: 1},
		{},
	} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out NestfulResult
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		b2, _ := json.Marshal(out)
		if string(b) != string(b2) || len(out.PerSample) != len(in.PerSample) {
			t.Fatalf("round trip: %s became %s", b, b2)
		}
	}
}
