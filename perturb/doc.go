// Package perturb rewrites task queries to test an agent's robustness to
// how users write, independently of schema drift (DynamicToolBench,
// section III-D): a distractor story prepended, case mixing, punctuation
// noise, and LLM paraphrases. Every mode keeps the task's meaning and its
// concrete values; a paraphrase that loses any entity, number or quoted
// value of the original is rejected and asked for again. The same seed
// gives the same perturbations (paraphrases: the same requests, and with
// the LLM client's records, the same answers).
package perturb
