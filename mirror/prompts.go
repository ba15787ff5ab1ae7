package mirror

import (
	"embed"
	"encoding/json"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/eval/fidelity"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/toolbench"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// The prompts of the model-facing stages. Those reproduced from the
// paper say so in their file's header, with the table they come from;
// the others are toolenv's own, written where the paper describes a stage
// without printing its prompt.
var (
	promptScenarios       = promptfile.MustLoad(promptFiles, "prompts/scenarios.txt")
	promptCallsWriting    = promptfile.MustLoad(promptFiles, "prompts/calls_writing.txt")
	promptSynthesize      = promptfile.MustLoad(promptFiles, "prompts/synthesize.txt")
	promptAPISimulation   = promptfile.MustLoad(promptFiles, "prompts/api_simulation.txt")
	promptQueryGeneration = promptfile.MustLoad(promptFiles, "prompts/query_generation.txt")
	promptToolFunctioning = promptfile.MustLoad(promptFiles, "prompts/tool_functioning.txt")
)

// Prompts lists every prompt the engine uses (name, version, source and
// hash), its own and those it borrows: the documentation-following check
// of eval/fidelity (Table 8) and the system prompts of the exported
// samples (backend/simulate, Tables 10 and 11).
func Prompts() []promptfile.Prompt {
	out := []promptfile.Prompt{promptScenarios, promptCallsWriting, promptSynthesize, promptAPISimulation, promptQueryGeneration, promptToolFunctioning}
	for _, p := range fidelity.Prompts() {
		if p.Name == "doc_following_system" || p.Name == "doc_following_user" {
			out = append(out, p)
		}
	}
	sft, _ := promptfile.Parse("# name: sft_system\n# version: 1\n# source: backend/simulate.SFTSystemPrompt: MirrorAPI's SFT-mode system prompt (Table 10), from StableToolBench server/system_prompts.py\n---\n" + simulate.SFTSystemPrompt)
	cot, _ := promptfile.Parse("# name: cot_system\n# version: 1\n# source: backend/simulate.CoTSystemPrompt: MirrorAPI's CoT-mode system prompt (Table 11), from StableToolBench server/system_prompts.py\n---\n" + simulate.CoTSystemPrompt)
	return append(out, sft, cot)
}

// docJSON is the documentation of an API as the generation prompts show
// it: ToolBench's API documentation fields (Appendix A's Table 7 shows
// the same ones), as indented JSON.
type docJSON struct {
	CategoryName       string               `json:"category_name"`
	ToolName           string               `json:"tool_name"`
	ToolDescription    string               `json:"tool_description"`
	APIName            string               `json:"api_name"`
	APIDescription     string               `json:"api_description"`
	RequiredParameters []toolbench.ParamDoc `json:"required_parameters"`
	OptionalParameters []toolbench.ParamDoc `json:"optional_parameters"`
	Method             string               `json:"method,omitempty"`
}

// Document renders t's documentation for the generation prompts.
func Document(t *toolenv.Tool) string {
	d := toolbench.DocOf(t)
	doc := docJSON{
		CategoryName: d.CategoryName, ToolName: t.GroupOrCollection(), ToolDescription: d.ToolDescription,
		APIName: t.TitleOrName(), APIDescription: d.APIDescription,
		RequiredParameters: d.RequiredParameters, OptionalParameters: d.OptionalParameters, Method: d.Method,
	}
	for _, ps := range [][]toolbench.ParamDoc{doc.RequiredParameters, doc.OptionalParameters} {
		for i := range ps {
			if p := t.Input.Prop(paramName(t, ps[i].Name)); p != nil && len(p.Enum) > 0 {
				ps[i].Description += " (one of " + enumText(p.Enum) + ")"
			}
		}
	}
	b, err := toolenv.MarshalJSONNoHTML(doc)
	if err != nil {
		return t.TitleOrName()
	}
	var out []byte
	out, err = indentJSON(b)
	if err != nil {
		return string(b)
	}
	return string(out)
}

func enumText(enum []any) string {
	b, _ := json.Marshal(enum)
	return string(b)
}
