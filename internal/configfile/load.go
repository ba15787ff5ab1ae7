package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolenv/toolenv/internal/redact"
	"go.yaml.in/yaml/v3"
)

// MaxFileBytes bounds the size of a configuration file.
const MaxFileBytes = 1 << 20

// File is what Load read: where from, which keys it set and what it
// warned about.
type File struct {
	// Path is the file read.
	Path string
	// Set holds the keys the file set (dotted paths of leaves).
	Set map[string]bool
	// Warnings are problems that do not stop the file from loading
	// (credentials written inline), one line each with the file and line.
	Warnings []string
}

// Error is a problem with a configuration file: where it is and what is
// wrong.
type Error struct {
	File   string
	Line   int // 0 when unknown
	Column int
	Key    string // dotted path of the key, when known
	Msg    string
}

// Error implements error: "toolenv.yaml:3:1: simulater: unknown key (did
// you mean simulator?)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrNotExist is wrapped by the error of Load for a missing file.
var ErrNotExist = fs.ErrNotExist

// Load decodes the YAML or JSON file at path into the struct v points to,
// over the values v already holds (the defaults): a key in the file
// replaces the field's value, a key absent keeps it, and null sets the
// field's zero value. Every key must be a field of v and every value of
// its field's type; all problems found are returned together, as *Error
// values joined with errors.Join. Relative paths in fields tagged path
// resolve against the file's folder. v is left unchanged on error.
func Load(path string, v any) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("config file %s does not exist (check the path given to --config): %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("config file: %w", err)
	}
	if st.IsDir() {
		return nil, &Error{File: path, Msg: "is a folder; --config takes a YAML or JSON file"}
	}
	if st.Size() > MaxFileBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("is %d bytes; a configuration file is at most %d", st.Size(), MaxFileBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	return Decode(data, path, filepath.Dir(path), v)
}

