package openapi

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	toolenv "github.com/toolenv/toolenv"
)

// LoadOptions configure Load and Read.
type LoadOptions struct {
	// Name is the collection's name. Default: the file's base name, or
	// the document's info.title when the file name says nothing
	// ("openapi.yaml", "spec.json"), made safe for URLs.
	Name string
}

// Load reads the OpenAPI 3.0 or 3.1 document at path (JSON or YAML) into
// a collection. $refs are resolved, to other local files too (relative to
// the document); remote refs are refused. A Swagger 2.0 document is
// converted to OpenAPI 3 first (see fromSwagger2 for what is refused and
// how), in its own key order.
//
// The collection has Kind "openapi", the "virtual" backend (answers are
// simulated unless an upstream is configured: each tool's Binding.BaseURL
// is the document's server), caching on, and strict validation when every
// parameter and request body has a typed schema (lenient otherwise). Each
// operation becomes one tool:
//
//   - Name: the operationId made safe ([A-Za-z0-9_-], at most 64 bytes,
//     unique), else method and path ("get_pets_petId");
//   - Title: the summary; Description: the description, else the summary;
//     Group: the first tag (GroupDescription: the tag's description);
//   - Input: one object merging the path, query, header and cookie
//     parameters and the JSON request body's properties, with
//     Binding.In saying where each goes. A body that is not an object
//     (an array, a string, a file), or whose properties clash with a
//     parameter, is the single argument "body" (Meta["body_param"]).
//     Path parameters are required; body properties are required when
//     the body is;
//   - Binding: method, path template, and BaseURL from the first server
//     (operation, path or document level) with its variables' defaults;
//   - Output and OutputExample: the JSON schema and example of the 200
//     (else first 2XX) response;
//   - Examples: from parameter and request-body examples (named body
//     examples pair with response examples of the same name);
//   - Deprecated: set for deprecated operations (x-successor names the
//     successor, as Document writes it).
//
// Schemas convert faithfully: types (3.1 type arrays, 3.0 nullable),
// enum, const, format, pattern, bounds (3.0 boolean exclusive bounds
// become 2020-12 numbers), items, nested objects in source order,
// required, additionalProperties, allOf/anyOf/oneOf/not and x-
// extensions. readOnly properties are left out of inputs and writeOnly
// ones out of outputs. $refs are inlined; a schema that contains itself
// is cut at its second appearance.
func Load(ctx context.Context, path string, opts LoadOptions) (*toolenv.Collection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	var doc *openapi3.T
	var order *sourceOrder
	if isSwagger2(data) {
		doc, order, err = readSwagger2(ctx, data)
		if err != nil {
			return nil, fmt.Errorf("openapi: %s: %w", path, err)
		}
	} else {
		loader := newLoader(ctx, true)
		doc, err = safeLoad(func() (*openapi3.T, error) {
			return loader.LoadFromDataWithPath(data, &url.URL{Path: filepath.ToSlash(abs)})
		})
		if err != nil {
			return nil, loadError(path, data, filepath.Dir(abs), err)
		}
		order = newSourceOrder(data, filepath.Dir(abs), os.ReadFile)
	}
	c, err := fromDocument(ctx, doc, order, path, opts)
	if err == nil {
		err = toolenv.CheckSchemas(c.Tools)
	}
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", path, err)
	}
	return c, nil
}

