package fidelity

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/virtual"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/store"
)

// fixture is the demo collection in a registry and a real SQLite store
// holding recorded answers of several origins.
type fixture struct {
	coll *toolenv.Collection
	reg  *invoke.Registry
	st   store.Store
}

const duneBody = `{"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "year": 1965}`

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "store.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(tool string, args map[string]any, body, errMsg string, status toolenv.Status, origin string) {
		canon, _ := toolenv.Canonical(args)
		e := &store.Entry{Tool: tool, Args: string(canon), Body: json.RawMessage(body), Error: errMsg, Status: status, Origin: origin}
		if _, err := st.Put(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	put("demo/get_book", map[string]any{"isbn": "9780441172719"}, duneBody, "", toolenv.StatusOK, OriginUpstream)
	put("demo/get_book", map[string]any{"isbn": "9780553293357"}, `{"isbn": "9780553293357", "title": "Foundation"}`, "", toolenv.StatusOK, OriginImport)
	put("demo/current_weather", map[string]any{"city": "Lyon"}, `{"city": "Lyon", "temperature": 17.5, "units": "metric"}`, "", toolenv.StatusOK, OriginUpstream)
	put("demo/current_weather", map[string]any{"city": "Nice"}, `{"city": "Nice", "temperature": 1}`, "", toolenv.StatusOK, "simulator")
	put("demo/current_weather", map[string]any{"city": "Metz"}, `{"city": "Metz", "temperature": 2}`, "", toolenv.StatusOK, "synthesizer")
	reg := invoke.NewRegistry()
	return &fixture{coll: c, reg: reg, st: st}
}

// backend builds the virtual backend serve builds, over a held-out view
// of the store.
func (f *fixture) backend(t testing.TB, model llm.Options, url string) toolenv.Handler {
	t.Helper()
	opts := virtual.Options{Examples: HoldOut(f.st), Tools: f.coll.Tools, Model: "mirror", Prompt: "sft"}
	if url != "" {
		opts.LLM = llm.New(url, model)
	}
	b, err := virtual.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Add(f.coll, b); err != nil {
		t.Fatal(err)
	}
	return f.reg
}

