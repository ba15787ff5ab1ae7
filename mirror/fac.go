package mirror

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/promptfile"
)

// The files FACFiles writes.
const (
	FileFACPrompts = "fac.jsonl"        // one FAC prompt per episode, for annotating models
	FileFACSheet   = "fac.csv"          // the same for human annotators, with empty label columns
	FileFACLabels  = "fac.labels.jsonl" // a model's labels, when one is given
)

// FACOptions configure FACFiles.
type FACOptions struct {
	// Out is the folder written.
	Out string
	// Judge, when set, annotates every episode with the FAC prompt (its
	// model's verdicts go to fac.labels.jsonl); nil writes the files to
	// annotate only.
	Judge *judge.Judge
	// Progress receives a progress bar over the episodes; nil shows
	// none.
	Progress io.Writer
}

// FACStats says what FACFiles wrote.
type FACStats struct {
	Episodes int `json:"episodes"`
	// Written is how many episodes had a final answer to annotate.
	Written int `json:"written"`
	// NoAnswer counts episodes without one.
	NoAnswer int `json:"no_answer"`
	// Labels counts the model's labels.
	Labels map[string]int `json:"labels,omitempty"`
}

// facLine is a line of fac.jsonl.
type facLine struct {
	ID       string    `json:"id"`
	TaskID   string    `json:"task_id"`
	Run      int       `json:"run"`
	Agent    string    `json:"agent"`
	Model    string    `json:"model"`
	Query    string    `json:"query"`
	Answer   string    `json:"answer"`
	Messages []message `json:"messages"`
}

// facLabel is a line of fac.labels.jsonl.
type facLabel struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Reason string `json:"reason,omitempty"`
	Raw    string `json:"raw,omitempty"`
	Error  string `json:"error,omitempty"`
	Model  string `json:"model"`
}

// facPrompt is the FAC scoring prompt of Table 13 (eval/judge keeps it).
func facPrompt() (promptfile.Prompt, error) {
	for _, p := range judge.Prompts() {
		if p.Name == "fac" {
			return p, nil
		}
	}
	return promptfile.Prompt{}, fmt.Errorf("eval/judge has no FAC prompt")
}

// FACFiles writes the FAC annotation files of evaluation episodes (the
// paper's §4.2: the query and the final answer, nothing else, shown with
// the prompt of Table 13; models and people label them Solved or
// Unsolved, to train an offline FAC evaluator): fac.jsonl with the
// prompt of each episode as a chat message, fac.csv for human
// annotators, and, with a judge, fac.labels.jsonl.
func FACFiles(ctx context.Context, eps []*eval.Episode, opts FACOptions) (*FACStats, error) {
	if opts.Out == "" {
		return nil, usage("fac: no output folder")
	}
	p, err := facPrompt()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	st := &FACStats{Labels: map[string]int{}}
	pf, err := newAtomicFile(filepath.Join(opts.Out, FileFACPrompts))
	if err != nil {
		return nil, err
	}
	var lf *atomicFile
	if opts.Judge != nil {
		if lf, err = newAtomicFile(filepath.Join(opts.Out, FileFACLabels)); err != nil {
			pf.abort()
			return nil, err
		}
	}
	csvPath := filepath.Join(opts.Out, FileFACSheet)
	cf, err := os.Create(csvPath + ".tmp")
	if err != nil {
		pf.abort()
		return nil, err
	}
	cb := bufio.NewWriter(cf)
	cw := csv.NewWriter(cb)
	cw.Write([]string{"id", "query", "answer", "label (Solved/Unsolved)", "annotator", "note"})
	abort := func() {
		pf.abort()
		if lf != nil {
			lf.abort()
		}
		cf.Close()
		os.Remove(csvPath + ".tmp")
	}
	bar := barOn(opts.Progress, len(eps), "fac: episodes")
	defer bar.Finish()
	for _, ep := range eps {
		bar.Add(1)
		st.Episodes++
		answer := ""
		if ep.Outcome != nil && ep.Outcome.Trajectory != nil {
			answer = finalAnswer(ep.Converted().Answer.FinalAnswer)
		}
		if answer == "" {
			st.NoAnswer++
			continue
		}
		id := ep.TaskID + "#" + strconv.Itoa(ep.Run) + "/" + ep.Agent + "/" + ep.Model
		line := facLine{ID: id, TaskID: ep.TaskID, Run: ep.Run, Agent: ep.Agent, Model: ep.Model, Query: ep.Query, Answer: answer,
			Messages: []message{{Role: "user", Content: promptfile.Fill(p.Text, map[string]string{"query": ep.Query, "answer": answer})}}}
		if err := pf.writeJSON(line); err != nil {
			abort()
			return nil, err
		}
		cw.Write([]string{id, ep.Query, answer, "", "", ""})
		st.Written++
		if opts.Judge != nil {
			v := opts.Judge.FAC(ctx, ep.Query, answer)
			if v.Error != "" && ctx.Err() != nil {
				abort()
				return nil, ctx.Err()
			}
			st.Labels[string(v.Label)]++
			if err := lf.writeJSON(facLabel{ID: id, Label: string(v.Label), Reason: v.Reason, Raw: v.Raw, Error: v.Error, Model: opts.Judge.ModelName}); err != nil {
				abort()
				return nil, err
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		abort()
		return nil, err
	}
	if err := cb.Flush(); err != nil {
		abort()
		return nil, err
	}
	if err := cf.Close(); err != nil {
		abort()
		return nil, err
	}
	if err := os.Rename(csvPath+".tmp", csvPath); err != nil {
		abort()
		return nil, err
	}
	if err := pf.close(); err != nil {
		return nil, err
	}
	if lf != nil {
		if err := lf.close(); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# FAC annotation files\n\nThe final answers of %d evaluation episodes (of %d; %d ended without one), each with the FAC scoring prompt of the MirrorAPI paper's Table 13 (prompt `%s` version %s, sha256 %s: %s).\n\n",
		st.Written, st.Episodes, st.NoAnswer, p.Name, p.Version, p.SHA256, p.Source)
	fmt.Fprintf(&b, "- `%s`: one `{\"id\", \"query\", \"answer\", \"messages\"}` per episode; send `messages` to a model to annotate.\n", FileFACPrompts)
	fmt.Fprintf(&b, "- `%s`: the same for people: fill `label` with Solved or Unsolved and `annotator` with your name.\n", FileFACSheet)
	if opts.Judge != nil {
		fmt.Fprintf(&b, "- `%s`: the labels of `%s`:", FileFACLabels, opts.Judge.ModelName)
		for _, k := range sortedKeys(st.Labels) {
			fmt.Fprintf(&b, " %s %d;", k, st.Labels[k])
		}
		b.WriteString("\n")
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(opts.Out, "README.md"), []byte(b.String())); err != nil {
		return nil, err
	}
	return st, nil
}

// finalAnswer is the text of a final answer: the "final_answer" of the
// Finish call's arguments (ToolBench's {"return_type", "final_answer"}),
// else the text as it is.
func finalAnswer(raw string) string {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "{") {
		if m := dictOf(firstValue(raw)); m != nil {
			if s, ok := m["final_answer"].(string); ok {
				return strings.TrimSpace(s)
			}
		}
	}
	return raw
}

func firstValue(s string) any {
	v, _ := firstJSON(s, '{')
	return v
}
