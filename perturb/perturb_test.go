package perturb

import (
	"context"
	"reflect"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

var queries = []*toolenv.Task{
	{ID: "1", Query: "I have 100 euros. How many US dollars is that?"},
	{ID: "2", Query: "Find Frank Herbert's Dune and tell me how many pages it has."},
	{ID: "3", Query: `I'm planning a trip to Paris on 2024-05-01. Can you find hotels near the "Eiffel Tower" for 2 adults?`},
	{ID: "4", Query: "Please list all the superpowers of 3-D Man.", Meta: map[string]any{"db": "superhero"}},
}

func TestNoiseModesKeepValues(t *testing.T) {
	for _, mode := range []string{Distractor, CaseMix, Punctuation} {
		t.Run(mode, func(t *testing.T) {
			out, rep, err := Perturb(context.Background(), queries, Options{Mode: mode, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			again, _, _ := Perturb(context.Background(), queries, Options{Mode: mode, Seed: 1})
			other, _, _ := Perturb(context.Background(), queries, Options{Mode: mode, Seed: 2})
			differs := false
			for i, nt := range out {
				orig := queries[i]
				if nt.Meta[MetaOriginal] != orig.Query || nt.Meta[MetaMode] != mode || nt.ID != orig.ID {
					t.Errorf("%s: meta %v", nt.ID, nt.Meta)
				}
				if again[i].Query != nt.Query {
					t.Errorf("%s: same seed, other query", nt.ID)
				}
				differs = differs || other[i].Query != nt.Query
				text := nt.Query
				if mode == CaseMix {
					// Case mixing changes the case of names on purpose.
					if !strings.EqualFold(text, orig.Query) {
						t.Errorf("%q → %q changed more than case", orig.Query, text)
					}
					continue
				}
				if missing := Missing(Extract(orig.Query), text); len(missing) > 0 {
					t.Errorf("%q → %q lost %v", orig.Query, text, missing)
				}
			}
			if !differs {
				t.Error("another seed gave the same queries")
			}
			if rep.Tasks != len(queries) || rep.Changed == 0 {
				t.Errorf("report %+v", rep)
			}
			if queries[3].Meta["db"] != "superhero" || len(queries[3].Meta) != 1 {
				t.Error("the input task was modified")
			}
		})
	}
}

func TestExtract(t *testing.T) {
	tests := []struct {
		q    string
		want Values
	}{
		{`Convert 1,250.50 USD to EUR for "Acme Corp" on 2024-05-01`, Values{Quoted: []string{"Acme Corp"}, Numbers: []string{"1,250.50", "2024-05-01"}, Entities: []string{"USD", "EUR"}}},
		{"Find Frank Herbert's Dune.", Values{Entities: []string{"Frank Herbert", "Dune"}}},
		{"What is the weather in Paris? Email me at a@b.com", Values{Entities: []string{"a@b.com", "Paris", "Email"}}},
	}
	for _, tt := range tests {
		got := Extract(tt.q)
		if strings.Join(got.Quoted, "|") != strings.Join(tt.want.Quoted, "|") || strings.Join(got.Numbers, "|") != strings.Join(tt.want.Numbers, "|") {
			t.Errorf("%q: %+v, want %+v", tt.q, got, tt.want)
		}
		for _, e := range tt.want.Entities {
			if e == "Email" {
				continue // a sentence-opening word: may or may not count
			}
			if !contains(got.Entities, e) {
				t.Errorf("%q: entities %v lack %q", tt.q, got.Entities, e)
			}
		}
	}
}

// TestParaphraseRejectsLostValues runs the paraphrase mode against an
// OpenAI-compatible test server whose first answer drops a number and
// whose second keeps everything: the first must be rejected and the
// second kept.
func TestParaphraseRejectsLostValues(t *testing.T) {
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Content: "How many dollars do my euros make?"},
		llmtest.Reply{Content: `"Paraphrase: How many US dollars would my 100 euros be?"`},
		llmtest.Reply{Content: "What do I get for Frank Herbert?"},
	))
	defer srv.Close()
	client := llm.New(srv.URL(), llm.Options{MaxRetries: -1})
	out, rep, err := Perturb(context.Background(), queries[:2], Options{Mode: Paraphrase, Seed: 1, Model: client, ModelName: "m", Attempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Query != "How many US dollars would my 100 euros be?" || out[0].Meta[MetaVariant] != "attempt:2" {
		t.Errorf("task 1: %q %v", out[0].Query, out[0].Meta)
	}
	// Task 2's answers both lose "Dune": it keeps its query, marked.
	if out[1].Query != queries[1].Query || out[1].Meta[MetaFailed] != true {
		t.Errorf("task 2: %q %v", out[1].Query, out[1].Meta)
	}
	if rep.Attempts != 4 || rep.Rejected != 3 || rep.Failed != 1 {
		t.Errorf("report %+v", rep)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[0].Messages[1].Content != queries[0].Query || *reqs[1].Temperature <= *reqs[0].Temperature {
		t.Errorf("requests: %d; a retry must be warmer", len(reqs))
	}
}

func TestPerturbErrors(t *testing.T) {
	if _, _, err := Perturb(context.Background(), queries, Options{Mode: "shout"}); err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := Perturb(context.Background(), queries, Options{Mode: Paraphrase}); err == nil || !strings.Contains(err.Error(), "needs an LLM") {
		t.Errorf("err = %v", err)
	}
}

// FuzzNoise checks that punctuation noise and distractors never lose a
// value of any query, and that extraction never panics.
func FuzzNoise(f *testing.F) {
	for _, q := range queries {
		f.Add(q.Query, uint64(1))
	}
	f.Add(`a "b c" 1.5 'x y' “z” 3/4`, uint64(9))
	f.Fuzz(func(t *testing.T, q string, seed uint64) {
		vals := Extract(q)
		rng := taskRand(seed, Punctuation, "t")
		p, _ := punctuate(q, rng)
		if strings.Count(q, `"`)%2 == 0 {
			if m := Missing(vals, p); len(m) > 0 && !strings.ContainsAny(q, "'`“”\n\t") {
				t.Fatalf("punctuation lost %v: %q → %q", m, q, p)
			}
		}
		d, _ := distract(q, rng)
		_ = Missing(vals, d)
	})
}

// TestConfigHelpListsModes keeps the help of --mode (Config's tag) true:
// it names every mode.
func TestConfigHelpListsModes(t *testing.T) {
	f, _ := reflect.TypeFor[Config]().FieldByName("Mode")
	for _, m := range Modes {
		if !strings.Contains(f.Tag.Get("help"), m) {
			t.Errorf("the help of --mode lacks %s: %q", m, f.Tag.Get("help"))
		}
	}
}
