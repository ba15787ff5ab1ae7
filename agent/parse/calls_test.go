package parse

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/llm"
)

// Model outputs quoted in Live API-Bench, Appendix G (listings 32-34 and
// the Qwen example), plus the formats its prompts ask for.
const (
	qwenTagged = "<tool_call>\n{\"name\": \"select_data_equal_to\", \"arguments\": {\"data_source\": \"$starting_table_var$\", \"key_name\": \"races_raceId\", \"value\": 901}, \"label\": \"FILTERED_DF\"}\n</tool_call>\n<tool_call>\n{\"name\": \"get_races_years\", \"arguments\": {\"data_source\": \"$FILTERED_DF$\"}, \"label\": \"RACE_YEAR\"}\n</tool_call>\n<tool_call>\n{\"name\": \"get_seasons_urls\", \"arguments\": {\"data_source\": \"$RACE_YEAR$\"}, \"label\": \"SEASON_URL\"}\n</tool_call>"

	deepseekBareName = "To determine the most common bond type, I will use the tool that provides the percentage of the most common bond type. Here is the tool call:\n\n```json\n[\"get_percentage_most_common_bond_type_v1_bird_toxicology\"]\n```"

	deepseekCoT = "To determine which molecules containing the \"C\" (carbon) element are not carcinogenic, we need to:\n\n1. Identify the molecules that contain the \"C\" element.\n2. Check the carcinogenic flag for each of these molecules.\n\nHere are the steps and the corresponding tool calls:\n\n1. **Get molecule IDs with the \"C\" element:**\n   ```json\n   {\"name\": \"get_molecule_ids_with_element_v1_bird\", \"arguments\": {\"element\": \"C\"}}\n   ```\n\n2. **For each molecule ID, check the carcinogenic flag:**\n   ```json\n   {\"name\": \"get_carcinogenic_flag_v1_bird_toxicology_carcinogenic_flag_get\", \"arguments\": {\"atom_id\": \"atom_id_from_molecule\"}}\n   ```\n\nHowever, since we need to check the carcinogenic flag for each molecule, and the tool get_carcinogenic_flag_v1_bird_toxicology_carcinogenic_flag_get requires an atom_id, we need to first get the atom IDs for each molecule. This would involve additional steps:\n\n3. **Get atom IDs for each molecule:**\n   ```json\n   {\"name\": \"get_atom_ids_by_molecule_id_range_and_element_v1_bird\", \"arguments\": {\"start_molecule_id\": \"molecule_id\", \"end_molecule_id\": \"molecule_id\", \"element\": \"C\"}}\n   ```\n\n4. **Check the carcinogenic flag for each atom ID:**\n   ```json\n   {\"name\": \"get_carcinogenic_flag_v1_bird_toxicology_carcinogenic_flag_get\", \"arguments\": {\"atom_id\": \"atom_id\"}}\n   ```\n\nThis process would need to be repeated for each molecule ID obtained in step 1.\n\nSince this involves multiple steps and potentially multiple tool calls, I can initiate the first step to get the molecule IDs containing the \"C\" element. Here is the first tool call:\n\n```json\n{\"name\": \"get_molecule_ids_with_element_v1_bird\", \"arguments\": {\"element\": \"C\"}}\n```"

	gpt4oProse = "To find the card and artist with the most ruling information, and to check if the card is a promotional printing, we can follow these steps:\n1. Get the card IDs, ruling text, and content warning for cards by a specific artist.\n2. Determine which card has the most ruling information.\n3. Check if the card is a promotional printing.\nLet's start by getting the ruling information for cards by artists."

	mixtralRunOn = "[{\"name\": \"get_card_status_v1_bird_card_games_card_status_get\", \"arguments\": {\"card_name\": \"Cloudchaser Eagle\"}}]\n\nUSER: What is the format of card \"Cloudchaser Eagle\"?\nASSISTANT:\n[{\"name\": \"get_card_format_v1_bird_card_games_card_format_get\", \"arguments\": {\"card_name\": \"Cloudchaser Eagle\"}}]\n\nUSER: What is the artist of card \"Cloudchaser Eagle\"?\nASSISTANT:\n[{\"name\": \"get_colors_format_v1_"

	pythonLiteral = "[{'name': 'get_most_common_bond_type_v1_bird_toxicology', 'arguments': {}, 'label': None}]"
)

