package mirror_test

import (
	"encoding/json"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mirror"
)

func forecastTool() *toolenv.Tool {
	return weatherTools("http://127.0.0.1:1", "forecast").Tools[0]
}

// TestParseCall reads the calls models write with the Calls Writing
// prompt, in the forms they write them.
func TestParseCall(t *testing.T) {
	tool := forecastTool()
	tests := []struct {
		name, text, want string
	}{
		{"json", `{"category": "Weather", "tool_name": "weather_service", "api_name": "Forecast", "tool_input": "{\"city\": \"Paris\", \"days\": 2}", "strip": "filter"}`, `{"city":"Paris","days":2}`},
		{"fenced after prose", "Sure! Here is the call:\n```json\n{\"api_name\": \"Forecast\", \"tool_input\": \"{\\\"city\\\": \\\"Lyon\\\"}\"}\n```\nGood luck.", `{"city":"Lyon"}`},
		{"the prompt's quotes", "{‘‘category’’:‘‘Weather’’, ‘‘api_name’’:‘‘Forecast’’, ‘‘tool_input’’:‘{\"city\": \"Rome\"}’, ‘‘strip’’:‘‘filter’’,}", `{"city":"Rome"}`},
		{"python dict", `{'category': 'Weather', 'api_name': 'Forecast', 'tool_input': {'city': 'Oslo', 'days': 3}, 'strip': 'filter'}`, `{"city":"Oslo","days":3}`},
		{"tool_input as an object", `{"api_name": "forecast", "tool_input": {"city": "Oslo"}}`, `{"city":"Oslo"}`},
		{"empty input", `{"api_name": "Forecast", "tool_input": "{}"}`, `{}`},
		{"trailing comma", `{"api_name": "Forecast", "tool_input": "{\"city\": \"Rome\",}",}`, `{"city":"Rome"}`},
		{"no api name", `{"tool_input": "{\"city\": \"Rome\"}"}`, `{"city":"Rome"}`},
	}
	for _, tc := range tests {
		args, err := mirror.ParseCall(tool, tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got, _ := toolenv.Canonical(args)
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	for name, text := range map[string]string{
		"prose":      "I think the API is reachable.",
		"wrong api":  `{"api_name": "Another API", "tool_input": "{}"}`,
		"no input":   `{"api_name": "Forecast"}`,
		"input list": `{"api_name": "Forecast", "tool_input": "[1, 2]"}`,
		"bad input":  `{"api_name": "Forecast", "tool_input": "{city: }"}`,
	} {
		if args, err := mirror.ParseCall(tool, text); err == nil {
			t.Errorf("%s: read as %v", name, args)
		}
	}
}

func FuzzParseCall(f *testing.F) {
	f.Add(`{"api_name": "Forecast", "tool_input": "{\"city\": \"Paris\"}"}`)
	f.Add("{‘‘api_name’’:‘‘Forecast’’, ‘‘tool_input’’:‘{}’}")
	f.Add("```json\n{'tool_input': {'a': [1, {'b': None}]}}\n```")
	tool := forecastTool()
	f.Fuzz(func(t *testing.T, text string) {
		args, err := mirror.ParseCall(tool, text)
		if err != nil {
			return
		}
		if _, err := json.Marshal(args); err != nil {
			t.Fatalf("arguments %v cannot be written as JSON: %v", args, err)
		}
		if _, err := toolenv.Canonical(args); err != nil {
			t.Fatalf("arguments %v have no canonical form: %v", args, err)
		}
	})
}
