package openai

import (
	"encoding/json"
	"fmt"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestFromTool(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string", Description: "query"})
	in.Required = []string{"q"}
	tests := []struct {
		name string
		tool *toolenv.Tool
		want string
	}{
		{"plain description", &toolenv.Tool{Name: "search", Description: "Searches.", Input: in}, "Searches."},
		{"ToolBench's own text wins", &toolenv.Tool{Name: "s_for_t", Description: "raw", Input: in,
			Meta: map[string]string{"function_description": `This is the subfunction for tool "t", you can use this tool.`}},
			`This is the subfunction for tool "t", you can use this tool.`},
		{"deprecated points to its successor", &toolenv.Tool{Name: "old", Description: "Searches.", Input: in,
			Deprecated: &toolenv.Deprecation{Successor: "search"}}, "DEPRECATED: use search instead. Searches."},
		{"no input schema gets an empty object", &toolenv.Tool{Name: "ping"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromTool(tt.tool)
			if got.Type != "function" || got.Function.Name != tt.tool.Name || got.Function.Description != tt.want {
				t.Fatalf("got %+v", got)
			}
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Function struct {
					Parameters struct {
						Type string `json:"type"`
					} `json:"parameters"`
				} `json:"function"`
			}
			if err := json.Unmarshal(raw, &back); err != nil || back.Function.Parameters.Type != "object" {
				t.Fatalf("parameters are not an object schema: %s", raw)
			}
		})
	}
}

func ExampleFromTools() {
	in := toolenv.ObjectSchema()
	in.SetProp("city", &toolenv.Schema{Type: "string"})
	in.Required = []string{"city"}
	tools := FromTools([]*toolenv.Tool{{Name: "current_weather", Description: "Current conditions in a city.", Input: in}})
	raw, _ := json.Marshal(tools)
	fmt.Println(string(raw))
	// Output:
	// [{"type":"function","function":{"name":"current_weather","description":"Current conditions in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
}
