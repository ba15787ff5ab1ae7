package simulate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

func TestParseOutput(t *testing.T) {
	cases := []struct {
		name      string
		text      string
		wantErr   string // the envelope's error
		wantResp  string // the response as compact JSON
		mechanism string
		repairs   []string
		truncated bool
	}{
		{name: "clean", text: `{"error": "", "response": "{\"status\": 0, \"msg\": \"ok\"}"}`,
			wantResp: `"{\"status\": 0, \"msg\": \"ok\"}"`},
		{name: "object response", text: `{"error": "", "response": {"city": "Paris", "temp": 21.5, "ok": true}}`,
			wantResp: `{"city":"Paris","temp":21.5,"ok":true}`},
		{name: "fenced", text: "```json\n{\"error\": \"\", \"response\": [1, 2]}\n```",
			wantResp: `[1,2]`, repairs: []string{repairFence}},
		{name: "prose around", text: "Sure! Here is the simulated response:\n{\"error\": \"\", \"response\": \"done\"}\nLet me know if you need more.",
			wantResp: `"done"`, repairs: []string{repairLeading, repairTrailing}},
		{name: "python literals", text: `{'error': '', 'response': {'a': True, 'b': None, 'c': 'it\'s', 'd': (1, 2)}}`,
			wantResp: `{"a":true,"b":null,"c":"it's","d":[1,2]}`, repairs: []string{repairLoose}},
		{name: "mirrorapi unescaped quotes", text: "{\n        \"error\": \"\",\n        \"response\": \"{\"status\":0,\"msg\":\"Success\",\"languages\":[\"en\",\"fr-fr\",\"pt-br\"]}\"\n    }",
			wantResp: `"{\"status\":0,\"msg\":\"Success\",\"languages\":[\"en\",\"fr-fr\",\"pt-br\"]}"`, repairs: []string{repairEnvelope}},
		{name: "cot", text: "{\n\"mechanism_of_the_api\": \"The \"List Languages\" API queries a database.\",\n\"error\": \"\",\n\"response\": \"{\"languages\":[\"en\"]}\"\n}",
			wantResp: `"{\"languages\":[\"en\"]}"`, mechanism: `The "List Languages" API queries a database.`, repairs: []string{repairEnvelope}},
		{name: "cot clean", text: `{"mechanism_of_the_api": "Looks up a city.", "error": "", "response": {"id": 7}}`,
			wantResp: `{"id":7}`, mechanism: "Looks up a city."},
		{name: "truncated object", text: `{"error": "", "response": {"items": [{"id": 1, "name": "a"}, {"id": 2, "na`,
			wantResp: `{"items":[{"id":1,"name":"a"},{"id":2}]}`, repairs: []string{repairLoose, repairTruncated}, truncated: true},
		{name: "truncated string", text: `{"error": "", "response": "The weather in Paris is sun`,
			wantResp: `"The weather in Paris is sun"`, repairs: []string{repairLoose, repairTruncated}, truncated: true},
		{name: "trailing commas", text: `{"error": "", "response": [1, 2, 3,],}`,
			wantResp: `[1,2,3]`, repairs: []string{repairLoose}},
		{name: "raw newline in string", text: "{\"error\": \"\", \"response\": \"line one\nline two\"}",
			wantResp: `"line one\nline two"`, repairs: []string{repairLoose}},
		{name: "bare response", text: `{"status": "ok", "data": [1]}`,
			wantResp: `{"status":"ok","data":[1]}`, repairs: []string{repairBare}},
		{name: "think block", text: "<think>The user wants {a list}.</think>\n{\"error\": \"\", \"response\": \"x\"}",
			wantResp: `"x"`, repairs: []string{repairThink}},
		{name: "null error", text: `{"error": null, "response": "x"}`, wantResp: `"x"`},
		{name: "object error", text: `{"error": {"code": 400, "message": "bad id"}, "response": ""}`,
			wantErr: `{"code":400,"message":"bad id"}`, wantResp: `""`},
		{name: "error message", text: `{"error": "Invalid id_conc: no concert with this id", "response": ""}`,
			wantErr: "Invalid id_conc: no concert with this id", wantResp: `""`},
		{name: "unclosed fence", text: "```json\n{\"error\": \"\", \"response\": {\"a\": 1",
			wantResp: `{"a":1}`, repairs: []string{repairFence, repairLoose, repairTruncated}, truncated: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := parseOutput(tc.text)
			if err != nil {
				t.Fatalf("parseOutput: %v", err)
			}
			if out.Error != tc.wantErr {
				t.Errorf("Error = %q, want %q", out.Error, tc.wantErr)
			}
			if got := string(responseJSON(out)); got != tc.wantResp {
				t.Errorf("response = %s, want %s", got, tc.wantResp)
			}
			if out.Mechanism != tc.mechanism {
				t.Errorf("Mechanism = %q, want %q", out.Mechanism, tc.mechanism)
			}
			if !slices.Equal(out.Repairs, tc.repairs) {
				t.Errorf("Repairs = %v, want %v", out.Repairs, tc.repairs)
			}
			if out.Truncated != tc.truncated {
				t.Errorf("Truncated = %v, want %v", out.Truncated, tc.truncated)
			}
		})
	}
}

func TestParseOutputRefuses(t *testing.T) {
	cases := map[string]string{
		"empty":      "",
		"prose only": "I'm sorry, I cannot simulate this API.",
		"just open":  "{",
		"garbage":    "{{{{]]]]",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := parseOutput(text)
			if err == nil {
				t.Fatalf("parseOutput(%q) = %+v, want an error", text, out)
			}
			if name == "prose only" && !errors.Is(err, errNoJSON) {
				t.Errorf("error %v should wrap errNoJSON", err)
			}
		})
	}
}

func TestParseLooseTemplates(t *testing.T) {
	// A ToolBench template_response string cut at 1,000 characters.
	text := `{"status": "str", "data": {"movies": [{"id": "int", "genres": ["list of str with length 3"], "_list_length": 20}], "next": "NoneTy`
	v, _, truncated, err := pyfmt.ParseLoose(text, pyfmt.LooseOptions{})
	if err != nil || !truncated {
		t.Fatalf("ParseLoose: %v truncated=%v", err, truncated)
	}
	got := string(encodeJSON(v))
	want := `{"status":"str","data":{"movies":[{"id":"int","genres":["list of str with length 3"],"_list_length":20}]}}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if !strings.Contains(string(encodeJSON(mustLoose(t, `{"a": "it"s fine", "b": 1}`))), `it\"s fine`) {
		t.Error("an inner quote followed by a letter must stay in the string")
	}
}

func mustLoose(t *testing.T, s string) any {
	t.Helper()
	v, _, _, err := pyfmt.ParseLoose(s, pyfmt.LooseOptions{KeepPartial: true})
	if err != nil {
		t.Fatalf("ParseLoose(%q): %v", s, err)
	}
	return v
}
