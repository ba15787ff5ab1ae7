package probe

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/index"
)

func retriever(t *testing.T) (IndexRetriever, *index.Index) {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "map.db")
	if _, err := index.Build(context.Background(), path, c.Tools, index.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(context.Background(), path, index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return IndexRetriever{Index: ix}, ix
}

func client(srv *llmtest.Server) *llm.Client {
	return llm.New(srv.URL(), llm.Options{MaxRetries: -1})
}

// The model's first answer: one good mapping (with a wrong field pair and a
// hallucinated field), one between a tool and a tool that was not offered.
const firstAnswer = "Here is my analysis.\n```json\n" + `{"mappings": [
 {"from": "world/search_books", "to": "world/find_titles", "score": 0.9,
  "inputs": [{"from": "q", "to": "searchTerm"}, {"from": "limit", "to": "pageSize"}],
  "outputs": [["results[].isbn", "items[].isbn13"], "total -> count"],
  "reasoning": "both search a book catalogue"},
 {"from": "world/search_books", "to": "world/not_offered", "score": 0.5, "reasoning": "?"},
]}` + "\n```"

// The reflection fixes the limit pair and drops nothing else.
const reflection = `{"critique": "limit corresponds to maxResults, not pageSize.",
 "mappings": [{"from": "search_books", "to": "find_titles", "score": 0.95,
  "inputs": [{"from": "q", "to": "searchTerm"}, {"from": "limit", "to": "maxResults"}],
  "outputs": [{"from": "results[].isbn", "to": "items[].isbn13"}, {"from": "total", "to": "count"}]}]}`

func TestProbeWithReflection(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: firstAnswer}, llmtest.Reply{Content: reflection}))
	defer srv.Close()
	retr, ix := retriever(t)
	p := New(client(srv), retr, Options{Model: "test-model", K: 4})
	r := p.Run(context.Background(), Query{ID: "q1", Text: "search books by title or author"})
	if r.Error != "" || len(r.Failures) != 0 {
		t.Fatalf("result = %+v", r)
	}
	if len(r.Candidates) != 4 || r.Calls != 2 || r.Repaired != 1 {
		t.Fatalf("candidates %v, calls %d, repaired %d", r.Candidates, r.Calls, r.Repaired)
	}
	if len(r.Initial) != 1 {
		t.Fatalf("initial = %+v", r.Initial)
	}
	m := r.Initial[0]
	if m.Provenance != mapping.LLM || m.Query != "q1" || m.Reasoning != "both search a book catalogue" || len(m.Inputs) != 1 || len(m.Outputs) != 2 {
		t.Fatalf("initial mapping = %+v", m)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"not among the candidates", "limit → pageSize: not in the documentation"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	final := r.Final()
	if len(final) != 1 || final[0].Provenance != mapping.Reflection || len(final[0].Inputs) != 2 || final[0].Inputs[1].To != "maxResults" {
		t.Fatalf("reflected = %+v", final)
	}
	if final[0].Reasoning != r.Critique || !strings.Contains(r.Critique, "maxResults") {
		t.Fatalf("reflection reasoning = %q", final[0].Reasoning)
	}
	// The reflection prompt carries the first answer and the conversation.
	reqs := srv.Requests()
	last := reqs[1].Messages
	if len(last) != 3 || last[1].Role != "assistant" || !strings.Contains(last[2].Content, "limit → pageSize") || !strings.Contains(last[2].Content, `"to": "searchTerm"`) {
		t.Fatalf("reflection request = %+v", last)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "search books by title or author") || !strings.Contains(reqs[0].Messages[0].Content, "response fields: results[].isbn") {
		t.Fatalf("first prompt = %s", reqs[0].Messages[0].Content)
	}
	// The file keeps the candidates' documentation and gives the set.
	f := NewFile("test-model", []*Result{r}, ix.Tool, nil)
	path := filepath.Join(t.TempDir(), "probe.json")
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Tools) != 4 || back.Tools["world/find_titles"].Input.Prop("searchTerm") == nil {
		t.Fatalf("tools = %v", back.Tools)
	}
	if s := back.Set(); len(s.Mappings) != 1 || s.Mappings[0].Provenance != mapping.Reflection {
		t.Fatalf("set = %+v", s.Mappings)
	}
}

func TestUnreadableAnswers(t *testing.T) {
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		failures int
		initial  int
		err      string
	}{
		{name: "repaired by asking again",
			replies:  []llmtest.Reply{{Content: "I think search_books and find_titles match."}, {Content: `{"mappings":[{"from":"world/search_books","to":"world/find_titles"}]}`}},
			failures: 1, initial: 1},
		{name: "python literal repaired locally",
			replies: []llmtest.Reply{{Content: `{'mappings': [{'from': 'world/search_books', 'to': 'world/find_titles', 'score': 0.7, 'inputs': [], 'outputs': []}]}`}},
			initial: 1},
		{name: "recorded as failed",
			replies:  []llmtest.Reply{{Content: "no idea"}, {Content: "still no idea {"}},
			failures: 2, initial: 0},
		{name: "model endpoint down",
			replies: []llmtest.Reply{{Status: 503}},
			err:     "llm: model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.replies...))
			defer srv.Close()
			retr, _ := retriever(t)
			r := New(client(srv), retr, Options{Model: "m", K: 3, NoReflection: true}).Run(context.Background(), Query{ID: "q", Text: "find books"})
			if len(r.Failures) != tt.failures || len(r.Initial) != tt.initial {
				t.Fatalf("failures %+v, initial %+v", r.Failures, r.Initial)
			}
			if tt.err != "" && !strings.Contains(r.Error, tt.err) {
				t.Fatalf("error = %q", r.Error)
			}
			if tt.failures > 0 && r.Failures[0].Raw == "" {
				t.Fatal("failure lost the raw answer")
			}
		})
	}
}

func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{firstAnswer, reflection, `[{"from":"a","to":"b"}]`, `{'mappings': []}`, "```json\n{\"mappings\": [}\n```", `{"from":"x"}`, `"just a string"`, `{"mappings": "none"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, _, err := parseAnswer(s)
		if err == nil && a == nil {
			t.Fatal("nil answer without an error")
		}
	})
}

func TestLoadQueries(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "q.txt")
	if err := toolenv.WriteFileAtomic(txt, []byte("first query\n\n second query \n")); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQueries(txt)
	if err != nil || len(qs) != 2 || qs[1].ID != "2" || qs[1].Text != "second query" {
		t.Fatalf("text queries = %+v, %v", qs, err)
	}
	tasks := filepath.Join(dir, "t.jsonl")
	if err := toolenv.WriteTasks(tasks, []*toolenv.Task{{ID: "t1", Query: "what?"}}); err != nil {
		t.Fatal(err)
	}
	if qs, err := LoadQueries(tasks); err != nil || len(qs) != 1 || qs[0].ID != "t1" {
		t.Fatalf("task queries = %+v, %v", qs, err)
	}
	empty := filepath.Join(dir, "e.txt")
	if err := toolenv.WriteFileAtomic(empty, []byte("\n\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadQueries(empty); err == nil {
		t.Fatal("empty query file accepted")
	}
}

// TestFileRecordsVersion: a probe file says which toolenv made it, with
// which model.
func TestFileRecordsVersion(t *testing.T) {
	f := NewFile("m", nil, func(string) *toolenv.Tool { return nil }, nil)
	if f.Provenance == nil || f.Provenance.Version == "" || f.Provenance.Config.(map[string]any)["model"] != "m" {
		t.Errorf("provenance %+v", f.Provenance)
	}
}
