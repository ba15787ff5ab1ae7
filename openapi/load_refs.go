package openapi

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/validate"
	"go.yaml.in/yaml/v3"
)

// brokenRef finds the first $ref of a document that points nowhere and
// says where it is written, what is missing and what exists there
// instead. kin-openapi's own message ("map key "Order" not found") names
// neither the $ref nor its place. dir is the document's folder ("" when
// there is none: refs to other files are then not checked).
func brokenRef(data []byte, dir string) string {
	var root any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return ""
	}
	docs := map[string]any{"": root}
	load := func(file string) any {
		if d, ok := docs[file]; ok {
			return d
		}
		var v any
		if raw, err := os.ReadFile(file); err == nil {
			_ = yaml.Unmarshal(raw, &v)
		}
		docs[file] = v
		return v
	}
	var found string
	var walk func(file string, v any, at place, depth int)
	walk = func(file string, v any, at place, depth int) {
		if found != "" || depth > maxTreeDepth {
			return
		}
		switch x := stringKeys(v).(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if msg := checkRef(ref, file, dir, load); msg != "" {
					found = fmt.Sprintf("$ref %q at %s %s", ref, at, msg)
					return
				}
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(file, x[k], at.child(k), depth+1)
			}
		case []any:
			for i, item := range x {
				walk(file, item, at.child(strconv.Itoa(i)), depth+1)
			}
		}
	}
	walk("", root, place{}, 0)
	return found
}

// checkRef resolves ref written in file; it returns what is wrong, or "".
func checkRef(ref, file, dir string, load func(string) any) string {
	target, frag, _ := strings.Cut(ref, "#")
	doc := load(file)
	if target != "" {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "" || dir == "" {
			return "" // remote or unresolvable here: the loader says why
		}
		base := dir
		if file != "" {
			base = filepath.Dir(file)
		}
		target = filepath.Join(base, filepath.FromSlash(u.Path))
		if _, err := os.Stat(target); err != nil {
			return fmt.Sprintf("names the file %s, which cannot be read (%v)", target, err)
		}
		doc = load(target)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return "is not a valid JSON pointer"
	}
	cur := doc
	at := place{}
	for _, seg := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = pointerUnescaper.Replace(seg)
		switch x := stringKeys(cur).(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				var have []string
				for k := range x {
					have = append(have, k)
				}
				sort.Strings(have)
				msg := fmt.Sprintf("does not resolve: %s has no %q", at, seg)
				if s := validate.Suggest(seg, have); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else if len(have) > 0 && len(have) <= 12 {
					msg += fmt.Sprintf(" (it has %s)", strings.Join(have, ", "))
				}
				return msg
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return fmt.Sprintf("does not resolve: %s has no item %q", at, seg)
			}
			cur = x[i]
		default:
			return fmt.Sprintf("does not resolve: %s is not an object", at)
		}
		at = at.child(seg)
	}
	return ""
}

// stringKeys turns a YAML mapping with non-string keys (an unquoted
// response code such as 200) into one with string keys.
func stringKeys(v any) any {
	m, ok := v.(map[any]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[fmt.Sprint(k)] = val
	}
	return out
}