func TestStorePairsKeepOnlyRealAnswers(t *testing.T) {
	f := newFixture(t)
	pairs, err := StorePairs(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pairs {
		got = append(got, p.Tool+" "+p.Origin)
	}
	want := "demo/current_weather upstream|demo/get_book upstream|demo/get_book import"
	if strings.Join(got, "|") != want {
		t.Errorf("pairs %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestRunScoresAgainstRealAnswers drives the whole measurement: the
// store's real answers, the MirrorAPI simulator on an OpenAI-compatible
// test server, embeddings and both judges on another.
func TestRunScoresAgainstRealAnswers(t *testing.T) {
	f := newFixture(t)
	sim := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(last, "9780441172719"):
			return llmtest.Reply{Content: `{"error": "", "response": ` + duneBody + `}`}
		case strings.Contains(last, "Lyon"):
			return llmtest.Reply{Content: "```json\n{\"error\": \"\", \"response\": {\"city\": \"Lyon\", \"temperature\": 9.0, \"units\": \"metric\"}}\n```"}
		}
		return llmtest.Reply{Content: `{"error": "Book not in catalogue", "response": ""}`}
	})
	defer sim.Close()
	var mu sync.Mutex
	judged := map[string]int{}
	judge := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if len(req.Messages) == 0 {
			return llmtest.Reply{} // an embeddings request: a vector from each text's length
		}
		sys, user := req.Messages[0].Content, req.Messages[1].Content
		mu.Lock()
		defer mu.Unlock()
		switch {
		case sys == promptRateSystem.Text && strings.Contains(user, "Foundation"):
			judged["rate"]++
			return llmtest.Reply{Content: "The simulator refuses a book the API knows. I cannot give a number."}
		case sys == promptRateSystem.Text:
			judged["rate"]++
			return llmtest.Reply{Content: "Faithful to the documentation.\n\nRating: [[8]]"}
		case sys == promptDocSystem.Text && strings.Contains(user, "Lyon"):
			judged["doc"]++
			return llmtest.Reply{Content: "```json\n{‘‘overall_eval’’: 1, ‘‘reason’’: ‘‘matches the documented fields’’}\n```"}
		case sys == promptDocSystem.Text:
			judged["doc"]++
			return llmtest.Reply{Content: `{"overall_eval": 0, "reason": "missing fields"}`}
		}
		t.Errorf("unexpected judge request: %.80q", sys)
		return llmtest.Reply{Status: 400}
	})
	defer judge.Close()

	backend := f.backend(t, llm.Options{MaxRetries: -1}, sim.URL())
	pairs, err := StorePairs(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	scored, err := Run(context.Background(), Config{
		Simulator:   backend,
		Tools:       f.reg,
		Embedder:    embed.Remote{Client: llm.New(judge.URL(), llm.Options{MaxRetries: -1}), Model: "emb"},
		Judge:       &Judge{Model: llm.New(judge.URL(), llm.Options{MaxRetries: -1}), ModelName: "judge", Seed: 3},
		Concurrency: 2,
		Progress:    func(done, total int, _ *Scored) { progress = done },
	}, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if len(scored) != 3 || progress != 3 {
		t.Fatalf("%d scored, progress %d", len(scored), progress)
	}
	by := map[string]*Scored{}
	for _, s := range scored {
		by[string(s.Args)] = s
	}
	dune, lyon, found := by[`{"isbn":"9780441172719"}`], by[`{"city":"Lyon"}`], by[`{"isbn":"9780553293357"}`]
	if dune == nil || lyon == nil || found == nil {
		t.Fatalf("scored %v", by)
	}
	if dune.BLEU != 1 || dune.Source != toolenv.SourceSimulator || dune.Cosine == nil || math.Abs(*dune.Cosine-1) > 1e-9 {
		t.Errorf("identical answer: BLEU %v, source %s, cosine %v", dune.BLEU, dune.Source, dune.Cosine)
	}
	if lyon.BLEU <= 0.3 || lyon.BLEU >= 1 {
		t.Errorf("close answer: BLEU %v", lyon.BLEU)
	}
	if found.SimStatus == toolenv.StatusOK || found.Simulated != "Book not in catalogue" || found.BLEU > 0.2 {
		t.Errorf("refusal: status %s, text %q, BLEU %v", found.SimStatus, found.Simulated, found.BLEU)
	}
	if r := dune.Rating; r == nil || !r.Parsed || r.Score != 8 {
		t.Errorf("rating %+v", r)
	}
	if r := found.Rating; r == nil || r.Parsed || !strings.Contains(r.Raw, "cannot give") {
		t.Errorf("an unparseable verdict must be kept as such: %+v", r)
	}
	if d := lyon.Doc; d == nil || !d.Parsed || !d.Follows || d.Reason != "matches the documented fields" {
		t.Errorf("doc verdict with the prompt's own quotes: %+v", d)
	}
	if judged["rate"] != 3 || judged["doc"] != 3 {
		t.Errorf("judge asked %v", judged)
	}

	// The pair being measured never appears among the few-shot examples:
	// the documented example and the recorded answer of the same call are
	// held out, so the request shows only in the final user turn.
	for _, req := range sim.Requests() {
		last := req.Messages[len(req.Messages)-1].Content
		for _, m := range req.Messages[:len(req.Messages)-1] {
			for _, key := range []string{`\"isbn\":\"9780441172719\"`, `\"city\":\"Lyon\"`} {
				if strings.Contains(last, key) && strings.Contains(m.Content, key) {
					t.Errorf("the measured call %s is a few-shot example: %.200q", key, m.Content)
				}
			}
		}
	}

	s := Summarize(Settings{Simulator: "mirror", BLEUTokens: "chars", BLEUSmoothing: "method3", Judge: "judge"}, scored, nil)
	o := s.Overall
	if o.Pairs != 3 || o.Rating.N != 2 || o.Rating.Mean != 8 || o.RatingUnparseable != 1 || o.DocFollowing.N != 3 || math.Abs(o.DocFollowing.Mean-100.0/3) > 1e-9 {
		t.Errorf("overall %+v", o)
	}
	if o.StatusAgreement.Mean > 67 || o.Sources["simulator"] != 3 || len(s.Tools) != 2 || s.Tools[0].Tool != "demo/current_weather" || s.Tools[1].Pairs != 2 {
		t.Errorf("summary %+v", s)
	}
	if want := 100 * (1 + lyon.BLEU + found.BLEU) / 3; math.Abs(o.BLEU.Mean-want) > 1e-9 {
		t.Errorf("mean BLEU %v, want %v", o.BLEU.Mean, want)
	}

	ov := Overview(s)
	if !strings.HasPrefix(ov, "## Overall") || strings.Contains(ov, "## Per tool") || strings.Contains(ov, "demo/current_weather") || !strings.Contains(Markdown(s), ov) {
		t.Errorf("overview is not the Overall section alone:\n%s", ov)
	}

	dir := t.TempDir()
	if err := Write(dir, s, scored); err != nil {
		t.Fatal(err)
	}
	for _, name := range Files {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if strings.Contains(string(page), "<script") || strings.Contains(string(page), `src="http`) || !strings.Contains(string(page), "<svg") {
		t.Error("the page must be self-contained, with its chart")
	}
	lines := strings.Split(strings.TrimSpace(mustRead(t, filepath.Join(dir, "pairs.jsonl"))), "\n")
	if len(lines) != 3 {
		t.Errorf("pairs.jsonl has %d lines", len(lines))
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHoldOutKeepsTheSynthesizerFromCopying scores the demo's documented
// examples with the offline synthesizer: held out, none is answered
// verbatim, though the synthesizer would copy each one if it could see it.
func TestHoldOutKeepsTheSynthesizerFromCopying(t *testing.T) {
	f := newFixture(t)
	backend := f.backend(t, llm.Options{}, "")
	pairs := DocPairs(f.coll.Tools)
	documented := 0
	for _, tool := range f.coll.Tools {
		documented += len(tool.Examples)
	}
	if len(pairs) != documented || documented < 15 {
		t.Fatalf("%d pairs of %d documented examples", len(pairs), documented)
	}
	scored, err := Run(context.Background(), Config{Simulator: backend, Tools: f.reg, Embedder: embed.Hash{}}, pairs)
	if err != nil {
		t.Fatal(err)
	}
	// An answer another documented example of the tool also gives (the
	// default's, {} for {"base": "USD"}) may be given: it is not copied
	// from the held-out example.
	answers := map[string]int{}
	for _, s := range scored {
		answers[s.Tool+"\x00"+s.Real]++
	}
	for i, s := range scored {
		if s.Source != toolenv.SourceSynthesizer {
			t.Errorf("%s: answered by %s", s.Tool, s.Source)
		}
		if s.Simulated == s.Real && answers[s.Tool+"\x00"+s.Real] == 1 {
			t.Errorf("%s %s: the held-out example was returned verbatim", s.Tool, s.Args)
		}
		// Without holding out, the synthesizer returns the example.
		p := pairs[i]
		if p.Error != "" {
			continue // it keeps the documented payload, not the error
		}
		res := backend.Invoke(context.Background(), &toolenv.Call{Tool: f.reg.Tool(p.Tool), Args: p.Args})
		if Text(res.Body, res.Error) != s.Real {
			t.Errorf("%s %s: the synthesizer does not copy a visible example (%q)", s.Tool, s.Args, Text(res.Body, res.Error))
		}
		if s.Cosine == nil || *s.Cosine <= 0 || *s.Cosine > 1+1e-6 {
			t.Errorf("%s: cosine %v", s.Tool, s.Cosine)
		}
	}
	found := false
	for _, p := range pairs {
		if p.Tool == "demo/get_book" && p.Error != "" {
			found = true
			if p.Status != toolenv.StatusUpstreamError || p.Error != "book not found" {
				t.Errorf("documented error example: %+v", p)
			}
		}
	}
	if !found {
		t.Error("the documented error example is not among the pairs")
	}
}
