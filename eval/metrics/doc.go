// Package metrics holds the metrics of the papers toolenv reproduces, each
// a plain function over call sequences, answers or judge labels:
//
//   - NESTful's intent and slot precision/recall/F1 and its partial and
//     full sequence match, exactly as NESTful's own calculate_scores
//     returns them (its parser's grounding, Python's str of values,
//     scikit-learn 1.2.1's averaging, quirks included), with named
//     corrections of its quirks (Nestful, NestfulOptions; NestfulScores
//     for toolenv's call sequences);
//   - a position-aware intent and slot P/R/F1 over the aligned call
//     sequences, repeated calls counted and slots scored only on correctly
//     predicted intents, as Live API-Bench reports them (Positional);
//   - the set and order P/R/F1 of API sequences from the API-mapping
//     paper (SetPRF, OrderPRF);
//   - BFCL's own AST checker, verdict for verdict (BFCLCheck: its
//     error_type values, any order for parallel categories or call by
//     call in order), on BFCL's inputs, on what a gold call implies
//     (BFCLFromGold) and on toolenv's direct attempts (BFCLAttempt);
//   - the Live API-Bench paper's BFCL-style error category of a failed
//     direct attempt (Appendix G, first match: ErrorCategory), which is
//     not BFCL's checker;
//   - ReAct loop statistics (Loops);
//   - StableToolBench's Solvable Pass Rate from judge labels and
//     MirrorAPI's Final Answer Completeness (PassRate).
//
// The functions take toolenv.GoldCall sequences (name, arguments, label)
// for both the gold and the predicted side. None of them calls a model.
package metrics
