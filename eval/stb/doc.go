// Package stb reads and writes StableToolBench's evaluation formats and
// reproduces its evaluation arithmetic:
//
//   - raw answers, as StableToolBench's inference writes them
//     (answer/<model>/<group>/<id>_CoT@1.json with a "trys" chain,
//     <id>_DFS_woFilter_w2.json with a "tree"), ReadRawAnswer;
//   - converted answers, the input of its evaluators
//     (model_predictions_converted/<model>/<group>.json), ReadConverted,
//     WriteConverted, and the conversion itself, Convert, following
//     toolbench/tooleval/convert_to_answer_format.py;
//   - toolenv trajectories in the converted format, FromTrajectory, so
//     that StableToolBench's own evaluator can score toolenv runs;
//   - pass-rate results (pass_rate_results/<model>/<group>_<model>.json,
//     per query and evaluation round: AnswerStatus.Solved / Unsolved /
//     Unsure), ReadPassRate and WritePassRate, and the solvable pass rate
//     and standard deviation that eval_pass_rate.py prints, SolvePassRate.
//
// The reference code is THUNLP-MT/StableToolBench,
// toolbench/tooleval/{convert_to_answer_format.py,eval_pass_rate.py,utils.py}.
package stb
