package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/mirror"
)

// TestFilterBoundsFailures checks that the kept parameter-related
// failures are spread over the APIs: an API with few keeps them all, the
// others share the rest equally.
func TestFilterBoundsFailures(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	counts := map[string]int{"c/a": 100, "c/b": 5, "c/c": 50, "c/d": 1}
	var pairs []*mirror.Pair
	for tool, n := range counts {
		for i := range n {
			pairs = append(pairs, &mirror.Pair{Tool: tool, Args: fmt.Sprintf(`{"i":%d}`, i), Origin: mirror.OriginReal, Status: toolenv.StatusInvalidArguments,
				Error: "bad parameter", Source: "upstream", Class: "parameter_change", Rule: "text_parameter"})
		}
		pairs = append(pairs, &mirror.Pair{Tool: tool, Args: `{"ok":1}`, Origin: mirror.OriginReal, Status: toolenv.StatusOK, Body: json.RawMessage(`"fine"`), Source: "upstream", Class: "success"})
	}
	if err := st.PutPairs(ctx, "test", pairs); err != nil {
		t.Fatal(err)
	}
	e := &mirror.Engine{Store: st, Dataset: "test"}
	kept := func(seed int64) map[string][]string {
		fs, err := e.Filter(ctx, mirror.FilterOptions{KeepFailures: 40, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if fs.KeptFailures != 40 || fs.Kept != 44 || fs.Dropped[mirror.FilterOverBound] != 116 {
			t.Fatalf("filter: %+v", fs)
		}
		out := map[string][]string{}
		e.Store.EachPair(ctx, "test", mirror.PairQuery{OK: mirror.Ptr(false), Filters: []string{mirror.FilterKept}}, func(p *mirror.Pair) error {
			out[p.Tool] = append(out[p.Tool], p.Args)
			return nil
		})
		return out
	}
	a := kept(1)
	for tool, want := range map[string]int{"c/a": 17, "c/b": 5, "c/c": 17, "c/d": 1} {
		if len(a[tool]) != want {
			t.Errorf("%s keeps %d failures, want %d", tool, len(a[tool]), want)
		}
	}
	if b := kept(1); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed kept other failures")
	}
	if c := kept(2); fmt.Sprint(a["c/a"]) == fmt.Sprint(c["c/a"]) {
		t.Error("another seed kept the same failures")
	}
}

// TestModelDown checks that a model that stops answering stops the stage
// with an error saying what to do, loses no verdict it gave, and that the
// next run asks exactly what is left.
//
// The model answers its first checks and then fails every request with
// HTTP 503. Nothing depends on timing: requests the first run cut short
// may still reach that server after the run returned, so the second run
// talks to a new server (the endpoint back up) and only its requests are
// counted.
func TestModelDown(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	st := newStore(t)
	e := engine(t, st, weatherTools(srv.URL, "forecast", "cities"), 1<<20)
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 30, Sampler: true, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Collect(ctx, mirror.CollectOptions{}); err != nil {
		t.Fatal(err)
	}
	const answered = 5
	m1 := newModel(t)
	failing := llmtest.New(func(n int, req *llm.Request) llmtest.Reply {
		if n < answered {
			return m1.answer(n, req)
		}
		return llmtest.Reply{Status: 503}
	})
	t.Cleanup(failing.Close)
	e.Model = llm.New(failing.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1})
	e.ModelName = "test-model"
	_, err := e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "run the command again") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("filter with the model down: %v", err)
	}
	verdicts := func() (n int) {
		for _, tool := range []string{"weather/forecast", "weather/cities"} {
			for _, p := range pairsOf(t, e, tool) {
				if p.Doc != nil {
					n++
				}
			}
		}
		return n
	}
	kept := verdicts()
	if kept > answered {
		t.Fatalf("%d verdicts stored from %d answers", kept, answered)
	}

	m2 := newModel(t)
	e.Model = llm.New(m2.srv.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1})
	fs, err := e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// An answer of the first run recorded (Reuse) before its verdict was
	// stored is served from the records: at most answered-kept of them.
	checked := fs.DocFollows + fs.DocNot + fs.DocUnparsed
	asked2 := m2.count("doc")
	reused := fs.DocAsked - asked2
	if checked != fs.Real || verdicts() != fs.Real || fs.DocAsked != fs.Real-kept || reused < 0 || reused > answered-kept {
		t.Fatalf("second run: %+v; %d verdicts kept from the first run, %d requests to the model", fs, kept, m2.count("doc"))
	}
	// No pair was asked about twice.
	seen := map[string]bool{}
	for _, r := range m2.srv.Requests() {
		u := r.Messages[len(r.Messages)-1].Content
		if seen[u] {
			t.Fatalf("the second run asked twice about %.200s", u)
		}
		seen[u] = true
	}
	// A third run asks nothing: every verdict is stored, so the model
	// gets no request (answers reused from the records in the second run
	// were never requested, so the count is compared with the second
	// run's, not with checked-kept).
	fs, err = e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err != nil || fs.DocAsked != 0 || m2.count("doc") != asked2 {
		t.Fatalf("third run asked %d (%v); the model got %d requests, %d after the second run", fs.DocAsked, err, m2.count("doc"), asked2)
	}
}

// TestModelHangs checks that a model that never answers does not hang
// the stage: each request ends at the client's timeout and the stage
// stops with an error saying to run again, having stored nothing wrong.
func TestModelHangs(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	st := newStore(t)
	e := engine(t, st, weatherTools(srv.URL, "forecast"), 1<<20)
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 4, Invalid: -1, Sampler: true, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Collect(ctx, mirror.CollectOptions{}); err != nil {
		t.Fatal(err)
	}
	hung := llmtest.New(func(int, *llm.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	t.Cleanup(hung.Close)
	e.Model = llm.New(hung.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1, Timeout: 100 * time.Millisecond})
	e.ModelName = "test-model"
	_, err := e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "run the command again") {
		t.Fatalf("filter with a model that never answers: %v", err)
	}
	for _, p := range pairsOf(t, e, "weather/forecast") {
		if p.Doc != nil {
			t.Fatalf("pair %s has a verdict from a model that never answered: %+v", p.Args, p.Doc)
		}
	}
}
