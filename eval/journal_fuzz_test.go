package eval

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadJournal reads any bytes as an episode journal: no panic, no
// error for a broken line (it is a problem, with its line number); every
// episode names its task; and the episodes read, written as a journal
// and read again, are the same episodes with no problem.
func FuzzReadJournal(f *testing.F) {
	ep := `{"task_id": "t1", "run": 0, "agent": "react", "model": "m", "split": "s", "steps": [{"tool": "x", "args": {"a": 1}}], "error": ""}`
	for _, s := range []string{ep + "\n" + ep + "\n", ep + "\n" + ep[:30], "\n\n", `{"task_id": ""}`, "{}\n" + ep, `[1]`, "\xef\xbb\xbf" + ep + "\r\n", `{"task_id": "t", "outcome": null}`, `{"task_id": "t", "outcome": {}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		eps, problems, err := readJournal(bytes.NewReader(data), "episodes.jsonl")
		if err != nil {
			if len(data) < 1<<20 {
				t.Fatalf("a small journal failed as a whole: %v", err)
			}
			return
		}
		for _, p := range problems {
			if !bytes.Contains([]byte(p.Error()), []byte("episodes.jsonl")) {
				t.Fatalf("a problem that does not name the file: %v", p)
			}
		}
		var b bytes.Buffer
		for _, e := range eps {
			if e.TaskID == "" {
				t.Fatal("an episode without a task was read")
			}
			if e.Outcome == nil || e.Outcome.Trajectory == nil {
				t.Fatal("an episode without an outcome was read")
			}
			line, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("episode %s does not marshal: %v", e.TaskID, err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		Summarize(eps) // what eval report does with them: must not panic
		again, problems, err := readJournal(&b, "again.jsonl")
		if err != nil || len(problems) > 0 || len(again) != len(eps) {
			t.Fatalf("%d episodes written, %d read back (%v %v)", len(eps), len(again), err, problems)
		}
	})
}
