package bleu

import (
	"math"
	"testing"
)

// FuzzSentence checks, for any two texts, tokenisation and smoothing:
// no panic, no error, a finite score of at least 0, at most 1 for the
// methods that keep precisions at most 1 (method5 and method7 average
// with p1+1, so NLTK's own values exceed 1 for near-identical texts),
// exactly 1 for identical texts of 4 tokens or more, and the one-pair
// corpus equal to the sentence score.
func FuzzSentence(f *testing.F) {
	f.Add("the cat is on the mat", "the the the the", uint8(0), true)
	f.Add(`{"error": "", "response": {"id": 42}}`, `{"error": "", "response": {"id": 43}}`, uint8(3), false)
	f.Add("北京是中国的首都", "北京是首都", uint8(1), false)
	f.Add("", "x", uint8(5), false)
	f.Add("a\x1cb c", "a b\u3000c", uint8(7), true)
	f.Fuzz(func(t *testing.T, ref, hyp string, sm uint8, words bool) {
		tok := Chars
		if words {
			tok = Words
		}
		s := Smoothing(sm % 8)
		if s == method6 {
			s = Method4
		}
		o := Options{Smoothing: s}
		r, h := tok(ref), tok(hyp)
		got, err := Sentence([][]string{r}, h, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(got) || math.IsInf(got, 0) || got < 0 {
			t.Fatalf("BLEU = %v", got)
		}
		if s <= Method4 && got > 1 {
			t.Fatalf("BLEU = %v > 1 with %v", got, s)
		}
		same, err := Sentence([][]string{h}, h, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) >= 4 && s <= Method4 && same != 1 {
			t.Fatalf("identical texts of %d tokens score %v with %v", len(h), same, s)
		}
		corpus, err := Corpus([][][]string{{r}}, [][]string{h}, o)
		if err != nil || corpus != got {
			t.Fatalf("corpus of one pair %v, sentence %v (err %v)", corpus, got, err)
		}
	})
}
