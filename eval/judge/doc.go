// Package judge asks a model for the verdicts two metrics need:
//
//   - StableToolBench's Solvable Pass Rate (SoPR): an answer that never
//     called Finish, or gave up, is Unsolved without asking; otherwise
//     the judge reads the final answer (check_answer_status) and answers
//     Solved, Unsolved or Unsure, and an Unsure answer is judged again
//     with the whole execution chain (parse_answer_status) — the flow of
//     StableToolBench's eval_pass_rate.py and check_is_solved;
//   - MirrorAPI's Final Answer Completeness (FAC): the judge sees only the
//     query and the final answer and answers Solved or Unsolved, with the
//     prompt of StableToolBench's fac_eval.py.
//
// The prompts are versioned files embedded in the binary (prompts/*.txt),
// reproduced exactly from the reference evaluators they come from, so that
// the judge models those evaluators were built for see what they expect.
// A verdict that cannot be read is recorded as metrics.Unparseable, never
// guessed.
package judge
