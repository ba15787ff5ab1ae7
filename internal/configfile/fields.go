package configfile

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Field describes one leaf of a configuration struct.
type Field struct {
	// Key is the field's dotted path in the file: "simulator.url".
	Key string
	// Name is the last element of Key.
	Name string
	// Flag is the command-line flag that sets it, without dashes; "" if
	// none.
	Flag string
	// Short is the flag's one-letter shorthand; "" if none.
	Short string
	// Comma splits a list flag's values on commas.
	Comma bool
	// Help says what the field does.
	Help string
	// Default is the default value as written in the default tag.
	Default string
	// Enum lists the accepted values; nil accepts any.
	Enum []string
	// Path is "file" or "named" for file paths, else "".
	Path string
	// URL says the value, when set, is an http:// or https:// URL.
	URL bool
	// Secret is, for a credential, the key of the field that should name
	// the environment variable holding it instead; "" otherwise.
	Secret string
	// Type is the Go type of the field.
	Type      reflect.Type
	index     []int
	omitEmpty bool
}

// node is a section (a struct) or a leaf of a configuration.
type node struct {
	name  string // key in its section; "" at the root
	help  string
	field *Field  // set for a leaf
	kids  []*node // set for a section
	index []int
}

var durationType = reflect.TypeFor[time.Duration]()

var (
	treeMu    sync.Mutex
	treeCache = map[reflect.Type]*node{}
)

// structOf returns the struct value v points to; it panics when v is not
// a non-nil pointer to a struct (a programming error).
func structOf(v any) reflect.Value {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("configfile: want a non-nil pointer to a struct, got %T", v))
	}
	return rv.Elem()
}

// treeOf returns the (cached) tree of a struct type. It panics on a field
// type it does not support: configuration structs are fixed at compile
// time, and a test over each of them catches the mistake.
func treeOf(t reflect.Type) *node {
	treeMu.Lock()
	defer treeMu.Unlock()
	if n, ok := treeCache[t]; ok {
		return n
	}
	root := &node{}
	root.kids = walk(t, nil, "")
	checkUnique(root, "")
	treeCache[t] = root
	return root
}

func walk(t reflect.Type, index []int, prefix string) []*node {
	var out []*node
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			if _, ok := sf.Tag.Lookup("json"); !ok {
				out = append(out, walk(sf.Type, idx, prefix)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		name, jsonOpts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			panic(fmt.Sprintf("configfile: field %s of %s has no json tag", sf.Name, t))
		}
		key := prefix + name
		if sf.Type.Kind() == reflect.Struct && sf.Type != durationType {
			out = append(out, &node{name: name, help: sf.Tag.Get("help"), index: idx, kids: walk(sf.Type, idx, key+".")})
			continue
		}
		if !supported(sf.Type) {
			panic(fmt.Sprintf("configfile: field %s (%s) of %s has a type configuration files cannot hold", sf.Name, sf.Type, t))
		}
		f := &Field{Key: key, Name: name, Help: sf.Tag.Get("help"), Default: sf.Tag.Get("default"),
			Path: sf.Tag.Get("path"), Secret: sf.Tag.Get("secret"), Type: sf.Type, index: idx,
			omitEmpty: strings.Contains(jsonOpts, "omitempty")}
		if fl := sf.Tag.Get("flag"); fl != "" {
			f.Flag, _, _ = strings.Cut(fl, ",")
			f.Comma = strings.HasSuffix(fl, ",comma")
			f.Short = sf.Tag.Get("short")
		}
		f.URL = sf.Tag.Get("url") == "http"
		if e := sf.Tag.Get("enum"); e != "" {
			f.Enum = strings.Split(e, ",")
		}
		out = append(out, &node{name: name, help: f.Help, field: f, index: idx})
	}
	return out
}

func supported(t reflect.Type) bool {
	if t == durationType {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	}
	return false
}

func checkUnique(n *node, at string) {
	seen := map[string]bool{}
	for _, k := range n.kids {
		if seen[k.name] {
			panic(fmt.Sprintf("configfile: key %q appears twice in section %q", k.name, at))
		}
		seen[k.name] = true
		if k.field == nil {
			checkUnique(k, at+k.name+".")
		}
	}
}

// Fields returns the leaf fields of the struct v points to, in declaration
// order.
func Fields(v any) []*Field {
	var out []*Field
	var visit func(n *node)
	visit = func(n *node) {
		if n.field != nil {
			out = append(out, n.field)
		}
		for _, k := range n.kids {
			visit(k)
		}
	}
	visit(treeOf(structOf(v).Type()))
	return out
}

// Lookup returns the field with the given key or flag name, or nil.
func Lookup(v any, keyOrFlag string) *Field {
	for _, f := range Fields(v) {
		if f.Key == keyOrFlag || (f.Flag != "" && f.Flag == strings.TrimLeft(keyOrFlag, "-")) {
			return f
		}
	}
	return nil
}

// Option names a field for a message: its key, and the flag that sets it
// when it has one: "simulator.url (--llm-url)". It names keys that are not
// fields of v as they are.
func Option(v any, key string) string {
	f := Lookup(v, key)
	if f == nil || f.Flag == "" {
		return key
	}
	return fmt.Sprintf("%s (--%s)", f.Key, f.Flag)
}

// value returns the field's value in the struct rv.
func (f *Field) value(rv reflect.Value) reflect.Value { return rv.FieldByIndex(f.index) }

// Default returns a T with its default tags applied (Defaults).
func Default[T any]() T {
	var c T
	Defaults(&c)
	return c
}

// Defaults sets every field of the struct v points to that has a default
// tag to that default. It panics on a default its field cannot hold.
func Defaults(v any) {
	rv := structOf(v)
	for _, f := range Fields(v) {
		if f.Default == "" {
			continue
		}
		if err := setString(f.value(rv), f.Default); err != nil {
			panic(fmt.Sprintf("configfile: default of %s: %v", f.Key, err))
		}
	}
}

// setString sets a leaf from its text form (a default tag).
func setString(fv reflect.Value, s string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Bool:
		switch s {
		case "true":
			fv.SetBool(true)
		case "false":
			fv.SetBool(false)
		default:
			return fmt.Errorf("%q is not true or false", s)
		}
	case reflect.Int, reflect.Int64:
		var n int64
		if _, err := fmt.Sscan(s, &n); err != nil {
			return err
		}
		fv.SetInt(n)
	case reflect.Uint64:
		var n uint64
		if _, err := fmt.Sscan(s, &n); err != nil {
			return err
		}
		fv.SetUint(n)
	case reflect.Float64:
		var x float64
		if _, err := fmt.Sscan(s, &x); err != nil {
			return err
		}
		fv.SetFloat(x)
	case reflect.Slice:
		fv.Set(reflect.ValueOf(strings.Split(s, ",")))
	}
	return nil
}
