package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
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
// with an error saying what to do, loses nothing, and that the next run
// asks only what is left.
func TestModelDown(t *testing.T) {
	ctx := context.Background()
	srv := newAPIServer(t)
	m := newModel(t)
	st := newStore(t)
	e := engine(t, st, weatherTools(srv.URL, "forecast", "cities"), 1<<20)
	e.Model = llm.New(m.srv.URL(), llm.Options{Recorder: st, Reuse: true, MaxRetries: -1})
	e.ModelName = "test-model"
	if _, err := e.Generate(ctx, mirror.GenerateOptions{PerAPI: 30, Sampler: true, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Collect(ctx, mirror.CollectOptions{}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.down = true
	m.mu.Unlock()
	_, err := e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "run the command again") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("filter with the model down: %v", err)
	}
	asked := m.count("doc")
	m.mu.Lock()
	m.down = false
	m.mu.Unlock()
	fs, err := e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	checked := fs.DocFollows + fs.DocNot + fs.DocUnparsed
	if checked != fs.Real || fs.DocAsked != checked || m.count("doc") != asked+fs.DocAsked {
		t.Fatalf("second run: %+v; %d model requests in all", fs, m.count("doc"))
	}
	// A third run asks nothing: every verdict is stored.
	fs, err = e.Filter(ctx, mirror.FilterOptions{Workers: 2})
	if err != nil || fs.DocAsked != 0 {
		t.Fatalf("third run asked %d (%v)", fs.DocAsked, err)
	}
}
