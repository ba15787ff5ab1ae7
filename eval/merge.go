package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
)

// Merge reads the journals of every folder in dirs (the shards of one
// evaluation, or several evaluations), keeps one episode per task, run,
// agent and model, and writes them as out/episodes.jsonl. It returns the
// merged episodes.
func Merge(out string, dirs []string) ([]*Episode, []error, error) {
	var all []*Episode
	var problems []error
	for _, d := range dirs {
		eps, pr, err := ReadJournals(d)
		if err != nil {
			return nil, nil, err
		}
		if len(eps) == 0 && len(pr) == 0 {
			return nil, nil, fmt.Errorf("%s holds no episodes*.jsonl journal", d)
		}
		all = append(all, eps...)
		problems = append(problems, pr...)
	}
	all = Dedupe(all)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, err
	}
	if err := WriteJournal(filepath.Join(out, JournalName(Shard{})), all); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	return all, problems, nil
}

// WriteJournal writes episodes as a journal file at path, replacing it
// atomically.
func WriteJournal(path string, eps []*Episode) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, e := range eps {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("episode %s run %d: %w", e.TaskID, e.Run, err)
		}
	}
	return toolenv.WriteFileAtomic(path, b.Bytes())
}
