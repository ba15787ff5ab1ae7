package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openapi"
)

// BreakingChange is one change oasdiff finds between the OpenAPI
// documents of two versions.
type BreakingChange struct {
	// ID is oasdiff's rule id ("request-parameter-removed").
	ID string `json:"id"`
	// Level is "error" (breaking), "warning" or "info".
	Level     string `json:"level"`
	Operation string `json:"operation"`
	Path      string `json:"path"`
	Text      string `json:"text"`
}

// BreakingReport is oasdiff's backward-compatibility report of one step.
type BreakingReport struct {
	From    string           `json:"from"`
	To      string           `json:"to"`
	Errors  int              `json:"errors"`
	Warns   int              `json:"warnings"`
	Infos   int              `json:"infos"`
	Changes []BreakingChange `json:"changes"`
}

// Breaking diffs the OpenAPI documents (openapi.Document) of two versions
// of a collection with oasdiff's backward-compatibility checker. Hidden
// tools (stubs left at old names, harness tools) are left out of both
// documents: what a client sees documented is what is compared.
func Breaking(old, nw *toolenv.Collection) (*BreakingReport, error) {
	return breaking(old, nw, breakingBatch)
}

// breaking is Breaking. With batch > 0, the operations both documents
// hold alike are left out of both before oasdiff reads them (pruneCommon)
// and the paths are diffed in batches of about batch paths (pathBatches);
// with batch 0, the whole documents are diffed at once.
// TestBreakingPrunedEqualsWhole compares the two.
func breaking(old, nw *toolenv.Collection, batch int) (*BreakingReport, error) {
	s1, s2, err := loadDocuments(old, nw, batch > 0)
	if err != nil {
		return nil, err
	}
	return diffDocuments(old, nw, s1, s2, batch)
}

// loadDocuments loads the OpenAPI documents of two versions as oasdiff
// reads them, with the operations both hold alike left out when prune is
// set (pruneCommon).
func loadDocuments(old, nw *toolenv.Collection, prune bool) (s1, s2 *load.SpecInfo, err error) {
	d1, d2 := openapi.Document(old, ""), openapi.Document(nw, "")
	if prune {
		if err := pruneCommon(d1, d2); err != nil {
			return nil, nil, err
		}
	}
	// Each document loads on its own (its own loader), both at once.
	var err1, err2 error
	var wg sync.WaitGroup
	wg.Go(func() { s1, err1 = specInfo(old, d1, "v"+strings.TrimPrefix(old.Version, "v")) })
	s2, err2 = specInfo(nw, d2, "v"+strings.TrimPrefix(nw.Version, "v"))
	wg.Wait()
	if err1 != nil {
		return nil, nil, err1
	}
	if err2 != nil {
		return nil, nil, err2
	}
	return s1, s2, nil
}

// diffDocuments is the backward-compatibility report between the loaded
// documents s1 (of old) and s2 (of nw), diffed in batches of about batch
// paths (pathBatches) when batch > 0, whole otherwise. It reads s1 and s2
// without changing them.
func diffDocuments(old, nw *toolenv.Collection, s1, s2 *load.SpecInfo, batch int) (*BreakingReport, error) {
	pairs := [][2]*load.SpecInfo{{s1, s2}}
	if batch > 0 {
		pairs = pathBatches(s1, s2, batch)
	}
	cfg := checker.NewConfig(checker.GetAllChecks())
	// The batches are diffed at once, one per core; their changes are
	// joined in the batches' order.
	found := make([]checker.Changes, len(pairs))
	errs := make([]error, len(pairs))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pairs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(pairs) {
					return
				}
				p := pairs[i]
				d, sources, err := diff.GetPathsDiff(diff.NewConfig(), []*load.SpecInfo{p[0]}, []*load.SpecInfo{p[1]})
				if err != nil {
					errs[i] = fmt.Errorf("oasdiff: %w", err)
					continue
				}
				found[i] = checker.CheckBackwardCompatibilityUntilLevel(cfg, d, sources, checker.INFO)
			}
		})
	}
	wg.Wait()
	var changes checker.Changes
	for i := range pairs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		changes = append(changes, found[i]...)
	}
	l := checker.NewDefaultLocalizer()
	r := &BreakingReport{From: old.Version, To: nw.Version, Changes: []BreakingChange{}}
	for _, c := range changes {
		bc := BreakingChange{ID: c.GetId(), Level: levelName(c.GetLevel()), Operation: c.GetOperation(), Path: c.GetPath(), Text: c.GetUncolorizedText(l)}
		switch c.GetLevel() {
		case checker.ERR:
			r.Errors++
		case checker.WARN:
			r.Warns++
		default:
			r.Infos++
		}
		r.Changes = append(r.Changes, bc)
	}
	sort.SliceStable(r.Changes, func(i, j int) bool {
		a, b := r.Changes[i], r.Changes[j]
		if a.Level != b.Level {
			return levelRank(a.Level) < levelRank(b.Level)
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Text < b.Text
	})
	return r, nil
}

