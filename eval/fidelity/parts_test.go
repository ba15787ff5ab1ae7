package fidelity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/invoke"
)

func TestParseRating(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  float64
		ok    bool
	}{
		{"Good.\n\nRating: [[8]]", 8, true},
		{"Rating: [[7.5]]", 7.5, true},
		{"[[10]] then [[3]]", 10, true},
		{"Rating: [6]", 6, true},        // FastChat's fallback pattern
		{"[[9]] after [2]", 9, true},    // the double brackets win
		{"Rating: [[0]]", 0, false},     // outside 1–10
		{"Rating: [[11]]", 0, false},    // outside 1–10
		{"Rating: 8/10", 0, false},      // not the format asked for
		{"Rating: [[eight]]", 0, false}, // not a number
		{"", 0, false},
	} {
		got, ok := ParseRating(tc.reply)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRating(%q) = %v, %v; want %v, %v", tc.reply, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseDocVerdict(t *testing.T) {
	for _, tc := range []struct {
		reply   string
		follows bool
		reason  string
		ok      bool
	}{
		{`{"overall_eval": 1, "reason": "fine"}`, true, "fine", true},
		{`{"overall_eval": 0, "reason": "missing x"}`, false, "missing x", true},
		{"Here is my evaluation:\n```json\n{\"overall_eval\": \"1\", \"reason\": \"ok\"}\n```", true, "ok", true},
		{`{‘‘overall_eval’’:1, ‘‘reason’’:‘‘as documented’’}`, true, "as documented", true},
		{`{'overall_eval': 0, 'reason': 'Python dict'}`, false, "Python dict", true},
		{`{"overall_eval": true, "reason": "bool",}`, true, "bool", true},
		{`{"overall_eval": 2, "reason": "?"}`, false, "", false},
		{`{"reason": "no verdict"}`, false, "", false},
		{`The response follows the documentation.`, false, "", false},
	} {
		got, ok := ParseDocVerdict(tc.reply)
		if ok != tc.ok || ok && (got.Follows != tc.follows || got.Reason != tc.reason) {
			t.Errorf("ParseDocVerdict(%q) = %+v, %v", tc.reply, got, ok)
		}
	}
}

func TestTextAndEnvelope(t *testing.T) {
	for _, tc := range []struct {
		body, err, want string
	}{
		{`{"b": 1,  "a": [1,2]}`, "", `{"b": 1, "a": [1, 2]}`},
		{"{\n  \"s\": \"a,b:\\\"c\\\\\",\n  \"t\":null\n}", "", `{"s": "a,b:\"c\\", "t": null}`},
		{`"plain text"`, "", "plain text"},
		{`"{\"city\":\"Paris\"}"`, "", `{"city": "Paris"}`},
		{`"{\"cut at 1000 chars"`, "", `{"cut at 1000 chars`},
		{`""`, "not found", "not found"},
		{``, "timeout", "timeout"},
		{`null`, "", ""},
		{`{"name":"Zoë"}`, "", `{"name": "Zoë"}`},
	} {
		if got := Text(json.RawMessage(tc.body), tc.err); got != tc.want {
			t.Errorf("Text(%s, %q) = %q, want %q", tc.body, tc.err, got, tc.want)
		}
	}
	if got := Envelope(json.RawMessage(`{"name": "Zoë", "n": 1.0}`), ""); got != `{"error": "", "response": {"name": "Zo\u00eb", "n": 1.0}}` {
		t.Errorf("Envelope = %s", got)
	}
	if got := Envelope(nil, "Invalid id"); got != `{"error": "Invalid id", "response": ""}` {
		t.Errorf("Envelope = %s", got)
	}
}

func TestReadPairs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pairs.jsonl")
	data := strings.Join([]string{
		`{"tool": "demo/get_book", "args": {"isbn": "1"}, "response": {"title": "A"}}`,
		`{"tool": "get_book", "args": "{\"isbn\": \"2\"}", "response": "B"}`,
		`{"tool": "demo/get_book", "args": {}, "error": "book not found", "status": "not_found"}`,
		`not json`,
		`{"args": {}, "response": 1}`,
		`{"tool": "demo/get_book", "args": {"isbn": "3"}}`,
		`{"tool": "demo/get_book", "args": "[1]", "response": 1}`,
		`{"tool": "nosuch", "args": {}, "response": 1}`,
		`{"tool": "demo/nosuch", "args": {}, "response": 1}`,
	}, "\n")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	pairs, problems, err := ReadPairs(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 5 || len(problems) != 4 {
		t.Fatalf("%d pairs, problems %v", len(pairs), problems)
	}
	for i, want := range []string{":4: skipped, not a", `:5: skipped, no "tool"`, `:6: skipped, no "response"`, "args is not a JSON object"} {
		if !strings.Contains(problems[i].Error(), want) {
			t.Errorf("problem %d = %v, want %q", i, problems[i], want)
		}
	}
	if pairs[1].Args["isbn"] != "2" || pairs[2].Status != toolenv.StatusNotFound || pairs[0].Origin != OriginPairs {
		t.Errorf("pairs %+v %+v %+v", pairs[0], pairs[1], pairs[2])
	}
	c, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, toolenv.HandlerFunc(func(context.Context, *toolenv.Call) *toolenv.Result { return nil })); err != nil {
		t.Fatal(err)
	}
	kept, unknown := Resolve(pairs, reg, []*toolenv.Collection{c}, nil)
	if len(kept) != 3 || kept[1].Tool != "demo/get_book" || unknown["nosuch"] != 1 || unknown["demo/nosuch"] != 1 {
		t.Errorf("kept %d, unknown %v", len(kept), unknown)
	}
	if only, _ := Resolve(pairs, reg, []*toolenv.Collection{c}, []string{"current_weather"}); len(only) != 0 {
		t.Errorf("--tool current_weather kept %d get_book pairs", len(only))
	}
	if _, _, err := ReadPairs(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Error("a missing file was read")
	}
}

