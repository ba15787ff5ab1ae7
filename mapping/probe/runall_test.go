package probe

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// RunAll probes every query in order, reporting progress after each; a
// canceled context probes none.
func TestRunAll(t *testing.T) {
	srv := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		return llmtest.Reply{Content: `{"mappings":[{"from":"world/search_books","to":"world/find_titles"}]}`}
	})
	defer srv.Close()
	retr, _ := retriever(t)
	p := New(client(srv), retr, Options{Model: "m", K: 3, NoReflection: true})
	var qs []Query
	for i := range 4 {
		qs = append(qs, Query{ID: fmt.Sprint("q", i), Text: "find books by title"})
	}
	var progress []string
	rs := p.RunAll(context.Background(), qs, func(done, total int) { progress = append(progress, fmt.Sprint(done, "/", total)) })
	if len(rs) != 4 || fmt.Sprint(progress) != "[1/4 2/4 3/4 4/4]" {
		t.Fatalf("%d results, progress %v", len(rs), progress)
	}
	for i, r := range rs {
		if r.Query.ID != qs[i].ID || r.Error != "" || len(r.Initial) != 1 {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rs := p.RunAll(ctx, qs, nil); len(rs) != 0 {
		t.Errorf("canceled: %d results", len(rs))
	}
}
