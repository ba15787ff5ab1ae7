package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/stb"
)

// WriteStableToolBench writes the episodes of agents that give final
// answers in StableToolBench's formats under dir:
//
//	converted/<agent>/<split>_run<r>.json   converted answers (the input of its evaluators)
//	pass_rate/<agent>/<split>_<agent>.json   the SoPR labels, rounds = runs × judging rounds
//
// so that StableToolBench's own eval_pass_rate.py (or stb.SolvePassRate)
// can recompute the pass rate. Query ids are the task ids' last path
// element ("G1_instruction/588" is 588).
func WriteStableToolBench(dir string, eps []*eval.Episode) error {
	type key struct{ agent, split string }
	conv := map[key]map[int]*stb.ConvertedFile{}
	pass := map[key]*stb.PassRateFile{}
	rounds := map[key]int{}
	for _, e := range eps {
		if e.Agent == "direct" || e.Agent == "oracle" || e.Outcome == nil {
			continue
		}
		k := key{e.Agent, e.Split}
		rounds[k] = max(rounds[k], len(e.SoPR))
	}
	for _, e := range eps {
		if e.Agent == "direct" || e.Agent == "oracle" || e.Outcome == nil {
			continue
		}
		k := key{e.Agent, e.Split}
		qid := e.TaskID[strings.LastIndex(e.TaskID, "/")+1:]
		if conv[k] == nil {
			conv[k] = map[int]*stb.ConvertedFile{}
		}
		f := conv[k][e.Run]
		if f == nil {
			f = &stb.ConvertedFile{Entries: map[string]*stb.Converted{}}
			conv[k][e.Run] = f
		}
		c := e.Converted()
		f.IDs = append(f.IDs, qid)
		f.Entries[qid] = c
		if len(e.SoPR) == 0 {
			continue
		}
		p := pass[k]
		if p == nil {
			p = &stb.PassRateFile{Entries: map[string]*stb.PassRateEntry{}}
			pass[k] = p
		}
		entry := p.Entries[qid]
		if entry == nil {
			steps, final := stb.Steps(&c.Answer)
			entry = &stb.PassRateEntry{Query: e.Query, AnswerSteps: steps, FinalStep: final, IsSolved: map[string]string{}}
			p.Entries[qid] = entry
			p.IDs = append(p.IDs, qid)
		}
		for r, v := range e.SoPR {
			entry.IsSolved[strconv.Itoa(e.Run*rounds[k]+r)] = stb.AnswerStatus(v.Label)
		}
	}
	for k, runs := range conv {
		d := filepath.Join(dir, "converted", k.agent)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for r, f := range runs {
			sort.Strings(f.IDs)
			if err := stb.WriteConverted(filepath.Join(d, fmt.Sprintf("%s_run%d.json", fileSafe(k.split), r)), f); err != nil {
				return err
			}
		}
	}
	for k, p := range pass {
		d := filepath.Join(dir, "pass_rate", k.agent)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		sort.Strings(p.IDs)
		if err := stb.WritePassRate(filepath.Join(d, fileSafe(k.split)+"_"+k.agent+".json"), p); err != nil {
			return err
		}
	}
	return nil
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}
