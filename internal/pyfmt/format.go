package pyfmt

import "strings"

// Format fills the named fields of a Python str.format template: "{name}"
// is replaced by fields[name] and "{{" / "}}" become "{" / "}". A field
// not in fields is left as written.
func Format(template string, fields map[string]string) string {
	var b strings.Builder
	b.Grow(len(template))
	for i := 0; i < len(template); {
		c := template[i]
		switch {
		case c == '{' && i+1 < len(template) && template[i+1] == '{':
			b.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(template) && template[i+1] == '}':
			b.WriteByte('}')
			i += 2
		case c == '{':
			end := strings.IndexByte(template[i:], '}')
			if end < 0 {
				b.WriteString(template[i:])
				return b.String()
			}
			name := template[i+1 : i+end]
			if v, ok := fields[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(template[i : i+end+1])
			}
			i += end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