func TestSampleIsDeterministicPerTool(t *testing.T) {
	var pairs []*Pair
	for i := range 50 {
		pairs = append(pairs, &Pair{Tool: "c/a", Args: map[string]any{"i": i}})
		if i < 3 {
			pairs = append(pairs, &Pair{Tool: "c/b", Args: map[string]any{"i": i}})
		}
	}
	a := Sample(pairs, 5, 7)
	if len(a) != 8 {
		t.Fatalf("%d pairs sampled", len(a))
	}
	// Reversing the input changes neither the choice nor, per tool, the
	// pairs chosen; another seed chooses others.
	rev := make([]*Pair, len(pairs))
	for i, p := range pairs {
		rev[len(pairs)-1-i] = p
	}
	key := func(ps []*Pair) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[p.Tool+p.canon()] = true
		}
		return m
	}
	ka, kr, kb := key(a), key(Sample(rev, 5, 7)), key(Sample(pairs, 5, 8))
	same := func(x, y map[string]bool) bool {
		for k := range x {
			if !y[k] {
				return false
			}
		}
		return len(x) == len(y)
	}
	if !same(ka, kr) || same(ka, kb) {
		t.Errorf("sample depends on input order or not on the seed: %v %v %v", ka, kr, kb)
	}
	for i := 1; i < len(a); i++ {
		if indexOf(pairs, a[i]) < indexOf(pairs, a[i-1]) {
			t.Error("the sample is not in input order")
		}
	}
	if got := Sample(pairs, 0, 1); len(got) != len(pairs) {
		t.Error("n = 0 must keep every pair")
	}
}

func indexOf(ps []*Pair, p *Pair) int {
	for i, q := range ps {
		if q == p {
			return i
		}
	}
	return -1
}

// TestPromptsAreAsPrinted compares each prompt with its table cell in the
// paper copy: equal, except the two numbers the copy lost, which the
// prompt file restores (its header says so). The hashes pin the texts.
func TestPromptsAreAsPrinted(t *testing.T) {
	want := map[string]string{
		"simulation_judge_system": "You are a helpful assistant.",
	}
	for _, p := range Prompts() {
		if p.Version != "1" || !strings.Contains(p.Source, "MirrorAPI paper") || !strings.Contains(p.Source, "Appendix C") {
			t.Errorf("%s: header %+v", p.Name, p)
		}
		if w, ok := want[p.Name]; ok && p.Text != w {
			t.Errorf("%s = %q", p.Name, p.Text)
		}
	}
	data, ok := shareddata.Dir()
	if !ok {
		t.Skip("skipped: ../shared is not beside the repository (the paper copy is in ../shared/papers)")
	}
	paper, err := os.ReadFile(filepath.Join(data, "..", "papers", "mirrorapi-stabletoolbench.txt"))
	if err != nil {
		t.Skipf("skipped: the paper copy is not in ../shared/papers: %v", err)
	}
	cells := map[string]bool{}
	for _, line := range strings.Split(string(paper), "\n") {
		for _, role := range []string{"| System | ", "| User | "} {
			if rest, ok := strings.CutPrefix(line, role); ok {
				cells[strings.TrimSuffix(rest, " |")] = true
			}
		}
	}
	restored := strings.NewReplacer("scale of 1 to 10 by", "scale of to by", "Rating: [[5]]", "Rating: [[]]")
	for _, p := range Prompts() {
		if !cells[restored.Replace(p.Text)] {
			t.Errorf("%s is not a table cell of the paper copy", p.Name)
		}
	}
}

// TestPromptHashes pins the prompt texts: a change needs a new version.
func TestPromptHashes(t *testing.T) {
	want := map[string]string{
		"simulation_judge_system": "75357d685f238b6a",
		"simulation_judge_user":   "1ef349d7d4a3d546",
		"doc_following_system":    "245d628b6603e165",
		"doc_following_user":      "bf30822905932a69",
	}
	for _, p := range Prompts() {
		sum := sha256.Sum256([]byte(p.Text))
		if got := hex.EncodeToString(sum[:8]); got != want[p.Name] || p.SHA256 != got {
			t.Errorf("%s version %s: sha256 %s, pinned %s (a changed prompt needs a new version)", p.Name, p.Version, got, want[p.Name])
		}
	}
}
