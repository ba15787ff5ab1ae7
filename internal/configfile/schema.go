package configfile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// durationPattern matches what time.ParseDuration accepts (without a
// sign).
const durationPattern = `^(0|([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$`

// Schema returns a JSON Schema (draft 2020-12) for files holding the
// struct v points to: every key with its type, description, default and
// accepted values, and no other keys (additionalProperties false), so that
// editors complete and check the file. id is the schema's $id and title
// its title.
func Schema(v any, id, title string) ([]byte, error) {
	root := treeOf(structOf(v).Type())
	s := schemaSection(root)
	s.Keys = append([]string{"$schema", "$id", "title"}, s.Keys...)
	s.Values["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s.Values["$id"] = id
	s.Values["title"] = title
	props := s.Values["properties"].(*Object)
	props.Keys = append([]string{"$schema"}, props.Keys...)
	props.Values["$schema"] = obj("type", "string", "description", "the URL or path of this schema, for editors")
	return indent(s)
}

func obj(kv ...any) *Object {
	o := &Object{Values: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		o.Keys = append(o.Keys, k)
		o.Values[k] = kv[i+1]
	}
	return o
}

func (o *Object) set(k string, v any) {
	if _, ok := o.Values[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Values[k] = v
}

func schemaSection(sec *node) *Object {
	props := obj()
	for _, k := range sec.kids {
		if k.field == nil {
			s := schemaSection(k)
			if k.help != "" {
				s.Keys = append([]string{"description"}, s.Keys...)
				s.Values["description"] = k.help
			}
			props.set(k.name, s)
			continue
		}
		props.set(k.name, schemaField(k.field))
	}
	return obj("type", "object", "additionalProperties", false, "properties", props)
}

func schemaField(f *Field) *Object {
	s := obj()
	switch {
	case f.Type == durationType:
		s.set("type", "string")
		s.set("pattern", durationPattern)
	case f.Type.Kind() == reflect.String:
		s.set("type", "string")
	case f.Type.Kind() == reflect.Bool:
		s.set("type", "boolean")
	case f.Type.Kind() == reflect.Int, f.Type.Kind() == reflect.Int64:
		s.set("type", "integer")
	case f.Type.Kind() == reflect.Uint64:
		s.set("type", "integer")
		s.set("minimum", 0)
	case f.Type.Kind() == reflect.Float64:
		s.set("type", "number")
	case f.Type.Kind() == reflect.Slice:
		s.set("type", "array")
		s.set("items", obj("type", "string"))
	}
	desc := f.Help
	if f.Flag != "" {
		desc += " (flag --" + f.Flag + ")"
	}
	if f.Secret != "" {
		desc += ". A credential: prefer " + f.Secret + ", naming the environment variable that holds it"
	}
	s.set("description", desc)
	if f.Enum != nil {
		s.set("enum", f.Enum)
	}
	if f.Default != "" {
		var d any = f.Default
		switch {
		case f.Type.Kind() == reflect.Slice:
			d = strings.Split(f.Default, ",")
		case f.Type != durationType && f.Type.Kind() != reflect.String:
			var x any
			if json.Unmarshal([]byte(f.Default), &x) == nil {
				d = x
			}
		}
		s.set("default", d)
	}
	return s
}

// Reference returns a Markdown table of the fields of the struct v points
// to: key, flag, type, default and description, in declaration order.
func Reference(v any) string {
	var b strings.Builder
	b.WriteString("| key | flag | type | default | what it does |\n|---|---|---|---|---|\n")
	for _, f := range Fields(v) {
		flag, def := "", f.Default
		if f.Flag != "" {
			flag = "`--" + f.Flag + "`"
		}
		if def != "" {
			def = "`" + def + "`"
		}
		help := strings.ReplaceAll(f.Help, "|", "\\|")
		if help != "" && !strings.HasSuffix(help, ".") {
			help += "."
		}
		if f.Enum != nil {
			var vals []string
			for _, e := range f.Enum {
				if e != "" {
					vals = append(vals, "`"+e+"`")
				}
			}
			help += " One of " + strings.Join(vals, ", ") + "."
		}
		if f.Secret != "" {
			help += " A credential: name its variable with `" + f.Secret + "` instead."
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Key, flag, shortType(f), def, help)
	}
	return b.String()
}

func shortType(f *Field) string {
	switch {
	case f.Type == durationType:
		return "duration"
	case f.Type.Kind() == reflect.Slice:
		return "list"
	case f.Type.Kind() == reflect.Int, f.Type.Kind() == reflect.Int64, f.Type.Kind() == reflect.Uint64:
		return "integer"
	case f.Type.Kind() == reflect.Float64:
		return "number"
	case f.Type.Kind() == reflect.Bool:
		return "boolean"
	}
	return "string"
}