func TestCalls(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name      string
		content   string
		native    []llm.ToolCall
		format    Format
		want      []Call
		malformed int
		err       bool
	}{
		{name: "qwen tool_call tags", content: qwenTagged, format: FormatTagged, want: []Call{
			{Name: "select_data_equal_to", Args: map[string]any{"data_source": "$starting_table_var$", "key_name": "races_raceId", "value": n("901")}, Label: "FILTERED_DF"},
			{Name: "get_races_years", Args: map[string]any{"data_source": "$FILTERED_DF$"}, Label: "RACE_YEAR"},
			{Name: "get_seasons_urls", Args: map[string]any{"data_source": "$RACE_YEAR$"}, Label: "SEASON_URL"},
		}},
		{name: "deepseek list of names", content: deepseekBareName, format: FormatFenced, malformed: 1},
		{name: "deepseek chain of thought", content: deepseekCoT, format: FormatFenced, malformed: 0},
		{name: "gpt-4o answers instead", content: gpt4oProse, err: true},
		{name: "mixtral runs on", content: mixtralRunOn, err: true},
		{name: "python literal", content: pythonLiteral, format: FormatPython, want: []Call{
			{Name: "get_most_common_bond_type_v1_bird_toxicology", Args: map[string]any{}},
		}},
		{name: "bfcl python calls", content: `[get_zip_codes(district_name="Fresno Unified", charter_school=1), get_rate(county='Alameda', ratio=.5, flag=True, tags=["a", 'b'])]`, format: FormatPython, want: []Call{
			{Name: "get_zip_codes", Args: map[string]any{"district_name": "Fresno Unified", "charter_school": n("1")}},
			{Name: "get_rate", Args: map[string]any{"county": "Alameda", "ratio": n("0.5"), "flag": true, "tags": []any{"a", "b"}}},
		}},
		{name: "json list", content: `[{"name": "get_card_status", "arguments": {"card_name": "Cloudchaser Eagle"}}]`, format: FormatJSON, want: []Call{
			{Name: "get_card_status", Args: map[string]any{"card_name": "Cloudchaser Eagle"}},
		}},
		{name: "extra brackets", content: `[[{"name": "a", "arguments": {}}], [{"name": "b", "arguments": {"x": 1}}]]`, format: FormatJSON, want: []Call{
			{Name: "a", Args: map[string]any{}}, {Name: "b", Args: map[string]any{"x": n("1")}},
		}},
		{name: "json lines", content: "{\"name\": \"a\", \"arguments\": {\"x\": 1}, \"label\": \"v1\"}\n{\"name\": \"b\", \"arguments\": {\"y\": \"$v1$\"}, \"label\": \"v2\"}", format: FormatJSONLines, want: []Call{
			{Name: "a", Args: map[string]any{"x": n("1")}, Label: "v1"}, {Name: "b", Args: map[string]any{"y": "$v1$"}, Label: "v2"},
		}},
		{name: "prose around json", content: "Sure! The calls are: [{\"name\": \"a\", \"arguments\": {\"q\": \"x\"}}] Let me know if you need more.", format: FormatEmbedded, want: []Call{
			{Name: "a", Args: map[string]any{"q": "x"}},
		}},
		{name: "prose around python", content: "I will call get_x(id=3) now.", format: FormatEmbedded, want: []Call{
			{Name: "get_x", Args: map[string]any{"id": n("3")}},
		}},
		{name: "hammer unlabelled fence", content: "```\n[\n {\"name\": \"f\", \"arguments\": {\"a\": \"1\"}}\n]\n```", format: FormatFenced, want: []Call{
			{Name: "f", Args: map[string]any{"a": "1"}},
		}},
		{name: "openai style arguments string", content: `[{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 2}"}}]`, format: FormatJSON, want: []Call{
			{Name: "f", Args: map[string]any{"a": n("2")}},
		}},
		{name: "reasoning block stripped", content: "<think>Maybe [x(1)]?</think>\n[{\"name\": \"f\", \"arguments\": {}}]", format: FormatJSON, want: []Call{{Name: "f", Args: map[string]any{}}}},
		{name: "llama python tag", content: "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}<|eom_id|>", format: FormatJSON, want: []Call{{Name: "f", Args: map[string]any{"a": n("1")}}}},
		{name: "arguments not an object", content: `[{"name": "f", "arguments": [1, 2]}]`, format: FormatJSON, malformed: 1},
		{name: "positional python args", content: `[f(1, b=2)]`, format: FormatPython, malformed: 1},
		{name: "empty", content: "  ", err: true},
		{name: "native tool calls", native: []llm.ToolCall{
			{ID: "c1", Type: "function", Function: llm.FunctionCall{Name: "f", Arguments: `{"a": "x",}`}},
			{ID: "c2", Type: "function", Function: llm.FunctionCall{Name: "g", Arguments: `{"a": `}},
		}, format: FormatToolCalls, malformed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Calls(tt.content, tt.native)
			if tt.err {
				if err == nil || !errors.Is(err, ErrUnparseable) {
					t.Fatalf("Calls = %+v, %v; want ErrUnparseable", r, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Calls: %v", err)
			}
			if r.Format != tt.format {
				t.Errorf("format = %q, want %q", r.Format, tt.format)
			}
			if r.Malformed() != tt.malformed {
				t.Errorf("malformed = %d, want %d (%+v)", r.Malformed(), tt.malformed, r.Calls)
			}
			if tt.want != nil && !reflect.DeepEqual(r.Calls, tt.want) {
				t.Errorf("calls =\n%+v\nwant\n%+v", r.Calls, tt.want)
			}
		})
	}
}

