// Package answer decides whether an agent reached a task's gold answer,
// for the completion (win) rate.
//
// The comparison is the NL2SQL verification's own (package
// nl2api/answer: row order ignored unless the gold SQL's ORDER BY decides
// it, numbers — numeric text included — within a relative 1e-6, NULL
// equals only NULL), so that completion means exactly what "verified"
// means when the collections are built. This package adds what the
// harness needs around it: reading a task's gold answer and ordering flag,
// and building an agent's answer from its results the way the
// verification builds the gold sequence's — the results stored under the
// task's meta.answer_labels, side by side, else the agent's last
// successful result.
package answer
