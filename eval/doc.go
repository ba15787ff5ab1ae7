// Package eval runs agents over tasks and measures them with the papers'
// metrics.
//
// Run executes runs × tasks episodes with a bounded number at a time,
// scores each as it finishes (answer check, sequence metrics, BFCL error
// category, judge verdicts) and appends it to a journal in the output
// folder, synced to disk, so that an interrupted evaluation keeps every
// finished episode and Resume continues where it stopped. A run can be
// split across machines with Shard; Merge joins the shards' journals.
// Summarize turns episodes into the summary that package eval/report
// renders as Markdown and HTML.
//
// The output folder holds:
//
//	run.json          what was run (agent, model, tasks, seeds, prompts)
//	episodes.jsonl    one line per finished episode (episodes-<i>-of-<n>.jsonl per shard)
//	summary.json      the metrics per agent, model and split
//	report.md         the summary as Markdown tables
//	report.html       one self-contained page: charts, error categories, trajectories
//	stb/              the episodes in StableToolBench's converted-answer and pass-rate formats
package eval
