package bleu

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
)

// BenchmarkSentenceLongJSON scores StableToolBench's two converted answer
// files against each other (26 kB and 30 kB of JSON), character tokens,
// method3: the MirrorAPI pipeline's setting on long responses.
func BenchmarkSentenceLongJSON(b *testing.B) {
	dir := shareddata.Require(b, "stabletoolbench", "data_example", "model_predictions_converted")
	ref, err := os.ReadFile(dir + "/virtual_chatgpt_cot/G1_instruction.json")
	if err != nil {
		b.Fatal(err)
	}
	hyp, err := os.ReadFile(dir + "/virtual_chatgpt_dfs/G1_instruction.json")
	if err != nil {
		b.Fatal(err)
	}
	benchSentence(b, string(ref), string(hyp), Chars)
}

// BenchmarkSentence8KB scores two 8 kB JSON responses that share most of
// their members.
func BenchmarkSentence8KB(b *testing.B) {
	ref, hyp := syntheticJSON(8<<10, 0), syntheticJSON(8<<10, 7)
	b.Run("chars", func(b *testing.B) { benchSentence(b, ref, hyp, Chars) })
	b.Run("words", func(b *testing.B) { benchSentence(b, ref, hyp, Words) })
}

func benchSentence(b *testing.B, ref, hyp string, tok Tokenizer) {
	b.SetBytes(int64(len(ref) + len(hyp)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sentence([][]string{tok(ref)}, tok(hyp), Options{Smoothing: Method3}); err != nil {
			b.Fatal(err)
		}
	}
}

// syntheticJSON is a list of records of about size bytes; every k-th
// record differs when k > 0.
func syntheticJSON(size, k int) string {
	var sb strings.Builder
	sb.WriteString(`{"results": [`)
	for i := 0; sb.Len() < size; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		price := i * 3
		if k > 0 && i%k == 0 {
			price++
		}
		fmt.Fprintf(&sb, `{"id": %d, "name": "Item %d", "price": %d.99, "tags": ["red", "sale"], "url": "https://example.com/items/%d"}`, i, i, price, i)
	}
	sb.WriteString("]}")
	return sb.String()
}
