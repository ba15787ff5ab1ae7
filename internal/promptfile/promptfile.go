package promptfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
)

// Prompt is a versioned prompt template.
type Prompt struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
	// SHA256 is the first 16 hex digits of the text's SHA-256, so that a
	// report says exactly which text was used.
	SHA256 string `json:"sha256"`
	Text   string `json:"-"`
}

// Parse reads a prompt file.
func Parse(data string) (Prompt, error) {
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
	sum := sha256.Sum256([]byte(p.Text))
	p.SHA256 = hex.EncodeToString(sum[:8])
	return p, nil
}

// MustLoad reads the prompt file name from fsys and panics when it is
// missing or malformed: prompt files are embedded, so that is a build
// error that the package's tests catch.
func MustLoad(fsys fs.FS, name string) Prompt {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		panic("promptfile: " + err.Error())
	}
	p, err := Parse(string(data))
	if err != nil {
		panic("promptfile: " + name + ": " + err.Error())
	}
	return p
}

// Fill replaces the {field} placeholders of a template with fields; a
// placeholder with no field is left as written, "{{" and "}}" become "{"
// and "}".
func Fill(tmpl string, fields map[string]string) string {
	var b strings.Builder
	b.Grow(len(tmpl))
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
			if end := strings.IndexByte(tmpl[i:], '}'); end > 0 {
				if v, ok := fields[tmpl[i+1:i+end]]; ok {
					b.WriteString(v)
					i += end + 1
					continue
				}
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
