package report_test

import (
	"fmt"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/report"
)

// A run interrupted after 3 of its 20 episodes opens its reports with a
// banner saying so.
func ExampleBanner() {
	fmt.Println(report.Banner(&eval.RunStatus{Planned: 20, Completed: 3, Missing: 17, Interrupted: true}))
	fmt.Printf("%q\n", report.Banner(&eval.RunStatus{Planned: 20, Completed: 20, Complete: true}))
	// Output:
	// Incomplete run: 3 of 20 planned episodes ran (3 completed, 0 errored); 17 never ran because the run was interrupted. Every figure below is over the episodes that ran, as its n says.
	// ""
}

// What toolenv eval prints when it ends, for a folder without episodes
// yet: no overview table, only where the reports are.
func ExampleEnding() {
	fmt.Print(report.Ending("runs/qwen", nil, &eval.Summary{}))
	// Output:
	// reports: runs/qwen/summary.json, runs/qwen/report.md, runs/qwen/report.html
}
