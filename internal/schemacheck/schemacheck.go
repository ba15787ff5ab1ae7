// Package schemacheck checks JSON values against a tool's JSON Schema as
// MCP clients check a tool's structured results: JSON Schema 2020-12
// (github.com/santhosh-tekuri/jsonschema/v6), formats asserted as Ajv
// with ajv-formats asserts them (a format Ajv does not know passes) and
// patterns run as Ajv runs them (internal/ajvcompat). A value conforms
// here exactly when the MCP TypeScript SDK's client accepts it.
//
// The server checks answers with it before it sends them, and the offline
// synthesizer checks the answers it makes, so that the two agree on what
// conforms.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/ajvcompat"
)

// MaxProblems is how many problems Check reports at most (the last one
// then says "…").
const MaxProblems = 10

// Checker is a compiled schema. It is safe for concurrent use.
type Checker struct {
	raw json.RawMessage
	v   *jsonschema.Schema
}

// Compile compiles s. A $ref to anything outside s fails to compile, as
// it would in a client's validator.
func Compile(s *toolenv.Schema) (*Checker, error) {
	raw, err := s.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return CompileJSON(raw)
}

// CompileJSON compiles a schema given as JSON.
func CompileJSON(raw []byte) (*Checker, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, f := range ajvFormats() {
		c.RegisterFormat(f)
	}
	c.UseRegexpEngine(ajvPattern)
	c.UseLoader(noLoader{})
	const loc = "toolenv:schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	v, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &Checker{raw: raw, v: v}, nil
}

// Raw is the schema's JSON.
func (c *Checker) Raw() json.RawMessage { return c.raw }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s, which is not part of it", url)
}

// ajvFormats are the formats as Ajv (with ajv-formats) asserts them, and
// those it does not know (the santhosh-tekuri validator's own extras) as
// passing, as Ajv lets them pass.
func ajvFormats() []*jsonschema.Format {
	names := append(slices.Clone(ajvcompat.Formats), "period", "iri", "iri-reference", "semver", "idn-email", "idn-hostname")
	out := make([]*jsonschema.Format, len(names))
	for i, name := range names {
		out[i] = &jsonschema.Format{Name: name, Validate: func(v any) error {
			if !ajvcompat.Check(name, v) {
				return fmt.Errorf("not a valid %s", name)
			}
			return nil
		}}
	}
	return out
}

// ajvPattern compiles a pattern as Ajv runs it (see ajvcompat.Pattern).
func ajvPattern(p string) (jsonschema.Regexp, error) {
	re, err := ajvcompat.Pattern(p)
	if err != nil {
		return nil, err
	}
	return re, nil
}

// Check reports how the JSON text body breaks the schema ("at '/path':
// what is wrong", at most MaxProblems), or nil when it conforms.
func (c *Checker) Check(body []byte) []string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []string{"the answer is not JSON: " + err.Error()}
	}
	return c.problems(c.v.Validate(inst))
}

// Valid reports whether the JSON text body conforms.
func (c *Checker) Valid(body []byte) bool {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	return err == nil && c.v.Validate(inst) == nil
}

func (c *Checker) problems(err error) []string {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	var leaves func(e *jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(out) > MaxProblems {
			return
		}
		if len(e.Causes) == 0 {
			out = append(out, e.Error()) // "at '/path': what is wrong"
			return
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(ve)
	if len(out) > MaxProblems {
		out = append(out[:MaxProblems], "…")
	}
	return out
}
