package bleu_test

import (
	"fmt"

	"github.com/toolenv/toolenv/eval/bleu"
)

// The MirrorAPI pipeline's BLEU-4: characters, NLTK's method3 smoothing
// (NLTK gives 0.94423032223025 for the same texts).
func Example() {
	real := `{"error": "", "response": {"city": "Paris", "temp": 21}}`
	simulated := `{"error": "", "response": {"city": "Paris", "temp": 19}}`
	score, err := bleu.Sentence([][]string{bleu.Chars(real)}, bleu.Chars(simulated), bleu.Options{Smoothing: bleu.Method3})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", score)
	// Output: 0.9442
}
