package mirror_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/mirror"
)

func TestLeak(t *testing.T) {
	resp := `{"error": "", "response": {"city": "Paris", "days": [{"day": 1, "min": 10, "max": 20, "summary": "partly cloudy"}]}}`
	doc := `{"api_name": "Forecast", "api_description": "Returns the forecast of a city"}`
	req := `{"category": "Weather", "tool_input": "{\"city\": \"Paris\", \"days\": 1}"}`
	tests := []struct {
		name, rationale string
		leak            bool
	}{
		{"verbatim", "The API returns exactly this: " + resp, true},
		{"a long run", `It answers with "days": [{"day": 1, "min": 10, "max": 20, "summary": "partly cloudy"}] for one day.`, true},
		{"white space differs", "It answers {\"city\":   \"Paris\",\n \"days\": [{\"day\": 1, \"min\": 10, \"max\": 20, \"summary\": \"partly cloudy\"}]}", true},
		{"a paraphrase", "The API looks the city up and returns one entry per day with the lowest and highest temperature and a summary.", false},
		{"quotes the request", `The request {"category": "Weather", "tool_input": "{\"city\": \"Paris\", \"days\": 1}"} asks for Paris.`, false},
		{"short values", `It returns the city "Paris" with min 10 and max 20.`, false},
	}
	for _, tc := range tests {
		run, leak := mirror.Leak(tc.rationale, resp, req+"\n"+doc, 40)
		if leak != tc.leak {
			t.Errorf("%s: leak %v (%q), want %v", tc.name, leak, run, tc.leak)
		}
	}
	if _, leak := mirror.Leak("It says ok.", `"ok"`, "", 40); leak {
		t.Error("a response of 4 characters leaked")
	}
	if _, leak := mirror.Leak(strings.Repeat("a", 100), "", "", 40); leak {
		t.Error("an empty response leaked")
	}
}

// TestApproxTokensAgainstTokenizers compares the approximation with the
// counts of OpenAI's cl100k_base and o200k_base tokenizers on texts of
// toolenv's data (testdata/tokens.json, made by testdata/tokens_gen.mjs
// with the npm package gpt-tokenizer): within a factor on each text, and
// more than the exact count over all of them.
func TestApproxTokensAgainstTokenizers(t *testing.T) {
	raw, err := os.ReadFile("testdata/tokens.json")
	if err != nil {
		t.Fatal(err)
	}
	var items []struct {
		Kind, Text string
		CL100K     int `json:"cl100k_base"`
		O200K      int `json:"o200k_base"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatal(err)
	}
	approx, exact := 0, 0
	for _, it := range items {
		n := mirror.ApproxTokens(it.Text)
		approx += n
		exact += it.CL100K
		if r := float64(n) / float64(it.CL100K); r < 0.8 || r > 1.8 {
			t.Errorf("%s: %d tokens, cl100k_base %d (ratio %.2f): %q", it.Kind, n, it.CL100K, r, it.Text[:min(len(it.Text), 80)])
		}
	}
	if approx < exact {
		t.Errorf("%d tokens in all, fewer than cl100k_base's %d: the filter must err on the long side", approx, exact)
	}
}

func TestApproxTokens(t *testing.T) {
	tests := []struct {
		s        string
		min, max int
	}{
		{"", 0, 0},
		{"hello", 1, 1},
		{"The quick brown fox jumps over the lazy dog.", 9, 12},
		{`{"city": "Paris", "days": [1, 2, 3]}`, 12, 22},
		{"12345678901", 4, 4},
		{"Größenverhältnisse", 3, 10},
		{"東京都の天気予報", 6, 10},
		{"\n\n\n", 1, 1},
	}
	for _, tc := range tests {
		if n := mirror.ApproxTokens(tc.s); n < tc.min || n > tc.max {
			t.Errorf("ApproxTokens(%q) = %d, want %d..%d", tc.s, n, tc.min, tc.max)
		}
	}
	// Longer text costs more tokens, never fewer.
	short, long := mirror.ApproxTokens("The API returns a list."), mirror.ApproxTokens("The API returns a list. It is sorted by name.")
	if long <= short {
		t.Errorf("%d tokens for the longer text, %d for its prefix", long, short)
	}
}
