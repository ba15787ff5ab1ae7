package mirror

import (
	"fmt"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// cardJSON is card.json: the card's facts as data.
type cardJSON struct {
	CardInfo
	Summary *Summary `json:"summary"`
	Files   []string `json:"files"`
}

// WriteCard writes the dataset card (README.md, with a Hugging Face
// header) and card.json into dir. Both hold only the data's facts (no
// time), so the same data gives the same card.
func WriteCard(dir string, s *Summary, info CardInfo) error {
	name := info.Name
	if name == "" {
		name = s.Dataset
	}
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "pretty_name: %q\n", name)
	b.WriteString("task_categories:\n- text-generation\ntags:\n- tool-use\n- api-simulation\n- mirrorapi\n- toolenv\n")
	b.WriteString("configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: " + FileTrainOpenAI + "\n")
	for _, sp := range TestSplits {
		fmt.Fprintf(&b, "  - split: %s\n    path: %s/%s.messages.jsonl\n", sp, DirBench, sp)
	}
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %s\n\n", name)
	b.WriteString("Training data for an API simulator in MirrorAPI's two modes (SFT and chain of thought) and its benchmark (MirrorAPI-Bench), ")
	b.WriteString("made by `toolenv mirror` from real requests to real APIs: requests written for every API, answered by the real API through toolenv's call path, ")
	b.WriteString("filtered with the MirrorAPI paper's Appendix D rules, split so that no API and no near-duplicate request crosses between training and test, ")
	b.WriteString("and exported with the exact system prompts of the paper's Tables 10 and 11.\n\n")
	b.WriteString("## Sources\n\n")
	for _, src := range info.Sources {
		fmt.Fprintf(&b, "- %s\n", src)
	}
	if info.Model != "" {
		fmt.Fprintf(&b, "- model behind the model-facing stages: `%s`\n", info.Model)
	} else {
		b.WriteString("- no model: requests by toolenv's schema-driven sampler; no documentation check, synthesis or rationales\n")
	}
	b.WriteString("\n## Funnel\n\n")
	b.WriteString(FunnelText(s))
	b.WriteString("\n## Files\n\n")
	b.WriteString("| File | What |\n|---|---|\n")
	fmt.Fprintf(&b, "| `%s` | training samples, OpenAI chat format: `{\"messages\": [system, user, assistant]}` |\n", FileTrainOpenAI)
	fmt.Fprintf(&b, "| `%s` | the same samples, ShareGPT format: `{\"conversations\": [{\"from\": \"system\"/\"human\"/\"gpt\", \"value\"}]}` |\n", FileTrainShareGPT)
	fmt.Fprintf(&b, "| `%s` | LLaMA-Factory's description of both (`dataset: mirror_openai` or `mirror_sharegpt`) |\n", FileDatasetInfo)
	fmt.Fprintf(&b, "| `%s/<split>.jsonl` | each test split as real pairs `{\"tool\", \"args\", \"response\", \"error\", \"status\", ...}`: `toolenv eval fidelity --pairs` reads them |\n", DirBench)
	fmt.Fprintf(&b, "| `%s/<split>.messages.jsonl` | each test split as SFT-mode prompts with the real answer as `reference` |\n", DirBench)
	b.WriteString("\nA sample is SFT mode (system prompt of Table 10; the answer `{\"error\", \"response\"}`) or CoT mode (system prompt of Table 11, which opens with `[CHAIN_OF_THOUGHT]`; ")
	b.WriteString("the answer `{\"mechanism_of_the_api\", \"error\", \"response\"}`). Both modes are in one file, in a seeded order that spreads the CoT samples evenly, as the paper trains on both at once. ")
	b.WriteString("The user turn is exactly what toolenv's simulator sends (`toolenv serve --llm-url ... --sim-prompt sft|cot`).\n\n")
	s.markdownBody(&b)
	writeAPITable(&b, s)
	b.WriteString("\n## Seeds\n\n")
	for _, k := range sortedKeys(info.Seeds) {
		fmt.Fprintf(&b, "- %s: %d\n", k, info.Seeds[k])
	}
	if pv := info.Toolenv; pv != nil {
		b.WriteString("\n## Made with\n\n")
		fmt.Fprintf(&b, "toolenv %s", pv.Version)
		if pv.Revision != "" {
			fmt.Fprintf(&b, " (revision %s)", pv.Revision)
		}
		if pv.Go != "" {
			fmt.Fprintf(&b, ", %s", pv.Go)
		}
		b.WriteString(".\n")
		if pv.Config != nil {
			cfg, err := toolenv.MarshalJSONNoHTML(pv.Config)
			if err != nil {
				return fmt.Errorf("dataset card: the configuration: %w", err)
			}
			if ind, err := indentJSON(cfg); err == nil {
				cfg = ind
			}
			b.WriteString("\nThe effective configuration (every stage's settings with their defaults; `card.json` holds the same):\n\n```json\n")
			b.Write(cfg)
			b.WriteString("\n```\n")
		}
	}
	if len(info.Commands) > 0 {
		b.WriteString("\n## How it was made\n\n```sh\n")
		for _, c := range info.Commands {
			b.WriteString(c + "\n")
		}
		b.WriteString("```\n")
	}
	b.WriteString("\n## Use\n\n```sh\n")
	b.WriteString("# score a simulator on a test split (BLEU, cosine, the paper's judges)\n")
	fmt.Fprintf(&b, "toolenv eval fidelity --pairs %s/ood_success.jsonl --collection <the mirrored collection> --llm-url URL --llm-model MODEL --out runs/fidelity\n", DirBench)
	b.WriteString("```\n")
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, FileCard), []byte(b.String())); err != nil {
		return fmt.Errorf("write the dataset card: %w", err)
	}
	files := []string{FileTrainOpenAI, FileTrainShareGPT, FileDatasetInfo, FileCard, FileCardJSON}
	for _, sp := range TestSplits {
		files = append(files, DirBench+"/"+sp+".jsonl", DirBench+"/"+sp+".messages.jsonl")
	}
	if err := toolenv.WriteJSONFile(filepath.Join(dir, FileCardJSON), cardJSON{CardInfo: info, Summary: s, Files: files}); err != nil {
		return fmt.Errorf("write card.json: %w", err)
	}
	return nil
}

// writeAPITable writes the per-API counts, folded.
func writeAPITable(b *strings.Builder, s *Summary) {
	if len(s.APIs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Per API\n\n<details><summary>%d APIs</summary>\n\n", len(s.APIs))
	rows := make([][]string, 0, len(s.APIs))
	for _, a := range s.APIs {
		rows = append(rows, []string{"`" + a.Tool + "`", a.Category, a.Group, thousands(a.Requests), thousands(a.Real), thousands(a.RealOK), thousands(a.Kept), thousands(a.Synth), thousands(a.Train), thousands(a.Test)})
	}
	mdTable(b, []string{"API", "Category", "Group", "Requests", "Real", "Real OK", "Kept", "Synthesized", "Train", "Test"}, rows)
	b.WriteString("\n</details>\n")
}
