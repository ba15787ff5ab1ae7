package drift

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/load"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/openapi"
)

// genRESTCollection generates a REST API whose tools share paths (GET
// and DELETE of one item), carry path, query and body parameters of
// every type, enums, defaults and nested objects, in groups with
// descriptions (the document's tags); with sessions, the document also
// has the session protocol's components.
func genRESTCollection(r *rand.Rand, n int, sessions bool) *toolenv.Collection {
	c := &toolenv.Collection{Name: "gen", Version: "v1", Description: "generated", Policy: toolenv.Policy{Sessions: sessions}}
	types := []string{"string", "integer", "number", "boolean"}
	for i := range n {
		res := fmt.Sprintf("res%d", i/2)
		method, path := "GET", fmt.Sprintf("/v1/%s/{id}/get-details", res)
		name := fmt.Sprintf("get_%s", res)
		if i%2 == 1 {
			method, path, name = pick(r, "DELETE", "POST", "PUT"), fmt.Sprintf("/v1/%s/{id}/get-details", res), fmt.Sprintf("change_%s", res)
		}
		in := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		in.SetProp("id", &toolenv.Schema{Type: "string", Description: "the item's id"})
		in.Required = []string{"id"}
		for k := range 1 + r.IntN(5) {
			p := &toolenv.Schema{Type: pick(r, types...), Description: fmt.Sprintf("parameter %d of %s", k, name)}
			switch r.IntN(4) {
			case 0:
				p = &toolenv.Schema{Type: "string", Enum: []any{"low", "high", "Medium"}}
			case 1:
				p.Default = map[string]any{"string": "x", "integer": 3, "number": 1.5, "boolean": true}[p.Type]
			case 2:
				p = &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
				p.SetProp("inner", &toolenv.Schema{Type: "integer"})
			}
			pn := fmt.Sprintf("p%d_%s", k, pick(r, "limit", "city", "date", "mode"))
			in.SetProp(pn, p)
			if r.IntN(3) == 0 {
				in.Required = append(in.Required, pn)
			}
		}
		out := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		out.SetProp("value", &toolenv.Schema{Type: pick(r, types...)})
		if i%3 == 0 {
			out.SetProp("example", &toolenv.Schema{Type: "string", Description: "an example of the item"})
		}
		bindIn := map[string]string{"id": "path"}
		c.Tools = append(c.Tools, &toolenv.Tool{
			Name: name, Collection: c.Name, ID: toolenv.ToolID(c.Name, name), Description: "Does " + name + ".",
			Group: fmt.Sprintf("group%d", i%3), GroupDescription: fmt.Sprintf("The tools of group %d.", i%3),
			Input: in, Output: out, Binding: &toolenv.Binding{Method: method, Path: path, In: bindIn},
			Examples: []toolenv.Example{{Args: map[string]any{"id": "a1"}}},
		})
	}
	return c
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// renamePathVars returns a copy of c in which about a third of the tools
// with an "id" path parameter call it "item_id" (the route's variable and
// the argument), another third "key", and, with an output field
// "example", some outputs change that field's type: oasdiff pairs
// "/a/{id}" with "/a/{key}" (a variable renamed, which it reports), and a
// property named "example" is a field, not an example.
func renamePathVars(r *rand.Rand, c *toolenv.Collection) *toolenv.Collection {
	out := *c
	out.Tools = make([]*toolenv.Tool, len(c.Tools))
	for i, t := range c.Tools {
		t = t.Clone()
		out.Tools[i] = t
		if t.Output != nil && t.Output.Prop("example") != nil && r.IntN(2) == 0 {
			t.Output.SetProp("example", &toolenv.Schema{Type: "integer"})
		}
		if t.Binding == nil || t.Binding.In["id"] != "path" || t.Input.Prop("id") == nil {
			continue
		}
		name := pick(r, "", "item_id", "key")
		if name == "" {
			continue
		}
		p := t.Input.Prop("id")
		t.Input.DeleteProp("id")
		t.Input.SetProp(name, p)
		t.Input.Required = append(t.Input.Required, name)
		delete(t.Binding.In, "id")
		t.Binding.In[name] = "path"
		t.Binding.Path = strings.ReplaceAll(t.Binding.Path, "{id}", "{"+name+"}")
	}
	return &out
}

// TestBreakingPrunedEqualsWhole: leaving out of both documents the
// operations they hold alike, and diffing the paths in batches of any
// size, changes nothing in oasdiff's report, on drifts of every size (a
// few tools changed, most of them) of the demo and of generated REST APIs
// with shared paths, path variables renamed between versions, tags,
// session components and an output field named "example", over two
// steps; and the pruning does leave operations out.
func TestBreakingPrunedEqualsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	dm, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	bases := map[string]*toolenv.Collection{"demo": dm, "rest": genRESTCollection(r, 24, false), "rest-sessions": genRESTCollection(r, 16, true)}
	pruned, withChanges, renamedVars := 0, 0, 0
	for name, base := range bases {
		for seed := uint64(1); seed <= 2; seed++ {
			for _, rate := range []float64{0.05, 0.3, 1} {
				rates := map[string]float64{}
				for _, op := range Operators() {
					rates[op.Name] = rate
				}
				l := NewLineage(base)
				for step := range 2 {
					d, err := Drift(l, Options{Seed: seed*10 + uint64(step), Rates: rates})
					if err != nil {
						t.Fatalf("%s seed %d rate %v step %d: %v", name, seed, rate, step, err)
					}
					for _, pair := range []struct {
						what     string
						from, to *toolenv.Collection
					}{
						{"drift", d.From, d.Lineage.Current},
						{"drift and path variables renamed", d.From, renamePathVars(r, d.Lineage.Current)},
					} {
						whole, err := breaking(pair.from, pair.to, 0)
						if err != nil {
							t.Fatal(err)
						}
						// breaking(from, to, batch) is loadDocuments then
						// diffDocuments: the pruned documents are loaded once
						// (loading is most of its work) and diffed in batches
						// of each size.
						s1, s2, err := loadDocuments(pair.from, pair.to, true)
						if err != nil {
							t.Fatal(err)
						}
						for _, batch := range []int{1, 3, breakingBatch} {
							got, err := diffDocuments(pair.from, pair.to, s1, s2, batch)
							if err != nil {
								t.Fatal(err)
							}
							if !reflect.DeepEqual(got, whole) {
								t.Fatalf("%s seed %d rate %v step %d, %s, batches of %d: pruned report differs:\n got %s\nwant %s", name, seed, rate, step, pair.what, batch, mustJSON(got), mustJSON(whole))
							}
						}
						if len(whole.Changes) > 0 {
							withChanges++
						}
						for _, c := range whole.Changes {
							if strings.Contains(c.Path, "{item_id}") || strings.Contains(c.Path, "{key}") {
								renamedVars++
								break
							}
						}
						d1, d2 := openapi.Document(pair.from, ""), openapi.Document(pair.to, "")
						before := len(d1["paths"].(map[string]any))
						if err := pruneCommon(d1, d2); err != nil {
							t.Fatal(err)
						}
						if len(d1["paths"].(map[string]any)) < before {
							pruned++
						}
					}
					l = d.Lineage
				}
			}
		}
	}
	t.Logf("%d documents pruned, %d reports with changes, %d on paths whose variables were renamed", pruned, withChanges, renamedVars)
	if pruned < 10 || withChanges < 10 || renamedVars < 5 {
		t.Errorf("the drifts tried pruned %d documents, %d had changes and %d were on paths whose variables were renamed: the comparison proves little", pruned, withChanges, renamedVars)
	}
}

