package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// LoadQueries reads queries from a file: toolenv tasks (.jsonl, one task
// per line), StableToolBench query files (.json arrays with query and
// query_id; the group is the file's name), or plain text (one query per
// line, numbered from 1). Blank lines are skipped.
func LoadQueries(path string) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	var out []Query
	switch {
	case strings.HasSuffix(path, ".jsonl"):
		tasks, problems, err := toolenv.ReadTasks(path)
		if err != nil {
			return nil, err
		}
		if len(tasks) == 0 && len(problems) > 0 {
			return nil, fmt.Errorf("read queries %s: no line is a task: %w", path, problems[0])
		}
		for i, t := range tasks {
			if t.ID == "" {
				return nil, fmt.Errorf("read queries %s: task %d of the file has no id (give every task an \"id\")", path, i+1)
			}
			out = append(out, Query{ID: t.ID, Text: t.Query})
		}
	case len(trimmed) > 0 && trimmed[0] == '[':
		src, err := toolbench.Load(path)
		if err != nil {
			return nil, fmt.Errorf("read queries: %w", err)
		}
		group := strings.TrimSuffix(filepath.Base(path), ".json")
		for _, q := range src.Queries[group] {
			out = append(out, Query{ID: group + "/" + q.QueryID.String(), Text: q.Query})
		}
	default:
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			n++
			out = append(out, Query{ID: strconv.Itoa(n), Text: line})
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read queries %s: %w", path, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read queries %s: no queries (want tasks .jsonl, a StableToolBench query file, or one query per line)", path)
	}
	return out, nil
}
