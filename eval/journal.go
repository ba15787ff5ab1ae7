package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
)

// Journal appends episodes to a JSONL file, one line each, synced to disk
// before Append returns, so that a crash or Ctrl-C loses nothing that was
// reported finished. It is safe for concurrent use.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenJournal opens (creating it) the journal at path for appending. A
// file that does not end with a newline (a line cut by a crash) gets one,
// so that the next line stays readable.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open episode journal: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, fmt.Errorf("open episode journal: %w", err)
			}
		}
	}
	return &Journal{f: f, path: path}, nil
}

// Append writes one episode as a line and syncs the file.
func (j *Journal) Append(e *Episode) error { return j.AppendAll([]*Episode{e}) }

// AppendAll writes episodes as lines and syncs the file once (a group
// commit: when episodes finish faster than the disk syncs, they share a
// sync).
func (j *Journal) AppendAll(eps []*Episode) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, e := range eps {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("journal: encode episode %s run %d: %w", e.TaskID, e.Run, err)
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadJournal reads a journal. A line that does not parse (the last line
// of an interrupted write, a hand edit) is skipped and reported in
// problems with its line number.
func ReadJournal(path string) (eps []*Episode, problems []error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read episode journal: %w", err)
	}
	defer f.Close()
	return readJournal(f, path)
}

func readJournal(r io.Reader, name string) (eps []*Episode, problems []error, err error) {
	eps, problems, err = toolenv.ReadJSONLines(r, name, "an episode", 256<<20, func(e *Episode) error {
		if e.TaskID == "" {
			return errors.New("the episode names no task")
		}
		if e.Outcome == nil || e.Outcome.Trajectory == nil {
			return errors.New("the episode has no outcome.trajectory (a line cut short or edited by hand; run the episode again with --resume)")
		}
		return nil
	})
	if err != nil {
		return eps, problems, fmt.Errorf("read episode journal %s: %w", name, err)
	}
	return eps, problems, nil
}

// JournalName is the journal's file name for a shard (the whole run when
// count <= 1).
func JournalName(s Shard) string {
	if s.Count <= 1 {
		return "episodes.jsonl"
	}
	return fmt.Sprintf("episodes-%d-of-%d.jsonl", s.Index, s.Count)
}

// ReadJournals reads every journal in dir (episodes.jsonl and the shard
// journals), keeping one episode per (task, run, agent, model): the last
// one written.
func ReadJournals(dir string) (eps []*Episode, problems []error, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "episodes*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		e, pr, err := ReadJournal(p)
		if err != nil {
			return nil, nil, err
		}
		eps = append(eps, e...)
		problems = append(problems, pr...)
	}
	return Dedupe(eps), problems, nil
}

// Dedupe keeps the last episode of each (task, run, agent, model) and
// orders them by agent, model, task and run.
func Dedupe(eps []*Episode) []*Episode {
	last := map[string]*Episode{}
	for _, e := range eps {
		last[e.key()] = e
	}
	out := make([]*Episode, 0, len(last))
	for _, e := range last {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.TaskID != b.TaskID {
			return a.TaskID < b.TaskID
		}
		return a.Run < b.Run
	})
	return out
}

func (e *Episode) key() string {
	return strings.Join([]string{e.Agent, e.Model, e.TaskID, fmt.Sprint(e.Run)}, "\x00")
}
