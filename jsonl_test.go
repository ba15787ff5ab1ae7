package toolenv

import (
	"errors"
	"strings"
	"testing"
)

func TestReadJSONLines(t *testing.T) {
	type rec struct {
		ID string `json:"id"`
	}
	in := "{\"id\": \"a\"}\n\n  {\"id\": \"b\"}  \nnot json\n{\"id\": \"\"}\n{\"id\": \"c\"}"
	vals, problems, err := ReadJSONLines(strings.NewReader(in), "f.jsonl", "a record", 1<<10, func(r *rec) error {
		if r.ID == "" {
			return errors.New("the record has no id")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range vals {
		ids = append(ids, v.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Errorf("ids = %v, want a,b,c", ids)
	}
	if len(problems) != 2 || !strings.HasPrefix(problems[0].Error(), "f.jsonl:4: skipped, not a record: ") ||
		problems[1].Error() != "f.jsonl:5: skipped, the record has no id" {
		t.Errorf("problems = %v", problems)
	}
	// A line longer than the limit is a read error; what came before it is kept.
	vals, _, err = ReadJSONLines[rec](strings.NewReader("{\"id\": \"a\"}\n"+strings.Repeat("x", 100)), "g", "a record", 64, nil)
	if err == nil || len(vals) != 1 {
		t.Errorf("long line: %d values, err %v; want 1 and an error", len(vals), err)
	}
}
