package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
)

// Overview is the overview table of an evaluation's Markdown report (its
// first section), what toolenv eval prints when it ends.
func Overview(info *eval.RunInfo, s *eval.Summary) string {
	md := Markdown(info, s)
	i := strings.Index(md, "## Overview")
	if i < 0 {
		return ""
	}
	rest := md[i:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		rest = rest[:j+3]
	}
	return strings.TrimSpace(rest)
}

// Ending is what toolenv eval, eval merge and eval report print when they
// end: the overview table (Overview), then where dir's reports are.
func Ending(dir string, info *eval.RunInfo, s *eval.Summary) string {
	var b strings.Builder
	if o := Overview(info, s); o != "" {
		b.WriteString(o + "\n")
	}
	fmt.Fprintf(&b, "\nreports: %s, %s, %s\n", filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	return b.String()
}

// Rewrite writes the reports of the evaluation folder dir again from its
// episodes and run.json. A folder with no episodes is an
// invalid-arguments error.
func Rewrite(dir string) (*eval.RunInfo, *eval.Summary, error) {
	eps, problems, err := eval.ReadJournals(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(eps) == 0 {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%s holds no episodes", dir)
	}
	info, _ := eval.ReadRunInfo(dir)
	s, err := Write(dir, info, eps, problems)
	return info, s, err
}

// Merge joins the episodes of the evaluation folders dirs (the shards of
// one evaluation, or several) into out and writes the reports there; the
// run.json of the first folder, unsharded, becomes out's, planning the
// whole evaluation (shards) or what the folders planned together (several
// evaluations, its task count then the merged one). It returns the
// episodes merged.
func Merge(out string, dirs []string) (*eval.RunInfo, *eval.Summary, int, error) {
	eps, problems, err := eval.Merge(out, dirs)
	if err != nil {
		return nil, nil, 0, err
	}
	info, _ := eval.ReadRunInfo(dirs[0])
	if info != nil {
		// The merged run planned the whole evaluation when its parts are
		// shards of one (their TaskCount is all its tasks), else what
		// its parts planned; a part that stopped or was interrupted
		// leaves the whole so. A missing shard is missing episodes.
		planned, sharded := 0, info.Shard.Count > 1
		if sharded {
			planned = info.TaskCount * max(info.Runs, 1)
		}
		info.Interrupted, info.Stopped = false, ""
		for _, d := range dirs {
			part, err := eval.ReadRunInfo(d)
			if err != nil {
				continue
			}
			if !sharded {
				planned += cmp.Or(part.Planned, part.TaskCount*max(part.Runs, 1))
			}
			info.Interrupted = info.Interrupted || part.Interrupted
			info.Stopped = cmp.Or(part.Stopped, info.Stopped)
		}
		info.Shard, info.Planned = eval.Shard{}, planned
		tasks := map[string]bool{}
		for _, ep := range eps {
			tasks[ep.TaskID] = true
		}
		if !sharded {
			info.TaskCount = len(tasks)
		}
		if err := eval.WriteRunInfo(out, info); err != nil {
			return nil, nil, 0, err
		}
	}
	s, err := Write(out, info, eps, problems)
	return info, s, len(eps), err
}

// ReadEvaluations reads the evaluation folders dirs for comparison, each
// named after its folder. A folder with no episodes is an
// invalid-arguments error.
func ReadEvaluations(dirs []string) ([]Evaluation, error) {
	var evs []Evaluation
	for _, d := range dirs {
		eps, _, err := eval.ReadJournals(d)
		if err != nil {
			return nil, err
		}
		if len(eps) == 0 {
			return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "%s holds no episodes", d)
		}
		info, _ := eval.ReadRunInfo(d)
		s := eval.Summarize(eps)
		s.Status = eval.StatusOf(info, eps)
		evs = append(evs, Evaluation{Name: filepath.Base(filepath.Clean(d)), Info: info, Summary: s})
	}
	return evs, nil
}