func TestCallsDeepSeekCoTReadsEveryFence(t *testing.T) {
	r, err := Calls(deepseekCoT, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range r.Calls {
		names = append(names, c.Name)
	}
	want := []string{"get_molecule_ids_with_element_v1_bird", "get_carcinogenic_flag_v1_bird_toxicology_carcinogenic_flag_get", "get_atom_ids_by_molecule_id_range_and_element_v1_bird", "get_carcinogenic_flag_v1_bird_toxicology_carcinogenic_flag_get", "get_molecule_ids_with_element_v1_bird"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
}

func TestReAct(t *testing.T) {
	tests := []struct {
		name string
		text string
		want Step
		err  bool
	}{
		{"action", "Thought: I need the schools first.\nAction: get_schools\nAction Input: {\"county\": \"Alameda\", \"limit\": 5}",
			Step{Thought: "I need the schools first.", Action: "get_schools", Input: map[string]any{"county": "Alameda", "limit": json.Number("5")}, InputRaw: `{"county": "Alameda", "limit": 5}`}, false},
		{"imagined observation dropped", " I should filter.\nAction: `filter_data`\nAction Input:\n```json\n{\"key_name\": \"a\"}\n```\nObservation: [1, 2, 3]\nThought: I now know the final answer\nFinal Answer: 3",
			Step{Thought: "I should filter.", Action: "filter_data", Input: map[string]any{"key_name": "a"}, InputRaw: `{"key_name": "a"}`}, false},
		{"final answer", "Thought: I now know the final answer\nFinal Answer: Millikan High, Polytechnic High",
			Step{Thought: "I now know the final answer", Final: "Millikan High, Polytechnic High", IsFinal: true}, false},
		{"python dict input then more thought", "Action: f()\nAction Input: {'a': 1, 'b': None}\nThought: wait",
			Step{Action: "f", Input: map[string]any{"a": json.Number("1"), "b": nil}, InputRaw: "{'a': 1, 'b': None}"}, false},
		{"input with trailing prose", "Action: f\nAction Input: {\"a\": 1} (the id)",
			Step{Action: "f", Input: map[string]any{"a": json.Number("1")}, InputRaw: `{"a": 1} (the id)`}, false},
		{"no input", "Action: list_all", Step{Action: "list_all", Input: map[string]any{}}, false},
		{"neither", "I think the answer is 42.", Step{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReAct(tt.text)
			if tt.err {
				if !errors.Is(err, ErrUnparseable) {
					t.Fatalf("ReAct = %+v, %v; want ErrUnparseable", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReAct =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParsePython(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`{'a': [1, 2.5, -3e2], "b": (True, None), 'c': 'it\'s', 'd': """x
y"""}`, map[string]any{"a": []any{json.Number("1"), json.Number("2.5"), json.Number("-3e2")}, "b": []any{true, nil}, "c": "it's", "d": "x\ny"}},
		{`r'C:\x'`, `C:\x`},
		{`'\u00e9\x41'`, "éA"},
		{`1_000`, json.Number("1000")},
		{`5.`, json.Number("5.0")},
	}
	for _, tt := range tests {
		got, err := parsePython(tt.in)
		if err != nil {
			t.Errorf("parsePython(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePython(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`{'a': }`, `[1, 2`, `'open`, `f(a=)`, `1e`, `--1`} {
		if v, err := parsePython(bad); err == nil {
			t.Errorf("parsePython(%q) = %#v, want an error", bad, v)
		}
	}
}

// hugeProse are hostile or huge answers: deep brackets, many false
// starts, a deep unfinished object.
func hugeProse() []string {
	return []string{strings.Repeat("[", 200000), strings.Repeat("word [x", 50000), strings.Repeat("{\"a\": ", 30000)}
}

// TestCallsStaysFastOnHugeProse: hostile or huge answers are read to an
// ErrUnparseable error (not a panic or a hang: the go test timeout
// catches that). Their speed is BenchmarkCallsHugeProse's: tests never
// assert on wall-clock time.
func TestCallsStaysFastOnHugeProse(t *testing.T) {
	for _, s := range hugeProse() {
		if r, err := Calls(s, nil); !errors.Is(err, ErrUnparseable) {
			t.Errorf("%.20q...: %d calls, error %v; want ErrUnparseable", s, len(r.Calls), err)
		}
	}
}

// BenchmarkCallsHugeProse measures reading the hostile answers of
// TestCallsStaysFastOnHugeProse (the search in prose is capped, so it
// stays linear in the answer).
func BenchmarkCallsHugeProse(b *testing.B) {
	inputs := hugeProse()
	for b.Loop() {
		for _, s := range inputs {
			_, _ = Calls(s, nil)
		}
	}
}
