package configfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/toolenv/toolenv/internal/redact"
	"go.yaml.in/yaml/v3"
)

// Hidden replaces the value of a credential written inline wherever a
// configuration is printed.
const Hidden = "(hidden: written inline; name an environment variable instead)"

// Object is a printed configuration or section: keys in the struct's
// order. It marshals to JSON in that order.
type Object struct {
	Keys   []string
	Values map[string]any
}

// MarshalJSON writes the keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(o.Values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without escaping <, > and & (configurations
// and schemas are read by people).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// indent is json.MarshalIndent over marshal.
func indent(v any) ([]byte, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Redacted returns the configuration v points to as an Object, with every
// field (zero values too, so that a printed configuration says everything
// that applied), durations written as "90s", credentials written inline
// replaced by Hidden and passwords in URLs by "xxxxx". It is what reports
// record as "the effective configuration".
func Redacted(v any) *Object {
	rv := structOf(v)
	return redactSection(treeOf(rv.Type()), rv)
}

func redactSection(sec *node, rv reflect.Value) *Object {
	o := &Object{Values: map[string]any{}}
	for _, k := range sec.kids {
		o.Keys = append(o.Keys, k.name)
		if k.field == nil {
			o.Values[k.name] = redactSection(k, rv)
			continue
		}
		fv := k.field.value(rv)
		if k.field.omitEmpty && fv.IsZero() {
			o.Keys = o.Keys[:len(o.Keys)-1]
			continue
		}
		switch {
		case fv.Kind() == reflect.Slice:
			list := []string{}
			for i := range fv.Len() {
				list = append(list, redactItem(fv.Index(i).String()))
			}
			o.Values[k.name] = list
		default:
			o.Values[k.name] = display(k.field, fv)
		}
	}
	return o
}

// redactURL hides the secrets of a configured value: the user info and
// query values of a URL, the password of a libpq keyword string, secret
// name=value pairs in text (redact.Value).
func redactURL(s string) string { return redact.Value(s) }

// redactItem hides the credentials an item of a list may hold: a JSON
// object given inline (an mcpServers document: its env and headers
// values, unless ${VAR} references) or URLs anywhere in the text
// ("NAME=https://user:token@host/…").
func redactItem(s string) string {
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		return redact.JSON(s)
	}
	if m := headerItem.FindStringSubmatch(s); m != nil && !strings.Contains(m[2], "${") {
		return m[1] + " " + redact.Mask // NAME=Header: a credential written inline
	}
	return redact.Text(s)
}

// headerItem is a NAME=Header: value item (--mcp-header).
var headerItem = regexp.MustCompile(`^([^=\s]+=[A-Za-z][A-Za-z0-9-]*:)\s*([^/\s].*)$`)

// Marshal writes the configuration v points to as YAML (format "yaml")
// or indented JSON ("json"), redacted as Redacted does.
func Marshal(v any, format string) ([]byte, error) {
	o := Redacted(v)
	switch format {
	case "json":
		return indent(o)
	case "yaml", "":
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(yamlNode(o)); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("format %q: want yaml or json", format)
}

func yamlNode(v any) *yaml.Node {
	switch x := v.(type) {
	case *Object:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range x.Keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, yamlNode(x.Values[k]))
		}
		return n
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		if len(x) > 0 {
			n.Style = 0
		}
		for _, s := range x {
			n.Content = append(n.Content, yamlNode(s))
		}
		return n
	}
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		n = &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
	}
	return n
}
