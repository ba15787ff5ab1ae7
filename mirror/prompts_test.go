package mirror_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/eval/judge"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/mirror"
)

// appendixC reads the prompt tables of the paper copy's Appendix C: the
// titles in the order printed, and each table's System and User cells.
func appendixC(t *testing.T) (titles []string, cells map[string]string) {
	t.Helper()
	data := shareddata.Require(t)
	raw, err := os.ReadFile(filepath.Join(data, "..", "papers", "mirrorapi-stabletoolbench.txt"))
	if err != nil {
		t.Skipf("skipped: the paper copy is not in ../shared/papers: %v", err)
	}
	text := string(raw)
	start := strings.Index(text, "\nAppendix C Prompts\n")
	end := strings.Index(text, "\nAppendix D ")
	if start < 0 || end < start {
		t.Fatal("the paper copy has no Appendix C")
	}
	head := regexp.MustCompile(`^\| (.+?) \| \|$`)
	cells = map[string]string{}
	title := ""
	for _, line := range strings.Split(text[start:end], "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			title = m[1]
			titles = append(titles, title)
			continue
		}
		for _, role := range []string{"System", "User"} {
			if rest, ok := strings.CutPrefix(line, "| "+role+" | "); ok {
				cells[title+"/"+role] = strings.TrimSuffix(rest, " |")
			}
		}
	}
	return titles, cells
}

// asPrinted is text as the paper's typesetting prints it: LaTeX quotes
// for straight ones, list bullets and line breaks gone.
func asPrinted(s string) string {
	s = strings.NewReplacer("‘‘", `"`, "’’", `"`, "“", `"`, "”", `"`, "’", "'", "‘", "'", "•", " ", "\t", " ").Replace(s)
	s = regexp.MustCompile(`(?m)^\s*\* `).ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

func promptNamed(t *testing.T, ps []promptfile.Prompt, name string) promptfile.Prompt {
	t.Helper()
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no prompt %s", name)
	return promptfile.Prompt{}
}

// TestPromptsAsPrinted diffs every prompt the engine takes from the paper
// against the paper copy's Appendix C. Its tables are numbered by their
// place (§2.1.2 calls the first Table 8, §4.2 the sixth Table 13, §4.3
// the seventh Table 14), which makes the Calls Writing prompt Table 15.
//
// The prompts the paper prints (Calls Writing, API Simulation, Query
// Generation, Checking Documentation Following) are its table cells
// character for character. The SFT, CoT and FAC prompts are
// StableToolBench's own files, which the tables print abridged: their
// text is the table's once typesetting is undone (LaTeX quotes, bullets,
// line breaks), except where the paper put a placeholder for the example
// ("Example API Documentation", "xxxx"), wrote "Here is an example:" for
// the CoT file's "Example:", and renumbered and spell-corrected the FAC
// file's "Additional Guidelines" ("1. 1. 2. 3." and "conficts").
func TestPromptsAsPrinted(t *testing.T) {
	titles, cells := appendixC(t)
	table := map[string]int{}
	for i, title := range titles {
		table[title] = 8 + i
	}
	for title, n := range map[string]int{"Prompt for Checking Documentation Following": 8, "API Simulation Prompt": 9, "SFT Mode System Prompt": 10,
		"CoT Mode System Prompt": 11, "FAC Scoring Prompt": 13, "Query Generation Prompt": 14, "Calls Writing Prompt": 15} {
		if table[title] != n {
			t.Errorf("%q is table %d of the paper copy, want %d (tables %q)", title, table[title], n, titles)
		}
	}

	ps := mirror.Prompts()
	// Printed in the paper: equal to the cell, and the file says so.
	for name, cell := range map[string]string{
		"calls_writing":        "Calls Writing Prompt/User",
		"api_simulation":       "API Simulation Prompt/User",
		"query_generation":     "Query Generation Prompt/User",
		"doc_following_system": "Prompt for Checking Documentation Following/System",
		"doc_following_user":   "Prompt for Checking Documentation Following/User",
	} {
		p := promptNamed(t, ps, name)
		want, ok := cells[cell]
		if !ok {
			t.Fatalf("the paper copy has no cell %s", cell)
		}
		if p.Text != want {
			t.Errorf("%s differs from the paper's %s:\n got %q\nwant %q", name, cell, p.Text, want)
		}
		title, _, _ := strings.Cut(cell, "/")
		if !strings.Contains(p.Source, "reproduced exactly from the MirrorAPI paper") || !strings.Contains(p.Source, "Appendix C") ||
			!strings.Contains(strings.ToLower(p.Source), strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(title, "Prompt for "), " Prompt"))) {
			t.Errorf("%s: the source %q does not name the paper's %q", name, p.Source, title)
		}
	}

	// StableToolBench's files, printed abridged.
	abridged := []struct {
		name, cell, text string
		undo             *strings.Replacer // the paper's edits, undone
		cut              string            // where the paper's example begins
		paperTail        string            // the paper's text from cut on
		codeTail         string            // the file's last words
	}{
		{"sft_system", "SFT Mode System Prompt/System", promptNamed(t, ps, "sft_system").Text, strings.NewReplacer(),
			"Here is an example: API doc:", "Here is an example: API doc: Example API Documentation Request: Example Request Response: Example Response", `"languages":["en","fr-fr","pt-br"]}" }`},
		{"cot_system", "CoT Mode System Prompt/System", promptNamed(t, ps, "cot_system").Text, strings.NewReplacer("Example: API doc:", "Here is an example: API doc:"),
			"Here is an example: API doc:", "Here is an example: API doc: Example API Documentation Request: Example Request Response: Example Response", "maintain correct formatting."},
		{"fac", "FAC Scoring Prompt/User", strings.TrimPrefix(strings.TrimSpace(promptNamed(t, judge.Prompts(), "fac").Text), "gpt-4-turbo"),
			strings.NewReplacer("1. DO NOT evaluate", "2. DO NOT evaluate", "2. Focus on Final", "3. Focus on Final", "3. Answer Completion", "4. Answer Completion", "conficts", "conflicts"),
			"Here are some examples:", `Here are some examples: xxxx Now give your reason and answer status in the following format: Answer Status xxx (can only be "Solved" or "Unsolved") Reason xxx`, `(can only be "Solved" or "Unsolved") Reason xxx`},
	}
	for _, a := range abridged {
		paper, code := asPrinted(cells[a.cell]), a.undo.Replace(asPrinted(a.text))
		pi, ci := strings.Index(paper, a.cut), strings.Index(code, a.cut)
		if pi < 0 || ci < 0 {
			t.Errorf("%s: %q not in the paper (%d) or the prompt (%d)", a.name, a.cut, pi, ci)
			continue
		}
		if paper[:pi] != code[:ci] {
			t.Errorf("%s differs from the paper's %s before its example:\n got %q\nwant %q", a.name, a.cell, code[:ci], paper[:pi])
		}
		if paper[pi:] != a.paperTail || !strings.HasSuffix(code, a.codeTail) {
			t.Errorf("%s: the paper's example %q, the prompt's end %q", a.name, paper[pi:], code[max(0, len(code)-80):])
		}
		if !strings.Contains(promptSource(t, ps, a.name), "StableToolBench") {
			t.Errorf("%s: the source does not name StableToolBench", a.name)
		}
	}
}

func promptSource(t *testing.T, ps []promptfile.Prompt, name string) string {
	if name == "fac" {
		ps = judge.Prompts()
	}
	return promptNamed(t, ps, name).Source
}
