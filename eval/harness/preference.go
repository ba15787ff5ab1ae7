package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/llm"
)

// PreferenceConfig is what toolenv eval preference compares and how.
type PreferenceConfig struct {
	Reference   string        `json:"reference" flag:"reference" path:"file" help:"the reference run: a toolenv evaluation folder (eval_preference.py's --reference_model)"`
	Candidate   string        `json:"candidate" flag:"candidate" path:"file" help:"the candidate run: a toolenv evaluation folder (--output_model)"`
	Out         string        `json:"out" flag:"out" path:"file" help:"output folder: one eval_preference.py save file per split, preference.json, records.db"`
	Rounds      int           `json:"rounds" flag:"rounds" default:"2" help:"judging rounds per query (eval_preference.py's --evaluate_times)"`
	Seed        int64         `json:"seed" flag:"seed" default:"1" help:"seed of the judge's requests (round r uses seed+r)"`
	Replay      bool          `json:"replay" flag:"replay" help:"serve every judge request from the records, with no network"`
	Records     string        `json:"records" flag:"records" path:"file" help:"database of recorded requests (default DIR/records.db)"`
	Retries     int           `json:"retries" flag:"retries" default:"3" help:"retries of a judge request that failed with a timeout, 429 or 5xx"`
	JudgeURL    string        `json:"judge_url" flag:"judge-url" url:"http" help:"OpenAI-compatible endpoint of the judge"`
	JudgeModel  string        `json:"judge_model" flag:"judge-model" help:"judge model name"`
	JudgeKeyEnv string        `json:"judge_key_env" flag:"judge-key-env" default:"OPENAI_API_KEY" help:"environment variable holding the judge's API key"`
	Timeout     time.Duration `json:"timeout" flag:"judge-timeout" default:"2m" help:"timeout of one judge request"`
}

// DefaultPreference returns the configuration toolenv eval preference
// starts from.
func DefaultPreference() PreferenceConfig { return configfile.Default[PreferenceConfig]() }

// SplitPreference is one split's SoWR.
type SplitPreference struct {
	Split  string                `json:"split"`
	Result *stb.PreferenceResult `json:"result"`
	Line   string                `json:"line"`
	// Verdicts are the judge's, by query, one per judged round.
	Verdicts map[string][]judge.Preference `json:"verdicts"`
}