func levelName(l checker.Level) string {
	switch l {
	case checker.ERR:
		return "error"
	case checker.WARN:
		return "warning"
	}
	return "info"
}

func levelRank(l string) int {
	switch l {
	case "error":
		return 0
	case "warning":
		return 1
	}
	return 2
}

// breakingBatch is about how many paths pathBatches puts in a batch.
const breakingBatch = 48

// templateVar matches a path template's variable ("{id}", "{path*}").
var templateVar = regexp.MustCompile(`\{[^}]*\}`)

// pathBatches splits two loaded documents into pairs of documents that
// hold a part of their paths each (the same components, info and tags):
// oasdiff matches each path of a document against every path of the
// other and of itself (kin-openapi's Paths.Find sorts all of a
// document's paths for each path it looks up), which costs in the square
// of their number times its log — most of a drift step's report on
// StableToolBench's 1,920 APIs. Each path's diff depends only on the two
// path items found for it and what they refer to, and oasdiff pairs only
// paths alike once their variables' names are left out ("/a/{id}" and
// "/a/{key}"), so such paths go in one batch, and batches of about n
// paths are diffed one after the other.
func pathBatches(s1, s2 *load.SpecInfo, n int) [][2]*load.SpecInfo {
	groups := map[string][2][]string{}
	for side, s := range []*load.SpecInfo{s1, s2} {
		if s.Spec.Paths == nil {
			continue
		}
		for path := range s.Spec.Paths.Map() {
			key := templateVar.ReplaceAllString(path, "{}")
			g := groups[key]
			g[side] = append(g[side], path)
			groups[key] = g
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	part := func(s *load.SpecInfo, paths []string) *load.SpecInfo {
		t := *s.Spec
		t.Paths = openapi3.NewPathsWithCapacity(len(paths))
		for _, p := range paths {
			t.Paths.Set(p, s.Spec.Paths.Value(p))
		}
		return &load.SpecInfo{Url: s.Url, Spec: &t, Version: s.Version}
	}
	var out [][2]*load.SpecInfo
	var b1, b2 []string
	flush := func() {
		if len(b1)+len(b2) > 0 {
			out = append(out, [2]*load.SpecInfo{part(s1, b1), part(s2, b2)})
		}
		b1, b2 = nil, nil
	}
	for _, k := range keys {
		b1, b2 = append(b1, groups[k][0]...), append(b2, groups[k][1]...)
		if len(b1)+len(b2) >= 2*n {
			flush()
		}
	}
	flush()
	if len(out) == 0 {
		out = append(out, [2]*load.SpecInfo{s1, s2})
	}
	return out
}

// specInfo loads a collection's documented tools (openapi.Document
// leaves hidden ones out) as an OpenAPI document.
//
// kin-openapi decodes each object of a document twice, once into its
// type and once into a map for its extensions, and each nested object
// again from its own bytes: the cost of a document grows with its size
// times its depth. So the document is given to the loader without its
// paths, and each operation (and each path item's other fields) is
// decoded on its own, saving the three outer levels (document, paths,
// path item) their passes over every operation; the references are then
// resolved as the loader resolves them. TestSpecInfoLoadsAsTheLoader
// compares the result with the loader's own.
func specInfo(c *toolenv.Collection, doc map[string]any, name string) (*load.SpecInfo, error) {
	fail := func(err error) error {
		return fmt.Errorf("oasdiff cannot load the openapi document of %s %s: %w", c.Name, c.Version, err)
	}
	paths, _ := doc["paths"].(map[string]any)
	top := make(map[string]any, len(doc))
	for k, v := range doc {
		top[k] = v
	}
	top["paths"] = map[string]any{}
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("openapi document of %s %s: %w", c.Name, c.Version, err)
	}
	loader := openapi3.NewLoader()
	location := &url.URL{Path: name + "/openapi.json"}
	spec, err := loader.LoadFromDataWithPath(raw, location)
	if err != nil {
		return nil, fail(err)
	}
	spec.Paths = openapi3.NewPathsWithCapacity(len(paths))
	for path, v := range paths {
		item, ok := v.(map[string]any)
		if !ok {
			return nil, fail(fmt.Errorf("path %s is not an object", path))
		}
		rest := make(map[string]any, len(item))
		for k, v := range item {
			if !httpMethods[k] {
				rest[k] = v
			}
		}
		raw, err := json.Marshal(rest)
		if err != nil {
			return nil, fmt.Errorf("openapi document of %s %s, path %s: %w", c.Name, c.Version, path, err)
		}
		pi := &openapi3.PathItem{}
		if err := pi.UnmarshalJSON(raw); err != nil {
			return nil, fail(fmt.Errorf("path %s: %w", path, err))
		}
		for m, v := range item {
			if !httpMethods[m] {
				continue
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("openapi document of %s %s, %s %s: %w", c.Name, c.Version, m, path, err)
			}
			op := &openapi3.Operation{}
			if err := op.UnmarshalJSON(raw); err != nil {
				return nil, fail(fmt.Errorf("%s %s: %w", m, path, err))
			}
			pi.SetOperation(strings.ToUpper(m), op)
		}
		spec.Paths.Set(path, pi)
	}
	if err := loader.ResolveRefsIn(spec, location); err != nil {
		return nil, fail(err)
	}
	si := &load.SpecInfo{Url: location.Path, Spec: spec}
	if spec.Info != nil {
		si.Version = spec.Info.Version
	}
	return si, nil
}

// pruneCommon removes from two OpenAPI documents (openapi.Document's
// maps) the operations both hold byte for byte alike, at the same path
// and method, and whose components (what they refer to with $ref, and
// what those refer to) are alike in both too: oasdiff finds no change in
// such an operation, and matching each of a document's paths against the
// other's costs it time in the square of their number (most of a drift
// step's write, on a collection the size of StableToolBench's, where a
// step changes a few tools in ten). Components stay as they are, and so
// does a path whose other fields differ; a path left without operations
// on both sides goes.
func pruneCommon(d1, d2 map[string]any) error {
	changed, err := changedComponents(d1["components"], d2["components"])
	if err != nil {
		return err
	}
	p1, ok1 := d1["paths"].(map[string]any)
	p2, ok2 := d2["paths"].(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	same := func(a, b any) (bool, error) {
		ra, err := json.Marshal(a)
		if err != nil {
			return false, err
		}
		rb, err := json.Marshal(b)
		if err != nil {
			return false, err
		}
		return bytes.Equal(ra, rb) && !refersTo(ra, changed), nil
	}
	for path, v1 := range p1 {
		item1, ok1 := v1.(map[string]any)
		item2, ok2 := p2[path].(map[string]any)
		if !ok1 || !ok2 {
			continue
		}
		rest1, rest2 := map[string]any{}, map[string]any{}
		for k, v := range item1 {
			if !httpMethods[k] {
				rest1[k] = v
			}
		}
		for k, v := range item2 {
			if !httpMethods[k] {
				rest2[k] = v
			}
		}
		if ok, err := same(rest1, rest2); err != nil {
			return err
		} else if !ok {
			continue
		}
		for m, op1 := range item1 {
			op2, ok := item2[m]
			if !httpMethods[m] || !ok {
				continue
			}
			eq, err := same(op1, op2)
			if err != nil {
				return err
			}
			if eq {
				delete(item1, m)
				delete(item2, m)
			}
		}
		if len(item1) == len(rest1) && len(item2) == len(rest2) {
			delete(p1, path)
			delete(p2, path)
		}
	}
	return nil
}

// pointerEscape escapes a name for a JSON pointer (RFC 6901).
var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// componentRef matches a reference to a component in a document's JSON.
var componentRef = regexp.MustCompile(`"\$ref":"(#/components/[^"]+)"`)

// refersTo reports whether raw refers to one of the components named
// (by their reference, "#/components/schemas/Problem").
func refersTo(raw []byte, names map[string]bool) bool {
	if len(names) == 0 {
		return false
	}
	for _, m := range componentRef.FindAllSubmatch(raw, -1) {
		if names[string(m[1])] {
			return true
		}
	}
	return false
}

// changedComponents returns the references of the components that differ
// between two documents' components (one side only, or other JSON), and
// of those that refer to such a component, however indirectly.
func changedComponents(c1, c2 any) (map[string]bool, error) {
	read := func(c any) (map[string]map[string]json.RawMessage, error) {
		out := map[string]map[string]json.RawMessage{}
		if c == nil {
			return out, nil
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		return out, json.Unmarshal(raw, &out)
	}
	s1, err := read(c1)
	if err != nil {
		return nil, err
	}
	s2, err := read(c2)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	all := map[string][]byte{} // every component's JSON, either side's
	for _, pair := range [][2]map[string]map[string]json.RawMessage{{s1, s2}, {s2, s1}} {
		for section, items := range pair[0] {
			for name, raw := range items {
				ref := "#/components/" + section + "/" + pointerEscape.Replace(name)
				all[ref] = append(all[ref], raw...)
				if other, ok := pair[1][section][name]; !ok || !bytes.Equal(raw, other) && !sameButExamples(raw, other) {
					changed[ref] = true
				}
			}
		}
	}
	for grown := true; grown; {
		grown = false
		for ref, raw := range all {
			if !changed[ref] && refersTo(raw, changed) {
				changed[ref], grown = true, true
			}
		}
	}
	return changed, nil
}

// sameButExamples reports whether two components' JSON differ at most in
// their examples (the "example" and "examples" keywords of media types,
// parameters, headers and schemas): oasdiff diffs examples, but none of
// its checks reports a change of one, so an operation that refers to
// such a component only is left out as one alike (a build documents the
// 400 answer with an example call of the collection's first tool, which a
// drift step may rename). A property named "example" is a field, not an
// example, and counts.
func sameButExamples(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(withoutExamples(va, false), withoutExamples(vb, false))
}

// withoutExamples returns v with the example keywords left out of its
// objects; named is set for an object whose keys are names (a schema's
// properties), not keywords.
func withoutExamples(v any, named bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if !named && (k == "example" || k == "examples") {
				continue
			}
			out[k] = withoutExamples(x, !named && namedKeys[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutExamples(x, false)
		}
		return out
	}
	return v
}

// namedKeys are the keywords whose object's keys are names chosen by the
// document (properties, media types, status codes), whatever they spell.
var namedKeys = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true, "content": true, "headers": true, "links": true, "callbacks": true, "encoding": true, "responses": true, "schemas": true, "parameters": true, "requestBodies": true, "securitySchemes": true, "pathItems": true}

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

// Markdown renders the report.
func (r *BreakingReport) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Breaking changes %s → %s (oasdiff)\n\n", r.From, r.To)
	fmt.Fprintf(&b, "%d changes: %d breaking (error), %d warnings, %d informational.\n\n", len(r.Changes), r.Errors, r.Warns, r.Infos)
	if len(r.Changes) == 0 {
		return b.Bytes()
	}
	b.WriteString("| level | rule | operation | change |\n| --- | --- | --- | --- |\n")
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "| %s | `%s` | %s %s | %s |\n", c.Level, c.ID, c.Operation, c.Path, mdCell(c.Text))
	}
	return b.Bytes()
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
