// Package report writes what people read about an evaluation: the
// summary as JSON, Markdown tables, and one self-contained HTML page with
// a chart per metric (inline SVG), the error categories, the ReAct loop
// statistics and every episode's trajectory (thoughts, calls,
// observations, verdicts) — nothing loaded from the internet. It also
// writes the episodes in StableToolBench's formats, and puts several
// evaluations side by side (Compare).
package report
