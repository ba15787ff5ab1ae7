package openapi

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
	"go.yaml.in/yaml/v3"
)

// kin-openapi reads objects into Go maps, which forget the order keys
// were written in; a documentation's order of properties and operations
// is part of what a model is shown. sourceOrder reads the same documents
// again as trees of mapping keys, and answers "in what order were the
// keys at this place written".

// place is a location in one of the documents read: a file ("" for the
// main document) and a JSON pointer, as unescaped segments.
type place struct {
	file string
	ptr  []string
}

// child returns the place below p at the given segments.
func (p place) child(segs ...string) place {
	ptr := make([]string, 0, len(p.ptr)+len(segs))
	ptr = append(append(ptr, p.ptr...), segs...)
	return place{file: p.file, ptr: ptr}
}

// index returns the place of item i of the sequence at p.
func (p place) index(seg string, i int) place { return p.child(seg, strconv.Itoa(i)) }

// String returns "file#/json/pointer".
func (p place) String() string {
	var b strings.Builder
	b.WriteString(p.file)
	b.WriteByte('#')
	for _, s := range p.ptr {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(s))
	}
	return b.String()
}

// pointerEscaper and pointerUnescaper escape JSON pointer segments.
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// keyTree is the shape of a JSON/YAML value: the keys of a mapping in
// order, or the items of a sequence.
type keyTree struct {
	keys  []string
	kids  map[string]*keyTree
	items []*keyTree
}

// sourceOrder holds the key trees of the documents read.
type sourceOrder struct {
	dir   string // folder of the main document, for relative refs
	trees map[string]*keyTree
	read  func(file string) ([]byte, error) // nil: external files are not read
}

func newSourceOrder(main []byte, dir string, read func(string) ([]byte, error)) *sourceOrder {
	o := &sourceOrder{dir: dir, trees: map[string]*keyTree{}, read: read}
	o.trees[""] = parseKeyTree(main)
	return o
}

// tree returns the key tree of file, reading it on first use; nil when
// it cannot be read.
func (o *sourceOrder) tree(file string) *keyTree {
	if t, ok := o.trees[file]; ok {
		return t
	}
	var t *keyTree
	if o.read != nil {
		if data, err := o.read(file); err == nil {
			t = parseKeyTree(data)
		}
	}
	o.trees[file] = t
	return t
}

// at returns the subtree at p, or nil.
func (o *sourceOrder) at(p place) *keyTree {
	t := o.tree(p.file)
	for _, s := range p.ptr {
		if t == nil {
			return nil
		}
		if t.kids != nil {
			t = t.kids[s]
			continue
		}
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= len(t.items) {
			return nil
		}
		t = t.items[i]
	}
	return t
}

// keys returns the keys of the mapping at p in document order, or nil.
func (o *sourceOrder) keys(p place) []string {
	if t := o.at(p); t != nil {
		return t.keys
	}
	return nil
}

// resolve returns the place a $ref written at from points to. A ref to
// another file names it relative to the main document's folder, the way
// the loader resolves it.
func (o *sourceOrder) resolve(from place, ref string) place {
	file, frag, _ := strings.Cut(ref, "#")
	target := place{file: from.file}
	if file != "" {
		if u, err := url.Parse(file); err == nil && u.Scheme == "" {
			base := o.dir
			if from.file != "" {
				base = filepath.Dir(from.file)
			}
			target.file = filepath.Join(base, filepath.FromSlash(u.Path))
		} else {
			target.file = file
		}
	}
	if frag, err := url.PathUnescape(frag); err == nil {
		for _, s := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if s != "" {
				target.ptr = append(target.ptr, pointerUnescaper.Replace(s))
			}
		}
	}
	return target
}

// parseKeyTree reads a JSON or YAML document's key order; nil when it
// reads as neither (the loader reports why).
func parseKeyTree(data []byte) *keyTree {
	if json.Valid(data) {
		// json.Valid has bounded the nesting at encoding/json's limit
		// (10000), so MaxDepth never rejects the document; the tree is
		// cut at maxTreeDepth instead.
		v, err := pyfmt.OrderedDecoder{MaxDepth: 10000, Unique: true}.Decode(data)
		if err == nil {
			return jsonKeyTree(v, 0)
		}
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil
	}
	return yamlKeyTree(&n)
}

// maxTreeDepth bounds the trees built, against hostile nesting.
const maxTreeDepth = 256

// jsonKeyTree builds the key tree of a JSON value as the OrderedDecoder
// above reads it; nil for a scalar.
func jsonKeyTree(v any, depth int) *keyTree {
	switch x := v.(type) {
	case pyfmt.Dict:
		t := &keyTree{kids: make(map[string]*keyTree, len(x))}
		for _, it := range x {
			t.keys = append(t.keys, it.Key)
			if depth < maxTreeDepth {
				t.kids[it.Key] = jsonKeyTree(it.Value, depth+1)
			}
		}
		return t
	case []any:
		t := &keyTree{}
		if depth < maxTreeDepth {
			for _, e := range x {
				t.items = append(t.items, jsonKeyTree(e, depth+1))
			}
		}
		return t
	}
	return nil
}

// yamlKeyTree builds the key tree of a YAML node. Trees are built once
// per node, so aliases share their anchor's tree instead of expanding
// ("billion laughs" documents stay linear).
func yamlKeyTree(root *yaml.Node) *keyTree {
	memo := map[*yaml.Node]*keyTree{}
	var build func(n *yaml.Node, depth int) *keyTree
	build = func(n *yaml.Node, depth int) *keyTree {
		for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) {
			if n.Kind == yaml.AliasNode {
				n = n.Alias
			} else if len(n.Content) > 0 {
				n = n.Content[0]
			} else {
				return nil
			}
		}
		if n == nil || depth > maxTreeDepth {
			return nil
		}
		if t, ok := memo[n]; ok {
			return t
		}
		var t *keyTree
		switch n.Kind {
		case yaml.MappingNode:
			t = &keyTree{kids: map[string]*keyTree{}}
			memo[n] = t
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if _, dup := t.kids[k]; dup {
					continue
				}
				t.keys = append(t.keys, k)
				t.kids[k] = build(n.Content[i+1], depth+1)
			}
		case yaml.SequenceNode:
			t = &keyTree{}
			memo[n] = t
			for _, c := range n.Content {
				t.items = append(t.items, build(c, depth+1))
			}
		}
		return t
	}
	return build(root, 0)
}

// ordered returns names (a set, from a Go map) in the order keys lists
// them, the rest sorted after.
func ordered(names map[string]bool, keys []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, k := range keys {
		if names[k] && !seen[k] {
			out = append(out, k)
			seen[k] = true
		}
	}
	if len(out) < len(names) {
		var rest []string
		for k := range names {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sortStrings(rest)
		out = append(out, rest...)
	}
	return out
}
