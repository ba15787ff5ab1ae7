package agent

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

//go:embed prompts/*.txt
var promptFiles embed.FS

// Prompt is a versioned prompt template. Its file starts with "# key:
// value" header lines (name, version, source) and a "---" line; the text
// after it is the template, with {field} placeholders ("{{" and "}}" for
// literal braces).
type Prompt struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
	// SHA256 identifies the exact text, for reports.
	SHA256 string `json:"sha256"`
	Text   string `json:"-"`
}

// ParsePrompt reads a prompt file. The file's final newline is not part of
// the text.
func ParsePrompt(data string) (Prompt, error) {
	var p Prompt
	head, body, ok := strings.Cut(data, "\n---\n")
	if !ok {
		return p, fmt.Errorf("prompt file: no \"---\" line between the header and the text")
	}
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "name":
			p.Name = strings.TrimSpace(v)
		case "version":
			p.Version = strings.TrimSpace(v)
		case "source":
			p.Source = strings.TrimSpace(v)
		}
	}
	if p.Name == "" || p.Version == "" {
		return p, fmt.Errorf("prompt file: the header needs a name and a version")
	}
	p.Text = strings.TrimSuffix(body, "\n")
	sum := sha256.Sum256([]byte(body))
	p.SHA256 = hex.EncodeToString(sum[:8])
	return p, nil
}

// LoadPrompt returns the embedded prompt file prompts/<file>.
func LoadPrompt(fs embed.FS, file string) Prompt {
	data, err := fs.ReadFile(file)
	if err != nil {
		panic("agent: missing embedded prompt " + file) // a build error, caught by tests
	}
	p, err := ParsePrompt(string(data))
	if err != nil {
		panic("agent: " + file + ": " + err.Error())
	}
	return p
}

// The agents' prompts.
var (
	promptDirectNestful = LoadPrompt(promptFiles, "prompts/direct_nestful.txt")
	promptDirectBFCL    = LoadPrompt(promptFiles, "prompts/direct_bfcl.txt")
	promptReAct         = LoadPrompt(promptFiles, "prompts/react.txt")
	promptToolBench     = LoadPrompt(promptFiles, "prompts/toolbench_system.txt")
	promptDiversity     = LoadPrompt(promptFiles, "prompts/toolbench_diversity.txt")
)

// Prompts lists the agents' prompts (name, version, source, hash), for
// reports.
func Prompts() []Prompt {
	ps := []Prompt{promptDirectNestful, promptDirectBFCL, promptReAct, promptToolBench, promptDiversity}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// fill replaces {field} placeholders in a template; "{{" and "}}" stand
// for literal braces.
func fill(tmpl string, fields map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		switch {
		case c == '{' && strings.HasPrefix(tmpl[i:], "{{"):
			b.WriteByte('{')
			i += 2
		case c == '}' && strings.HasPrefix(tmpl[i:], "}}"):
			b.WriteByte('}')
			i += 2
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if v, ok := fields[tmpl[i+1:i+max(end, 1)]]; end > 0 && ok {
				b.WriteString(v)
				i += end + 1
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