// Preference compares a candidate evaluation with a reference one as
// StableToolBench's eval_preference.py does (stb.Preference), the judge
// answering each comparison as its preference evaluator does
// (judge.Prefer), for every split both runs have: the queries are those
// either run has (run 0 of each); a query one run lacks counts for the
// other. It writes eval_preference.py's save file per split
// (DIR/<split>_<reference>_<candidate>.json) and DIR/preference.json,
// and prints eval_preference.py's line per split to w.
func Preference(ctx context.Context, pc *PreferenceConfig, opts Options, w io.Writer) ([]SplitPreference, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if pc.Reference == "" || pc.Candidate == "" || pc.Out == "" {
		return nil, invalid("--reference DIR, --candidate DIR and --out DIR are required: the two evaluations and the folder for the results")
	}
	if pc.JudgeURL == "" || pc.JudgeModel == "" {
		return nil, invalid("--judge-url and --judge-model are required: SoWR is a judge's preference")
	}
	if pc.Rounds < 1 {
		return nil, invalid("--rounds must be at least 1")
	}
	read := func(dir string) (map[string]map[string]*eval.Episode, error) {
		eps, _, err := eval.ReadJournals(dir)
		if err != nil {
			return nil, err
		}
		if len(eps) == 0 {
			return nil, toolenv.Errorw(toolenv.StatusNotFound, "give a folder toolenv eval wrote (its episodes.jsonl)", "%s: no episodes", dir)
		}
		out := map[string]map[string]*eval.Episode{}
		for _, e := range eval.Dedupe(eps) {
			if e.Run != 0 || e.Outcome == nil || e.Outcome.Trajectory == nil {
				continue
			}
			if out[e.Split] == nil {
				out[e.Split] = map[string]*eval.Episode{}
			}
			out[e.Split][e.TaskID] = e
		}
		return out, nil
	}
	ref, err := read(pc.Reference)
	if err != nil {
		return nil, err
	}
	cand, err := read(pc.Candidate)
	if err != nil {
		return nil, err
	}
	var splits []string
	for s := range ref {
		if cand[s] != nil {
			splits = append(splits, s)
		}
	}
	sort.Strings(splits)
	if len(splits) == 0 {
		return nil, invalid("%s and %s share no split: compare evaluations of the same tasks", pc.Reference, pc.Candidate)
	}
	if !pc.Replay {
		if err := llm.Preflight(ctx, llm.Endpoint{Role: "judge (--judge-url, --judge-model)", Client: llm.New(pc.JudgeURL, llm.Options{APIKey: getenv(pc.JudgeKeyEnv), Timeout: pc.Timeout}), Model: pc.JudgeModel}); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(pc.Out, 0o755); err != nil {
		return nil, err
	}
	records, err := OpenRecords(ctx, pc.Records, pc.Out, pc.Replay, log)
	if err != nil {
		return nil, err
	}
	defer records.Close()
	client := llm.New(pc.JudgeURL, llm.Options{APIKey: getenv(pc.JudgeKeyEnv), Timeout: pc.Timeout, MaxRetries: Retries(pc.Retries), Recorder: records, Replay: pc.Replay, Logger: log})
	refName, candName := filepath.Base(filepath.Clean(pc.Reference)), filepath.Base(filepath.Clean(pc.Candidate))
	var out []SplitPreference
	for _, sp := range splits {
		r, c := ref[sp], cand[sp]
		ids := map[string]bool{}
		for id := range r {
			ids[id] = true
		}
		for id := range c {
			ids[id] = true
		}
		in := stb.PreferenceInput{Rounds: pc.Rounds, HasRef: map[string]bool{}, HasOutput: map[string]bool{}}
		for id := range ids {
			in.TestIDs = append(in.TestIDs, id)
			in.HasRef[id], in.HasOutput[id] = r[id] != nil, c[id] != nil
		}
		sort.Strings(in.TestIDs)
		verdicts := map[string][]judge.Preference{}
		in.Judge = func(ctx context.Context, q string, round int) (string, error) {
			j := &judge.Judge{Model: client, ModelName: pc.JudgeModel, Seed: pc.Seed + int64(round)}
			ra, ca := r[q].Converted().Answer, c[q].Converted().Answer
			p, err := j.Prefer(ctx, r[q].Query, &ra, &ca)
			if err != nil {
				return "", err
			}
			verdicts[q] = append(verdicts[q], p)
			return p.Winner, nil
		}
		res, err := stb.Preference(ctx, in)
		if err != nil {
			return out, err
		}
		sp := SplitPreference{Split: sp, Result: res, Verdicts: verdicts, Line: stb.FormatWinRate(sp, refName, candName, res)}
		if err := writeSaveFile(filepath.Join(pc.Out, sp.Split+"_"+refName+"_"+candName+".json"), res, refName, candName); err != nil {
			return out, err
		}
		fmt.Fprintln(w, sp.Line)
		out = append(out, sp)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return out, err
	}
	return out, os.WriteFile(filepath.Join(pc.Out, "preference.json"), append(b, '\n'), 0o644)
}

// writeSaveFile writes a result as eval_preference.py saves prefer_dict.
func writeSaveFile(path string, res *stb.PreferenceResult, refName, candName string) error {
	var b []byte
	b = append(b, '{')
	for i, q := range res.Order {
		c := res.Counts[q]
		entry := map[string]any{refName: c.Ref, candName: c.Output}
		for k, v := range c.Rounds {
			entry[k] = v
		}
		eb, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		qb, _ := json.Marshal(q)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, qb...), ':'), eb...)
	}
	b = append(b, '}', '\n')
	return os.WriteFile(path, b, 0o644)
}