// Decode is Load for data already read: name is used in messages and dir
// resolves relative paths ("" leaves them as written).
func Decode(data []byte, name, dir string, v any) (*File, error) {
	rv := structOf(v)
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		// JSON: check it as JSON (YAML would accept a trailing comma or
		// a comment), then read it as YAML for the lines of its keys.
		if err := jsonSyntax(data, name); err != nil {
			return nil, err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: name, Msg: "not valid YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	d := &decoder{file: &File{Path: name, Set: map[string]bool{}}, dir: dir, root: treeOf(rv.Type())}
	out := reflect.New(rv.Type()).Elem()
	out.Set(rv)
	if len(doc.Content) > 0 {
		d.section(doc.Content[0], d.root, out, "")
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	rv.Set(out)
	return d.file, nil
}

// jsonSyntax returns the first syntax error of a JSON file, with its line
// and column.
func jsonSyntax(data []byte, name string) error {
	var x any
	err := json.Unmarshal(data, &x)
	if err == nil {
		return nil
	}
	e := &Error{File: name, Msg: "not valid JSON: " + err.Error()}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		before := data[:min(int(se.Offset), len(data))]
		e.Line = bytes.Count(before, []byte("\n")) + 1
		e.Column = len(before) - bytes.LastIndexByte(before, '\n')
	}
	return e
}

type decoder struct {
	file *File
	dir  string
	root *node
	errs []error
}

// maxErrors bounds the problems reported for one file.
const maxErrors = 20

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	if len(d.errs) == maxErrors {
		d.errs = append(d.errs, &Error{File: d.file.Path, Msg: "more problems not shown"})
	}
	if len(d.errs) > maxErrors {
		return
	}
	e := &Error{File: d.file.Path, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// section decodes a mapping into the struct section sec of rv.
func (d *decoder) section(n *yaml.Node, sec *node, rv reflect.Value, prefix string) {
	n = resolveAlias(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		where := strings.TrimSuffix(prefix, ".")
		if where == "" {
			d.fail(n, "", "the file must be a mapping of keys to values (e.g. `store: cache.db`), not %s", describe(n))
		} else {
			d.fail(n, where, "is a section: write its keys under it (e.g. %s:\\n  %s: ...), not %s", sec.name, sec.kids[0].name, describe(n))
		}
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], resolveAlias(n.Content[i+1])
		if kn.Kind != yaml.ScalarNode || kn.Tag == "!!merge" {
			d.fail(kn, strings.TrimSuffix(prefix, "."), "keys must be plain names (merge keys and complex keys are not supported)")
			continue
		}
		key := kn.Value
		if line, dup := seen[key]; dup {
			d.fail(kn, prefix+key, "appears twice (first on line %d)", line)
			continue
		}
		seen[key] = kn.Line
		if prefix == "" && key == "$schema" {
			continue // editors' pointer to the schema
		}
		var kid *node
		for _, k := range sec.kids {
			if k.name == key {
				kid = k
				break
			}
		}
		if kid == nil {
			d.fail(kn, prefix+key, "unknown key%s", d.suggest(sec, prefix, key))
			continue
		}
		if kid.field == nil {
			d.section(vn, kid, rv, prefix+key+".")
			continue
		}
		d.leaf(vn, kid.field, kid.field.value(rv))
	}
}

// suggest returns " (did you mean X?)" naming the key nearest to key: in
// its section, else anywhere (a key written at the wrong level, or a flag
// name written as a key), or "" when nothing is near.
func (d *decoder) suggest(sec *node, prefix, key string) string {
	var local []string
	for _, k := range sec.kids {
		local = append(local, k.name)
	}
	if s := nearest(key, local); s != "" {
		return fmt.Sprintf(" (did you mean %s?; valid here: %s)", prefix+s, strings.Join(local, ", "))
	}
	var all, flags []string
	var byFlag = map[string]string{}
	var visit func(n *node)
	visit = func(n *node) {
		if n.field != nil {
			all = append(all, n.field.Key)
			if n.field.Flag != "" {
				flags = append(flags, n.field.Flag)
				byFlag[n.field.Flag] = n.field.Key
			}
		}
		for _, k := range n.kids {
			visit(k)
		}
	}
	visit(d.root)
	if s := nearest(key, flags); s != "" {
		return fmt.Sprintf(" (did you mean %s? it is what --%s sets)", byFlag[s], s)
	}
	var leaves []string
	for _, k := range all {
		leaves = append(leaves, k[strings.LastIndex(k, ".")+1:])
	}
	if s := nearest(key, leaves); s != "" {
		for _, k := range all {
			if strings.HasSuffix(k, "."+s) || k == s {
				return fmt.Sprintf(" (did you mean %s?)", k)
			}
		}
	}
	return fmt.Sprintf(" (valid here: %s)", strings.Join(local, ", "))
}

// leaf decodes a scalar or list into the field fv.
func (d *decoder) leaf(n *yaml.Node, f *Field, fv reflect.Value) {
	if isNull(n) {
		fv.SetZero()
		d.file.Set[f.Key] = true
		return
	}
	if fv.Kind() == reflect.Slice {
		if n.Kind != yaml.SequenceNode {
			d.fail(n, f.Key, "want a list of strings (e.g. [a, b], or one `- item` per line), not %s", describe(n))
			return
		}
		var list []string // nil for an empty list
		for _, it := range n.Content {
			it = resolveAlias(it)
			s, ok := d.str(it, f)
			if !ok {
				return
			}
			list = append(list, d.resolvePath(f, s))
		}
		fv.Set(reflect.ValueOf(list))
		d.file.Set[f.Key] = true
		return
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, f.Key, "want %s, not %s", typeName(f.Type), describe(n))
		return
	}
	switch {
	case fv.Type() == durationType:
		if n.Tag != "!!str" {
			if n.Tag == "!!int" && n.Value == "0" {
				fv.SetInt(0)
				break
			}
			d.fail(n, f.Key, "want a duration with a unit, such as 90s, 2m or 1h30m, not %s", describe(n))
			return
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil || dur < 0 {
			d.fail(n, f.Key, "%q is not a duration: write a positive number with a unit, such as 90s, 2m or 1h30m", n.Value)
			return
		}
		fv.SetInt(int64(dur))
	case fv.Kind() == reflect.String:
		s, ok := d.str(n, f)
		if !ok {
			return
		}
		fv.SetString(d.resolvePath(f, s))
		if f.Secret != "" && s != "" {
			d.file.Warnings = append(d.file.Warnings, fmt.Sprintf("%s:%d: %s holds a credential written inline; put it in an environment variable and write its name instead (%s: NAME)",
				d.file.Path, n.Line, f.Key, f.Secret))
		}
	case fv.Kind() == reflect.Bool:
		if n.Tag != "!!bool" {
			d.fail(n, f.Key, "want true or false, not %s", describe(n))
			return
		}
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			d.fail(n, f.Key, "want true or false, not %q", n.Value)
			return
		}
		fv.SetBool(b)
	case fv.Kind() == reflect.Int || fv.Kind() == reflect.Int64:
		var x int64
		if n.Tag != "!!int" || n.Decode(&x) != nil {
			d.fail(n, f.Key, "want a whole number, not %s", describe(n))
			return
		}
		if fv.Kind() == reflect.Int && (x > math.MaxInt || x < math.MinInt) {
			d.fail(n, f.Key, "%s is out of range", n.Value)
			return
		}
		fv.SetInt(x)
	case fv.Kind() == reflect.Uint64:
		var x uint64
		if n.Tag != "!!int" || n.Decode(&x) != nil {
			d.fail(n, f.Key, "want a whole number of 0 or more, not %s", describe(n))
			return
		}
		fv.SetUint(x)
	case fv.Kind() == reflect.Float64:
		var x float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&x) != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			d.fail(n, f.Key, "want a number, not %s", describe(n))
			return
		}
		fv.SetFloat(x)
	}
	d.file.Set[f.Key] = true
}

