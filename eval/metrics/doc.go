// Package metrics holds the metrics of the papers toolenv reproduces, each
// a plain function over call sequences, answers or judge labels:
//
//   - NESTful's intent and slot precision/recall/F1 (per-sample
//     multi-label, macro over the gold labels, as the NESTful scorer
//     computes them with scikit-learn) and its partial and full sequence
//     match (NestfulScores);
//   - a position-aware intent and slot P/R/F1 over the aligned call
//     sequences, repeated calls counted and slots scored only on correctly
//     predicted intents, as Live API-Bench reports them (Positional);
//   - the set and order P/R/F1 of API sequences from the API-mapping
//     paper (SetPRF, OrderPRF);
//   - the BFCL error category of a failed direct attempt (ErrorCategory);
//   - ReAct loop statistics (Loops);
//   - StableToolBench's Solvable Pass Rate from judge labels and
//     MirrorAPI's Final Answer Completeness (PassRate).
//
// The functions take toolenv.GoldCall sequences (name, arguments, label)
// for both the gold and the predicted side. None of them calls a model.
package metrics