// Read reads an OpenAPI document from data, like Load; refs to other
// files are refused (there is no folder to resolve them in).
func Read(ctx context.Context, data []byte, opts LoadOptions) (*toolenv.Collection, error) {
	if isSwagger2(data) {
		doc, order, err := readSwagger2(ctx, data)
		if err != nil {
			return nil, fmt.Errorf("openapi: %w", err)
		}
		c, err := fromDocument(ctx, doc, order, "", opts)
		if err == nil {
			err = toolenv.CheckSchemas(c.Tools)
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	doc, err := safeLoad(func() (*openapi3.T, error) { return newLoader(ctx, false).LoadFromData(data) })
	if err != nil {
		return nil, loadError("the document", data, "", err)
	}
	c, err := fromDocument(ctx, doc, newSourceOrder(data, "", nil), "", opts)
	if err == nil {
		err = toolenv.CheckSchemas(c.Tools)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// readSwagger2 converts a Swagger 2.0 document (fromSwagger2) and loads
// the result, with the key order of the Swagger document.
func readSwagger2(ctx context.Context, data []byte) (*openapi3.T, *sourceOrder, error) {
	conv, err := fromSwagger2(data)
	if err != nil {
		return nil, nil, err
	}
	doc, err := safeLoad(func() (*openapi3.T, error) { return newLoader(ctx, false).LoadFromData(conv.json) })
	if err != nil {
		return nil, nil, loadError("the converted Swagger 2.0 document", conv.json, "", err)
	}
	order := &sourceOrder{trees: map[string]*keyTree{"": conv.order}}
	return doc, order, nil
}

// safeLoad runs kin-openapi's loader, which is not hardened against
// every hostile document: a panic there is a bad document here, not a
// crash.
func safeLoad(load func() (*openapi3.T, error)) (doc *openapi3.T, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("the OpenAPI loader failed on this document: %v", p)
		}
	}()
	return load()
}

func newLoader(ctx context.Context, files bool) *openapi3.Loader {
	l := openapi3.NewLoader()
	l.Context = ctx
	l.IsExternalRefsAllowed = files
	l.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.Scheme != "" && u.Scheme != "file" {
			return nil, fmt.Errorf("remote $ref %s: toolenv reads local files only; save it beside the document and refer to it by a relative path", u)
		}
		if !files {
			return nil, fmt.Errorf("$ref to the file %s: a document read from bytes can only refer to itself", u.Path)
		}
		return os.ReadFile(filepath.FromSlash(u.Path))
	}
	return l
}

// loadError explains why a document did not load: it is empty, not JSON
// or YAML, Swagger 2, or a $ref does not resolve (then it names the
// $ref, where it is written and what exists there instead).
func loadError(name string, data []byte, dir string, err error) error {
	const refHint = "every $ref must point to something that exists, e.g. #/components/schemas/Pet"
	msg := err.Error()
	switch {
	case len(strings.TrimSpace(string(data))) == 0:
		return toolenv.Errorw(toolenv.StatusBadRequest, "pass an OpenAPI 3 document (JSON or YAML)", "openapi: %s is empty", name)
	case isSwagger2(data):
		return toolenv.Errorw(toolenv.StatusBadRequest, swagger2Hint, "openapi: %s is a Swagger 2.0 document", name)
	case strings.Contains(msg, "failed to unmarshal data"):
		return &toolenv.Error{Status: toolenv.StatusBadRequest, Message: "openapi: " + name + " is neither JSON nor YAML", Hint: "fix the syntax error the YAML parser reports", Err: err}
	}
	if where := brokenRef(data, dir); where != "" {
		return toolenv.Errorw(toolenv.StatusBadRequest, refHint, "openapi: %s: %s", name, where)
	}
	hint := "check the document against the OpenAPI 3.0/3.1 specification"
	switch {
	case strings.Contains(msg, "remote $ref"), strings.Contains(msg, "can only refer to itself"):
		hint = "" // the message says what to do
	case strings.Contains(msg, "ref") || strings.Contains(msg, "resolv"):
		hint = refHint
	}
	return &toolenv.Error{Status: toolenv.StatusBadRequest, Message: "openapi: " + name + " does not load", Hint: hint, Err: err}
}

const swagger2Hint = "toolenv reads OpenAPI 3.0 and 3.1: convert it first (for example with the swagger2openapi command or editor.swagger.io)"

// isSwagger2 reports whether data is a Swagger 2.0 document.
func isSwagger2(data []byte) bool {
	t := parseKeyTree(data)
	return t != nil && slices.Contains(t.keys, "swagger")
}

// fromDocument converts a loaded document.
func fromDocument(ctx context.Context, doc *openapi3.T, order *sourceOrder, path string, opts LoadOptions) (*toolenv.Collection, error) {
	if err := checkVersion(doc, order); err != nil {
		return nil, err
	}
	ops, err := operations(doc, order)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, toolenv.Errorw(toolenv.StatusBadRequest, "a collection needs at least one operation under paths", "the document describes no operations")
	}
	b := &builder{doc: doc, order: order, schemas: newSchemaConverter(order), names: map[string]string{}}
	tools := make([]*toolenv.Tool, 0, len(ops))
	exact := true
	var loose []string
	for _, op := range ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.schemas.deep = false
		t, why := b.tool(op)
		if b.schemas.deep {
			return nil, toolenv.Errorw(toolenv.StatusBadRequest, "flatten it, or describe the deep part as a JSON string",
				"operation %s (tool %q): a schema nests more than %d levels deep", op, t.Name, maxSchemaDepth)
		}
		tools = append(tools, t)
		if why != "" {
			exact = false
			if len(loose) < 3 {
				loose = append(loose, why)
			}
		}
	}
	c := toolenv.NewCollection(collectionName(doc, path, opts.Name), "openapi", tools)
	c.Backend = toolenv.BackendSpec{Type: "virtual"}
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationStrict, Cache: true, Feedback: toolenv.FeedbackHelpful}
	c.Meta = map[string]string{"openapi": doc.OpenAPI}
	if b.schemas.capped {
		c.Meta["schemas_capped"] = fmt.Sprintf("some $refs were left unexpanded: inlining them would make a schema of more than %d nodes", maxSchemaNodes)
	}
	if !exact {
		c.Policy.Validation = toolenv.ValidationLenient
		c.Meta["lenient_because"] = strings.Join(loose, "; ")
	}
	if doc.Info != nil {
		c.Version = doc.Info.Version
		c.Description = doc.Info.Description
		if c.Description == "" {
			c.Description = doc.Info.Title
		}
		c.Meta["title"] = doc.Info.Title
	}
	if path != "" {
		c.Meta["source"] = path
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func checkVersion(doc *openapi3.T, order *sourceOrder) error {
	v := strings.TrimSpace(doc.OpenAPI)
	switch {
	case v == "" && slices.Contains(order.keys(place{}), "swagger"):
		return toolenv.Errorw(toolenv.StatusBadRequest, swagger2Hint, "a Swagger 2.0 document, not OpenAPI 3")
	case v == "":
		return toolenv.Errorw(toolenv.StatusBadRequest, "an OpenAPI document starts with `openapi: 3.0.3` or `openapi: 3.1.0`; Swagger 2.0 documents must be converted first",
			"not an OpenAPI document: it has no \"openapi\" version field")
	case !strings.HasPrefix(v, "3."):
		return toolenv.Errorw(toolenv.StatusBadRequest, "toolenv reads OpenAPI 3.0 and 3.1", "unsupported OpenAPI version %q", v)
	}
	return nil
}

// collectionName picks the collection's name: the option, the file's
// base name unless it is a generic one, else info.title.
func collectionName(doc *openapi3.T, path, name string) string {
	if name != "" {
		return safeName(name, "openapi")
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	switch strings.ToLower(base) {
	case "", ".", "openapi", "swagger", "spec", "api", "apis", "schema", "index", "main", "document", "doc":
		if doc.Info != nil && strings.TrimSpace(doc.Info.Title) != "" {
			return safeName(doc.Info.Title, "openapi")
		}
		if base == "" || base == "." {
			return "openapi"
		}
	}
	return safeName(base, "openapi")
}

// safeName lowercases s and keeps [a-z0-9_-], other runs becoming '_'.
func safeName(s, fallback string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_-")
	if len(out) > 64 {
		out = strings.Trim(out[:64], "_-")
	}
	if out == "" {
		return fallback
	}
	return out
}

// LoadNamed is Load of a path that may be "NAME=FILE", which names the
// collection NAME (a file whose own name holds "=" is read as it is).
func LoadNamed(ctx context.Context, path string) (*toolenv.Collection, error) {
	var opts LoadOptions
	if name, file, ok := strings.Cut(path, "="); ok && name != "" {
		if _, err := os.Stat(path); err != nil {
			opts.Name, path = name, file
		}
	}
	return Load(ctx, path, opts)
}