// str reads a string scalar, checking the field's enum.
func (d *decoder) str(n *yaml.Node, f *Field) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		hint := ""
		if n.Kind == yaml.ScalarNode {
			hint = fmt.Sprintf(" (quote it if you mean the text: %q)", n.Value)
		}
		d.fail(n, f.Key, "want a string, not %s%s", describe(n), hint)
		return "", false
	}
	if err := f.check(n.Value); err != nil {
		d.fail(n, f.Key, "%v", err)
		return "", false
	}
	return n.Value, true
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if s == "" {
			s = `"" (the default)`
		}
		out[i] = s
	}
	return out
}

// resolvePath makes a relative path of a path field relative to the
// file's folder. It leaves alone what is not a file: "", ":memory:",
// URLs and inline JSON.
func (d *decoder) resolvePath(f *Field, s string) string {
	if f.Path == "" || d.dir == "" || s == "" || s == ":memory:" || strings.Contains(s, "://") ||
		strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || filepath.IsAbs(s) {
		return s
	}
	if f.Path == "named" {
		if name, file, ok := strings.Cut(s, "="); ok && name != "" {
			if _, err := os.Stat(filepath.Join(d.dir, s)); err != nil {
				if filepath.IsAbs(file) {
					return s
				}
				return name + "=" + filepath.Join(d.dir, file)
			}
		}
	}
	return filepath.Join(d.dir, s)
}

// describe names what a node holds for a message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("the string %q", v)
		case "!!int", "!!float":
			return "the number " + v
		case "!!bool":
			return "the boolean " + v
		case "!!null":
			return "null"
		}
		return fmt.Sprintf("%q (%s)", v, n.Tag)
	}
	return "a document"
}

func typeName(t reflect.Type) string {
	if t == durationType {
		return "a duration such as 90s"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Uint64:
		return "a whole number of 0 or more"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list of strings"
	}
	return t.String()
}

// check checks a string value against the field's enum and URL tags.
func (f *Field) check(v string) error {
	if f.Enum != nil && !slices.Contains(f.Enum, v) {
		s := ""
		if near := nearest(v, f.Enum); near != "" {
			s = fmt.Sprintf("; did you mean %s?", near)
		}
		return fmt.Errorf("%q is not one of %s%s", v, strings.Join(quoteAll(f.Enum), ", "), s)
	}
	if f.URL && v != "" {
		return CheckURL(v)
	}
	return nil
}

// CheckURL checks that s is an absolute http:// or https:// URL with a
// host. Its error says what is wrong and, for a URL written without its
// scheme ("localhost:8000/v1"), the URL meant.
func CheckURL(s string) error {
	if !strings.Contains(s, "://") {
		meant := redact.URL("http://" + strings.TrimPrefix(s, "//"))
		return fmt.Errorf("%q is not an http(s) URL: write its scheme, e.g. %s", strings.TrimPrefix(meant, "http://"), meant)
	}
	shown := redact.URL(s)
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", shown, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q is not an http(s) URL: its scheme is %s, want http:// or https://", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host: write it as http://HOST:PORT/PATH, e.g. http://127.0.0.1:8000/v1", shown)
	}
	return nil
}

// Nearest returns the candidate closest to name: equal ignoring case and
// separators, else within an edit distance of a third of its length (a
// transposition counts as one edit); "" if none is. Commands use it to
// suggest a flag or a value.
func Nearest(name string, candidates []string) string { return nearest(name, candidates) }

// nearest returns the candidate closest to name: equal ignoring case and
// separators, else within an edit distance (a transposition counts as
// one edit: "ulr" is near "url") of a third of its length; "" if none is.
// (validate.Suggest does the same for arguments, without transpositions.)
func nearest(name string, candidates []string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(s))
	}
	n := norm(name)
	best, bestD := "", len(n)/3+1
	for _, c := range candidates {
		cn := norm(c)
		if cn == n {
			return c
		}
		if d := editDistance(n, cn); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein plus transpositions of adjacent bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt32
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
