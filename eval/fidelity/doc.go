// Package fidelity measures how faithfully a simulator imitates real
// APIs, as the MirrorAPI paper does (section 3.1): every recorded real
// request is answered again by the simulator under test, and each
// simulated response is scored against the real one with
//
//   - BLEU-4 exactly as NLTK computes it (package eval/bleu; by default
//     over characters with NLTK's method3 smoothing, the setting of the
//     pipeline behind the paper's figures), per pair and over the corpus;
//   - the cosine of the two responses' embeddings (an OpenAI-compatible
//     embeddings endpoint, or the offline embedder of mapping/embed);
//   - optionally two LLM judges with the paper's prompts, reproduced as
//     printed in its Appendix C: "Prompt Used In LLM-as-a-Judge" (a 1–10
//     rating written [[rating]], FastChat style, Table 12) and "Checking
//     Documentation Following" (overall_eval 1 or 0 with a reason).
//
// A pair is held out while it is scored: the simulator's few-shot
// examples and the synthesizer's verbatim answers never include the very
// call being measured (HoldOut, and the tool's documented example of the
// same arguments is hidden).
//
// Run scores pairs; Summarize aggregates them per tool and overall;
// Write produces summary.json, report.md, report.html and pairs.jsonl.
package fidelity
