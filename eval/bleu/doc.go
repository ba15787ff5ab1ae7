// Package bleu computes BLEU exactly as NLTK's nltk.translate.bleu_score
// does (checked against NLTK 3.8 to 1e-12, testdata/nltk_bleu.json):
// modified n-gram precision clipped by the references, the brevity penalty
// with the closest reference length (ties to the shorter), the geometric
// mean of the precisions with NLTK's default weights (0.25 each: BLEU-4),
// and NLTK's handling of zero counts:
//
//   - no matching unigram in the whole corpus: BLEU is 0;
//   - without smoothing (method0) a precision with no match counts as
//     sys.float_info.min, so BLEU becomes a tiny positive number, not 0;
//   - the smoothing methods of Chen and Cherry (2014) as NLTK implements
//     them: method1 (epsilon), method2 (add one), method3 (NIST geometric),
//     method4 (length-scaled), method5 (neighbour average) and method7
//     (4 then 5), including NLTK's quirks: precisions keep the numerator
//     and denominator they were counted with (Fraction(_normalize=False)),
//     method5 and method7 read the corpus's last sentence pair, and sums of
//     logarithms use Python's correctly rounded math.fsum.
//
// Sentence is sentence_bleu and Corpus is corpus_bleu. Both take tokens;
// NLTK does not tokenise. Chars splits text into its code points, as
// Python's list(text) does: the tokenisation of the pipeline behind the
// MirrorAPI paper's "BLEU-4 scores from NLTK" (sentence_bleu([list(label)],
// list(pred), smoothing_function=SmoothingFunction().method3), LLaMA-
// Factory's metric). Words splits at whitespace as Python's str.split()
// does.
//
// method6 is left out: NLTK asserts that the trigram precision is not zero
// and raises otherwise.
package bleu