// TestSameButExamples: components that differ in their example keywords
// only are alike; a difference anywhere else, or in a property named
// "example", is not.
func TestSameButExamples(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"content":{"application/json":{"example":{"error":"a"},"schema":{"$ref":"#/components/schemas/Problem"}}},"description":"d"}`,
			`{"content":{"application/json":{"example":{"error":"b"},"schema":{"$ref":"#/components/schemas/Problem"}}},"description":"d"}`, true},
		{`{"type":"object","properties":{"x":{"type":"string","examples":["1"]}}}`, `{"type":"object","properties":{"x":{"type":"string","examples":["2"]}}}`, true},
		{`{"type":"object","properties":{"x":{"type":"string"}}}`, `{"type":"object","properties":{"x":{"type":"string","example":"2"}}}`, true},
		{`{"content":{"application/json":{"example":1}},"description":"d"}`, `{"content":{"application/json":{"example":1}},"description":"e"}`, false},
		{`{"type":"object","properties":{"example":{"type":"string"}}}`, `{"type":"object","properties":{"example":{"type":"integer"}}}`, false},
		{`{"type":"object","properties":{"example":{"type":"string"}}}`, `{"type":"object","properties":{}}`, false},
		{`{"content":{"example":{"schema":{"type":"string"}}}}`, `{"content":{"example":{"schema":{"type":"integer"}}}}`, false},
		{`{"type":"string"}`, `not json`, false},
	} {
		if got := sameButExamples([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("sameButExamples(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestSpecInfoLoadsAsTheLoader: specInfo, which decodes a document's
// operations one by one, gives what kin-openapi's loader gives the whole
// document (as oasdiff loads it): the same document, written back byte
// for byte, and the same oasdiff report between two versions (so the
// references resolve alike), on the demo and generated REST APIs
// (sessions, tags, shared paths, path variables renamed) drifted at every
// rate, whole and pruned.
func TestSpecInfoLoadsAsTheLoader(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	dm, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	viaLoader := func(c *toolenv.Collection, doc map[string]any) *load.SpecInfo {
		t.Helper()
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		si, err := load.NewSpecInfoFromData(openapi3.NewLoader(), raw, "v"+strings.TrimPrefix(c.Version, "v")+"/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		return si
	}
	compared := 0
	for name, base := range map[string]*toolenv.Collection{"demo": dm, "rest": genRESTCollection(r, 12, false), "rest-sessions": genRESTCollection(r, 10, true)} {
		for _, rate := range []float64{0.3, 1} {
			rates := map[string]float64{}
			for _, op := range Operators() {
				rates[op.Name] = rate
			}
			d, err := Drift(NewLineage(base), Options{Seed: 5, Rates: rates})
			if err != nil {
				t.Fatal(err)
			}
			to := renamePathVars(r, d.Lineage.Current)
			for _, prune := range []bool{false, true} {
				d1, d2 := openapi.Document(d.From, ""), openapi.Document(to, "")
				if prune {
					if err := pruneCommon(d1, d2); err != nil {
						t.Fatal(err)
					}
				}
				var got, want [2]*load.SpecInfo
				for i, side := range []struct {
					c   *toolenv.Collection
					doc map[string]any
				}{{d.From, d1}, {to, d2}} {
					want[i] = viaLoader(side.c, side.doc)
					if got[i], err = specInfo(side.c, side.doc, "v"+strings.TrimPrefix(side.c.Version, "v")); err != nil {
						t.Fatal(err)
					}
					if got[i].Url != want[i].Url || got[i].Version != want[i].Version {
						t.Errorf("%s rate %v prune %v: url %q version %q, the loader's %q %q", name, rate, prune, got[i].Url, got[i].Version, want[i].Url, want[i].Version)
					}
					if g, w := mustJSON(got[i].Spec), mustJSON(want[i].Spec); g != w {
						t.Fatalf("%s rate %v prune %v, %s: specInfo's document differs from the loader's:\n got %.3000s\nwant %.3000s", name, rate, prune, side.c.Version, g, w)
					}
				}
				gr, err := diffDocuments(d.From, to, got[0], got[1], 0)
				if err != nil {
					t.Fatal(err)
				}
				wr, err := diffDocuments(d.From, to, want[0], want[1], 0)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gr, wr) {
					t.Fatalf("%s rate %v prune %v: the report differs from the loader's:\n got %s\nwant %s", name, rate, prune, mustJSON(gr), mustJSON(wr))
				}
				if len(wr.Changes) > 0 {
					compared++
				}
			}
		}
	}
	if compared < 6 {
		t.Errorf("only %d of the comparisons had changes to report: the comparison proves little", compared)
	}
}
